// The JSON-taking calls for Swift hosts that hold bytes: the same calls over `[UInt8]` (a
// String's `Array(text.utf8)`, a file's contents), with the same typed errors. The C boundary and
// the bindings use the buffer forms.

/// Runs a typed-throwing body over an array's bytes, keeping its error type.
@inline(__always)
func withArrayBytes<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(IAPVFailure) -> T) throws(IAPVFailure) -> T {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(IAPVFailure) -> T in try body(raw) } }
    return try result.get()
}

extension Verifier {
    /// A verifier from its JSON config (docs/config.md).
    public convenience init(json: [UInt8]) throws(IAPVFailure) {
        let config = try withArrayBytes(json) { (raw) throws(IAPVFailure) in try VerifierConfig(json: raw) }
        try self.init(config: config)
    }

    /// An entry point's options from their JSON (docs/options.md), capped like the inputs.
    public func options<Options: EntryOptions>(json: [UInt8], as kind: Options.Type = Options.self) throws(IAPVFailure) -> Options {
        try withArrayBytes(json) { (raw) throws(IAPVFailure) in try options(json: raw, as: kind) }
    }
}

extension Signer {
    /// A signer from its JSON config (docs/server-api.md, "The signer").
    public convenience init(json: [UInt8]) throws(IAPVFailure) {
        let s = try withArrayBytes(json) { (raw) throws(IAPVFailure) in try Signer.settings(json: raw) }
        try self.init(privateKeyPEM: s.pem, keyID: s.keyID, issuerID: s.issuerID, bundleID: s.bundleID, testBaseURL: s.base,
                      testSandboxBaseURL: s.sandboxBase)
        localTestingBaseURL = s.localBase
    }

    /// The request for one App Store Server API call (docs/server-api.md, "The call").
    public func apiRequest(_ call: [UInt8], nowMs: Int64) throws(IAPVFailure) -> APIRequest {
        try withArrayBytes(call) { (raw) throws(IAPVFailure) in try apiRequest(raw, nowMs: nowMs) }
    }

    /// A signature an app asks for (docs/offer-signatures.md).
    public func sign(_ request: [UInt8], nowMs: Int64) throws(IAPVFailure) -> OfferSignature {
        try withArrayBytes(request) { (raw) throws(IAPVFailure) in try sign(raw, nowMs: nowMs) }
    }
}
