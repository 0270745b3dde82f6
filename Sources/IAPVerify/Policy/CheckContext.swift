// What every checker reads, and nothing more: the config, the trust anchors, the verified-chain
// cache and the engine settings. The verifier builds one; Receipt, VerifyReceipt, StoreKit2 and
// ServerAPI checkers take it, so no folder needs the verifier itself.

struct CheckContext: Sendable {
    let config: VerifierConfig
    let anchors: TrustAnchors
    /// nil unless `xcode.accept` is true.
    let xcodeAnchors: TrustAnchors?
    let cache: ChainCache

    var engine: EngineSettings { EngineSettings(catalog: config.products, grace: config.gracePeriod) }

    /// What every entry point checks before reading a byte: a usable `now`, then the size cap.
    /// The verifier calls it once per call (Verifier/Verifier.swift); checkers never do.
    func admit(_ count: Int, nowMs: Int64? = nil, what: String) throws(IAPVFailure) {
        if let nowMs { try Admission.clock(nowMs) }
        guard count <= config.maxInputBytes else {
            throw IAPVFailure(.tooLarge, "the \(what) is \(count) bytes; max_input_bytes is \(config.maxInputBytes)")
        }
    }

    /// The anchors for a chain: Xcode's when the payload says Xcode (and they are configured).
    func anchors(xcode: Bool) -> TrustAnchors { xcode ? (xcodeAnchors ?? anchors) : anchors }

    /// The revocation facts of a verified chain and, when they refuse it, the verdict and reason.
    /// A revoked leaf is refused whatever the policy; with `required`, so is a leaf without a
    /// good, current response.
    func revocation(of chain: VerifiedChain, responses: [[UInt8]], nowMs: Int64) -> (RevocationReport, (Verdict, String)?) {
        var report = RevocationReport()
        guard let target = chain.ocsp else {
            report.status = responses.isEmpty ? .unchecked : .unknown("the chain has no issuer to name the leaf by")
            report.reason = "a one-certificate chain has no OCSP identity"
            return (report, config.revocation == .required ? (.revocationUnknown, "revocation is required, but " + report.reason) : nil)
        }
        report.request = target.requestBase64
        report.responderURL = target.responderURL
        let (status, why) = OCSPCheck.evaluate(responses, target: target, anchors: anchors, nowMs: nowMs)
        report.status = status
        report.reason = why
        switch status {
        case .revoked:
            return (report, (.revoked, "the signing certificate is revoked: " + why))
        case .good:
            return (report, nil)
        case .unchecked, .unknown:
            guard config.revocation == .required else { return (report, nil) }
            let fetch = target.responderURL.map { "; POST revocation.request to \($0) and pass the answer in ocsp_responses" }
                ?? "; the leaf names no OCSP responder"
            return (report, (.revocationUnknown, "revocation is required and no usable OCSP response was passed"
                + (responses.isEmpty ? "" : " (\(why))") + fetch))
        }
    }
}

/// A checker: a value holding the context, with the context's parts by name.
protocol Checker {
    var context: CheckContext { get }
}

extension Checker {
    var config: VerifierConfig { context.config }
    var cache: ChainCache { context.cache }

    /// The engine on what the call trusted: `transactions` (given up: the engine orders it in
    /// place) and the renewal infos that came with them; the engine adds the host's after them.
    func entitlements(_ transactions: consuming [Transaction], ownRenewals: [RenewalInfo], host: EntitlementOptions, nowMs: Int64) -> EntitlementReport {
        context.engine.evaluate(consume transactions, ownRenewals: ownRenewals, host: host, nowMs: nowMs)
    }

    func revocation(of chain: VerifiedChain, responses: [[UInt8]], nowMs: Int64) -> (RevocationReport, (Verdict, String)?) {
        context.revocation(of: chain, responses: responses, nowMs: nowMs)
    }
}
