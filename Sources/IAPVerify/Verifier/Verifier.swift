// The verifier: an immutable object built once from a config and shared by any number of
// threads. It owns the trust anchors and the verified-chain cache; every call is independent.

public final class Verifier: Sendable {
    public let config: VerifierConfig
    /// What the checkers read: the config, the anchors, the chain cache.
    let context: CheckContext

    /// Distinct certificate blocks remembered at once; real traffic has a handful.
    public static let chainCacheCapacity = 64

    /// Largest number of attempts before the interpreters say `give_up` (Policy/Retry.swift).
    public static var maxAttempts: Int64 { RetryAfter.maxAttempts }

    public init(config: VerifierConfig) throws(IAPVFailure) {
        // The built-in roots are decoded and pin-checked once per process, and a config's own
        // roots once per distinct config: every verifier with the same roots shares one store.
        let anchors: TrustAnchors
        if config.trustRootsPEM.isEmpty {
            guard config.includeAppleRoots else {
                throw .config("config.trust leaves no root: set include_apple_roots to true or add roots_pem")
            }
            anchors = try AppleRoots.anchors.get()
        } else {
            anchors = try ConfigAnchors.anchors(pems: config.trustRootsPEM, withAppleRoots: config.includeAppleRoots, requireCA: true,
                                                pemWhat: "config.trust.roots_pem", what: "config.trust roots")
        }
        var xcodeAnchors: TrustAnchors?
        if config.xcodeAccept {
            guard !config.xcodeRootsPEM.isEmpty else {
                throw .config("config.xcode.accept is true but config.xcode.roots_pem is empty; add Xcode's StoreKit certificate")
            }
            xcodeAnchors = try ConfigAnchors.anchors(pems: config.xcodeRootsPEM, withAppleRoots: false, requireCA: false,
                                                     pemWhat: "config.xcode.roots_pem", what: "config.xcode.roots_pem")
        } else {
            // Not used, but a config that carries them must still carry certificates.
            _ = try TrustAnchors.certificates(fromPEM: config.xcodeRootsPEM, what: "config.xcode.roots_pem")
        }
        self.config = config
        context = CheckContext(config: config, anchors: anchors, xcodeAnchors: xcodeAnchors,
                               cache: ChainCache(capacity: Self.chainCacheCapacity))
    }

    public convenience init(json: UnsafeRawBufferPointer) throws(IAPVFailure) {
        try self.init(config: VerifierConfig(json: json))
    }

    /// Number of chains currently cached (for tests and diagnostics).
    package var cachedChainCount: Int { context.cache.count }   // tests and the fuzz harness only
}

// The entry points: each admits the call (once, here: the clock, then the size cap), hands it to
// its domain's checker, and returns the report.
extension Verifier {
    /// Per-call options as JSON for one entry point, capped by `max_input_bytes` like the input
    /// they come with: the options carry host-supplied lists (delivered ids, orders) that a caller
    /// may not size.
    public func options<Options: EntryOptions>(json: UnsafeRawBufferPointer, as _: Options.Type = Options.self) throws(IAPVFailure) -> Options {
        try context.admit(json.count, what: "options")
        return Options(try OptionValues(json: json, for: Options.entryPoint))
    }

    /// Verifies a receipt (DER or base64) at `nowMs`.
    /// A non-valid verdict is a normal return; a thrown `IAPVFailure` means the call could not answer.
    public func verifyReceipt(_ input: UnsafeRawBufferPointer, options: ReceiptOptions = ReceiptOptions(),
                              nowMs: Int64) throws(IAPVFailure) -> ReceiptReport {
        try context.admit(input.count, nowMs: nowMs, what: "receipt")
        return try ReceiptChecker(context: context).verify(input, options: options, nowMs: nowMs, path: .cached)
    }

    /// Either crypto path; `.reference` exists only to check the fast path against OpenSSL.
    @_spi(Testing)
    public func verifyReceipt(_ input: UnsafeRawBufferPointer, options: ReceiptOptions = ReceiptOptions(),
                              nowMs: Int64, path: CryptoPath) throws(IAPVFailure) -> ReceiptReport {
        try context.admit(input.count, nowMs: nowMs, what: "receipt")
        return try ReceiptChecker(context: context).verify(input, options: options, nowMs: nowMs, path: path)
    }

    /// Interprets a /verifyReceipt answer the host received.
    public func interpretResponse(_ body: UnsafeRawBufferPointer, options: ResponseOptions = ResponseOptions(),
                                  nowMs: Int64) throws(IAPVFailure) -> ResponseReport {
        try context.admit(body.count, nowMs: nowMs, what: "response")
        return try ResponseChecker(context: context).interpret(body, options: options, nowMs: nowMs)
    }

    /// The entitlements of transactions the host keeps itself (`{"transactions": [...]}`).
    public func computeEntitlements(_ input: UnsafeRawBufferPointer, options: EntitlementOptions = EntitlementOptions(),
                                    nowMs: Int64) throws(IAPVFailure) -> EntitlementInputReport {
        try context.admit(input.count, nowMs: nowMs, what: "input")
        return EntitlementInputChecker(engine: context.engine).compute(input, host: options, nowMs: nowMs)
    }

    /// Verifies a compact JWS (transaction, renewal info, notification, app transaction).
    public func verifyJWS(_ input: UnsafeRawBufferPointer, options: JWSOptions = JWSOptions(),
                          nowMs: Int64) throws(IAPVFailure) -> JWSReport {
        try context.admit(input.count, nowMs: nowMs, what: "JWS")
        return try JWSChecker(context: context).verify(Self.trimmingWhitespace(input), options: options, nowMs: nowMs)
    }

    /// The one whitespace rule for a compact JWS, whatever the binding: ASCII whitespace (space,
    /// tab, CR, LF, VT, FF) around the token is not part of it (a token read from a file or a form
    /// ends with a newline); whitespace inside it stays, and makes it malformed.
    static func trimmingWhitespace(_ input: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
        var start = 0, end = input.count
        while start < end, isSpace(input[start]) { start += 1 }
        while end > start, isSpace(input[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: input[start..<end])
    }

    /// Interprets an App Store Server API answer the host received.
    public func interpretAPIResponse(_ body: UnsafeRawBufferPointer, options: APIResponseOptions,
                                     nowMs: Int64) throws(IAPVFailure) -> APIResponseReport {
        try context.admit(body.count, nowMs: nowMs, what: "API answer")
        return try APIResponseChecker(context: context).interpret(body, options: options, nowMs: nowMs)
    }

    /// Runs an entry point on any byte collection (a Swift host's `[UInt8]`, `ArraySlice`, ...).
    static func withBytes<R>(_ bytes: some Collection<UInt8>,
                             _ body: (UnsafeRawBufferPointer) throws(IAPVFailure) -> R) throws(IAPVFailure) -> R {
        let copy = Array(bytes)
        let result = copy.withUnsafeBytes { raw in Result { () throws(IAPVFailure) -> R in try body(raw) } }
        return try result.get()
    }

    public func verifyReceipt(_ bytes: some Collection<UInt8>, options: ReceiptOptions = ReceiptOptions(),
                              nowMs: Int64) throws(IAPVFailure) -> ReceiptReport {
        try Self.withBytes(bytes) { raw throws(IAPVFailure) in try verifyReceipt(raw, options: options, nowMs: nowMs) }
    }

    public func interpretResponse(_ body: some Collection<UInt8>, options: ResponseOptions = ResponseOptions(),
                                  nowMs: Int64) throws(IAPVFailure) -> ResponseReport {
        try Self.withBytes(body) { raw throws(IAPVFailure) in try interpretResponse(raw, options: options, nowMs: nowMs) }
    }

    public func computeEntitlements(_ input: some Collection<UInt8>, options: EntitlementOptions = EntitlementOptions(),
                                    nowMs: Int64) throws(IAPVFailure) -> EntitlementInputReport {
        try Self.withBytes(input) { raw throws(IAPVFailure) in try computeEntitlements(raw, options: options, nowMs: nowMs) }
    }

    public func verifyJWS(_ token: some Collection<UInt8>, options: JWSOptions = JWSOptions(),
                          nowMs: Int64) throws(IAPVFailure) -> JWSReport {
        try Self.withBytes(token) { raw throws(IAPVFailure) in try verifyJWS(raw, options: options, nowMs: nowMs) }
    }

    public func interpretAPIResponse(_ body: some Collection<UInt8>, options: APIResponseOptions,
                                     nowMs: Int64) throws(IAPVFailure) -> APIResponseReport {
        try Self.withBytes(body) { raw throws(IAPVFailure) in try interpretAPIResponse(raw, options: options, nowMs: nowMs) }
    }
}
