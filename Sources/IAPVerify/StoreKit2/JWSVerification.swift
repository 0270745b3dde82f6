// StoreKit 2 signed data: compact JWS signed with ES256 by Apple, chained through the
// x5c header to Apple Root CA - G3 (from config, never from the token) and checked at the
// payload's signedDate. Transactions, renewal infos, app transactions and App Store Server
// Notifications V2 (whose nested signed data is verified too) share this path.

import COpenSSL

/// Verifies compact JWS with the verifier's rules.
struct JWSChecker: Checker {
    let context: CheckContext

    /// Verifies a compact JWS at `nowMs` and decodes it.
    func verify(_ input: UnsafeRawBufferPointer, options: JWSOptions, nowMs: Int64) throws(IAPVFailure) -> JWSReport {
        var report = verifySigned(input, nowMs: nowMs, expect: options.kind, depth: 0, ocsp: options.ocspResponses)
        guard report.isValid else { return report }
        if var realtime = report.realtime {
            if options.seenRequestIdentifiers.contains(realtime.requestIdentifier) {
                realtime.action = .ignoreDuplicate
            } else if nowMs - realtime.signedDateMs > options.maxAgeMs || realtime.signedDateMs - nowMs > RealtimeRequest.futureToleranceMs {
                realtime.action = .ignoreStale
            }
            report.realtime = realtime
        }
        if let n = report.notification {
            var applied = n
            if let uuid = n.uuid, options.seenNotificationUUIDs.contains(uuid) {
                applied.action = .ignoreDuplicate
            } else if let last = SignedDates.orderable(options.lastSignedDateMs, nowMs: nowMs),
                      let signed = SignedDates.orderable(n.signedDateMs, nowMs: nowMs), signed < last {
                // A date after now (a notification Apple dated in the future, kept by the host as
                // its last) orders nothing: a genuine later event is never made stale by it.
                applied.action = .ignoreStale
            } else if n.effect == .unknown {
                applied.action = .recordOnly
            } else if n.effect == .consumptionInfoRequested {
                applied.action = .sendConsumptionInfo
            }
            report.notification = applied
            // An unknown type or subtype changes nothing: its signed data is kept, not applied.
            let changes = n.effect != .unknown
            let txns = changes ? [n.transaction].compactMap { $0 } : []
            let renewals = changes ? [n.renewal].compactMap { $0 } : []
            report.entitlements = entitlements(txns, ownRenewals: renewals, host: options.host, nowMs: nowMs)
        } else {
            report.entitlements = entitlements([report.transaction].compactMap { $0 }, ownRenewals: [report.renewal].compactMap { $0 },
                                               host: options.host, nowMs: nowMs)
        }
        return report
    }

    /// One signed object. `expect` is the kind a nested token must have (when it has one).
    /// Only the facts are read before the token is trusted; its records are built after the
    /// decision. A refused token still shows what it decoded, and a payload whose records cannot
    /// be read is malformed whatever the decision: a record problem outranks every refusal.
    func verifySigned(_ input: UnsafeRawBufferPointer, nowMs: Int64, expect: JWSKind?, depth: Int, ocsp: [[UInt8]]) -> JWSReport {
        var report = JWSReport()
        let token: SignedToken
        switch SignedToken.read(input) {
        case .success(let t): token = t
        case .failure(let refusal):
            report.fail(.token, refusal.verdict, refusal.reason)
            return report
        }
        report.gate.mark(.token, .ok)
        report.payloadJSON = token.jws.payload
        var facts = JWSFacts()
        do {
            try facts.read(token.payload.root)
        } catch {
            facts.show(in: &report)
            report.kind = facts.kind
            report.fail(.facts, .malformed, error.message)
            return report
        }
        facts.show(in: &report)
        report.gate.mark(.facts, .ok)
        let decision = decide(token, facts, nowMs: nowMs, expect: expect, depth: depth, ocsp: ocsp)
        do {
            try JWSRecords.build(token.payload.root, facts, into: &report)
        } catch {
            report.fail(.records, .malformed, error.message)
            return report
        }
        report.gate.mark(.records, .ok)
        report.validatedAtMs = decision.validatedAtMs
        report.chain = decision.chain
        report.revocation = decision.revocation
        for (check, state) in decision.marks { report.gate.mark(check, state) }
        if let refusal = decision.refusal {
            report.fail(refusal.check, refusal.verdict, refusal.reason)
            return report
        }
        if report.kind == .notification, depth == 0 {
            guard verifyNested(token.payload.root, &report, nowMs: nowMs, ocsp: ocsp) else { return report }
            report.gate.mark(.nested, .ok)
        } else {
            report.gate.mark(.nested, .skipped)
        }
        let kind = facts.kind ?? .unknown
        let at = decision.validatedAtMs ?? nowMs
        report.gate.pass("a \(kind.described) signed by \(decision.xcode ? facts.environment?.rawValue ?? "Xcode" : "Apple"), checked at \(RFC3339.format(at))")
        return report
    }

    /// The decision on the facts alone, in order: the kind asked for, the signer (chain,
    /// signature, revocation), then the environment and the app rule.
    private func decide(_ token: SignedToken, _ facts: JWSFacts, nowMs: Int64, expect: JWSKind?, depth: Int, ocsp: [[UInt8]]) -> JWSDecision {
        var decision = JWSDecision()
        if let expect, let kind = facts.kind, kind != expect {
            decision.refusal = JWSRefusal(.malformed, "the \(depth > 0 ? "nested " : "")token is a \(kind.described), not a \(expect.described)",
                                          at: .kind)
            return decision
        }
        decision.marks.append((.kind, .ok))
        let policyFacts = facts.policyFacts(nowMs: nowMs)
        trustSigner(token, facts, policyFacts, nowMs: nowMs, ocsp: ocsp, into: &decision)
        guard decision.refusal == nil else { return decision }
        decision.marks.append((.signer, .ok))
        applyAppRules(policyFacts, kind: facts.kind ?? .unknown, expect: expect, into: &decision)
        return decision
    }

    /// The validation instant, the x5c chain to a configured root at that instant (cached by the
    /// exact x5c bytes), the ES256 signature by its leaf, and the leaf's revocation.
    private func trustSigner(_ token: SignedToken, _ facts: JWSFacts, _ policyFacts: PolicyFacts, nowMs: Int64, ocsp: [[UInt8]],
                             into decision: inout JWSDecision) {
        let at = policyFacts.validatedAtMs ?? nowMs
        let instant: ValidationInstant = facts.signedDateMs == nil && facts.creationDateMs == nil ? .now : .signedDate
        decision.validatedAtMs = at
        let xcode = facts.environment?.isLocal == true
        decision.xcode = xcode
        if xcode, !config.xcodeAccept {
            decision.refuse(.environmentRejected, "this JWS was signed by \(facts.environment?.rawValue ?? "Xcode") (a local certificate); set xcode.accept to accept it")
            return
        }
        let certDER = token.certificates
        if !xcode, certDER.count != 3 {
            decision.refuse(.notAppleSigner, "the x5c chain has \(certDER.count) certificates; App Store JWS carry exactly 3")
            return
        }
        var keyBytes: [UInt8] = []
        for der in certDER { keyBytes += der }
        let key = ChainKey(xcode ? .xcodeJWS : .jws, signer: [], certificates: keyBytes[...])
        let verified: VerifiedChain
        switch cache.verifiedChain(for: key, certificates: certDER.map { $0[...] }, atMs: at, instant: instant,
                                   anchors: context.anchors(xcode: xcode), applePolicy: !xcode,
                                   signer: { $0.isEmpty ? nil : 0 }) {
        case .success(let chain): verified = chain
        case .failure(let refusal):
            decision.refuse(refusal.verdict, refusal.reason)
            return
        }
        decision.chain = verified.summaries
        let signature = token.jws.signature
        guard ES256.verify(signature: signature, message: token.jws.signingInput, key: verified.leafKey) else {
            decision.refuse(.signatureInvalid, signature.count == 64
                ? "the ES256 signature does not verify"
                : "the ES256 signature must be 64 bytes of r‖s, got \(signature.count)")
            return
        }
        // Revocation, at the call's now: a revoked leaf never passes; `required` wants a good answer.
        let (revocation, refusal) = self.revocation(of: verified, responses: ocsp, nowMs: nowMs)
        decision.revocation = revocation
        if let (verdict, why) = refusal { decision.refuse(verdict, why) }
    }

    /// Environment and app, as for receipts: the app rules over the token's facts (the bundle id
    /// wherever the payload has one, kinds that always name one failing closed without it; then
    /// Apple's app id wherever it has one), for every kind, known or not. A payload that names no
    /// app of its own (a realtime request, an unknown shape) is valid only when one of the two
    /// matched, or when the caller asked for its kind by name.
    private func applyAppRules(_ facts: PolicyFacts, kind: JWSKind, expect: JWSKind?, into decision: inout JWSDecision) {
        var appChecked = false
        let failure = config.applyAppRules(facts) { rule, outcome in
            if rule != .environment, outcome == .ok { appChecked = true }
            if let state = outcome.checkState { decision.marks.append((JWSCheck(rule), state)) }
        }
        if let (rule, verdict, why) = failure {
            decision.refusal = JWSRefusal(verdict, why, at: JWSCheck(rule))
            return
        }
        if !appChecked, !kind.namesBundle, kind != .renewalInfo, expect != kind {
            decision.refusal = JWSRefusal(.malformed, kind == .unknown
                ? "a \(kind.described) is accepted only when its bundleId or appAppleId matches the config, and this one's could not be checked"
                : "a \(kind.described) names its app only by appAppleId: set app_apple_id in the config, or pass options.kind \"\(kind.rawValue)\" to accept it unchecked",
                at: .appNamed)
            return
        }
        decision.marks.append((.appNamed, .ok))
    }

    /// A notification's nested signed data, each verified like the outer token (after it, so an
    /// outer refusal is reported first). False when one is refused: the report says why.
    private func verifyNested(_ root: JSONValue, _ report: inout JWSReport, nowMs: Int64, ocsp: [[UInt8]]) -> Bool {
        guard var n = report.notification else { return true }
        func nested(_ text: String, _ kind: JWSKind, _ label: String) -> JWSReport? {
            let inner = Array(text.utf8).withUnsafeBytes { verifySigned($0, nowMs: nowMs, expect: kind, depth: 1, ocsp: ocsp) }
            guard inner.isValid else {
                report.fail(.nested, inner.verdict, "\(label): \(inner.judgement.reason)")
                return nil
            }
            return inner
        }
        if let text = try? FieldReader(root, path: "payload", .strict).object("data")?.string("signedTransactionInfo") {
            guard let inner = nested(text, .transaction, "signedTransactionInfo") else { return false }
            n.transaction = inner.transaction
        }
        if let text = try? FieldReader(root, path: "payload", .strict).object("data")?.string("signedRenewalInfo") {
            guard let inner = nested(text, .renewalInfo, "signedRenewalInfo") else { return false }
            n.renewal = inner.renewal
        }
        if let text = try? FieldReader(root, path: "payload", .strict).object("appData")?.string("signedAppTransactionInfo") {
            guard let inner = nested(text, .appTransaction, "appData.signedAppTransactionInfo") else { return false }
            n.appTransactionJSON = inner.payloadJSON
        }
        report.notification = n
        return true
    }
}

/// Why a token is refused, and at which check, before the report is written.
struct JWSRefusal: Error {
    let verdict: Verdict
    let reason: String
    let check: JWSCheck

    init(_ verdict: Verdict, _ reason: String, at check: JWSCheck = .token) {
        self.verdict = verdict
        self.reason = reason
        self.check = check
    }
}

/// What the facts decided: the instant and chain it was checked at, the leaf's revocation, the
/// checks that ran, and the first refusal (nil when the token is trusted for its app).
struct JWSDecision {
    var validatedAtMs: Int64?
    var chain: [CertificateSummary] = []
    var revocation: RevocationReport?
    var marks: [(JWSCheck, CheckState)] = []
    var refusal: JWSRefusal?
    var xcode = false

    /// The signer refused (chain, signature, revocation, or a local signer not accepted).
    mutating func refuse(_ verdict: Verdict, _ reason: String) { refusal = JWSRefusal(verdict, reason, at: .signer) }
}

/// A compact JWS whose header holds (ES256 and an x5c chain; nothing else is trusted from it)
/// and whose payload is a JSON object.
struct SignedToken {
    let jws: CompactJWS
    let certificates: [[UInt8]]
    let payload: JSONDocument

    static func read(_ input: UnsafeRawBufferPointer) -> Result<SignedToken, JWSRefusal> {
        let jws: CompactJWS
        switch CompactJWS.parse(input) {
        case .success(let j): jws = j
        case .failure(.malformed(let why)): return .failure(JWSRefusal(.malformed, why))
        }
        let certificates: [[UInt8]]
        switch headerCertificates(jws.header) {
        case .success(let c): certificates = c
        case .failure(let refusal): return .failure(refusal)
        }
        switch jws.payload.withUnsafeBytes({ JSONDocument.parse($0, what: "the JWS payload", status: .invalidArgument) }) {
        case .success(let payload):
            guard payload.root.kind == .object else { return .failure(JWSRefusal(.malformed, "the JWS payload is not a JSON object")) }
            return .success(SignedToken(jws: jws, certificates: certificates, payload: payload))
        case .failure(let e): return .failure(JWSRefusal(.malformed, e.message))
        }
    }

    /// The header's x5c certificates (DER), once alg is ES256.
    private static func headerCertificates(_ bytes: [UInt8]) -> Result<[[UInt8]], JWSRefusal> {
        let header: JSONDocument
        switch bytes.withUnsafeBytes({ JSONDocument.parse($0, what: "the JWS header", status: .invalidArgument) }) {
        case .success(let d): header = d
        case .failure(let e): return .failure(JWSRefusal(.malformed, e.message))
        }
        guard header.root.kind == .object else { return .failure(JWSRefusal(.malformed, "the JWS header is not a JSON object")) }
        guard let alg = header.root[literal: "alg"]?.string else { return .failure(JWSRefusal(.malformed, "the JWS header has no alg")) }
        guard alg == "ES256" else {
            return .failure(JWSRefusal(.unsupportedAlgorithm, "the JWS alg is \(alg); App Store JWS are ES256 only"))
        }
        guard let x5cItems = header.root[literal: "x5c"]?.array, !x5cItems.isEmpty else {
            return .failure(JWSRefusal(.malformed, "the JWS header has no x5c certificate chain"))
        }
        var certDER: [[UInt8]] = []
        for item in x5cItems {
            guard let text = item.string, let der = Base64.decode(Array(text.utf8)), !der.isEmpty else {
                return .failure(JWSRefusal(.malformed, "an x5c entry is not base64 DER"))
            }
            certDER.append(der)
        }
        return .success(certDER)
    }
}
