// StoreKit 2 signed data: compact JWS signed with ES256 by Apple, chained through the
// x5c header to Apple Root CA - G3 (from config, never from the token) and checked at the
// payload's signedDate. Transactions, renewal infos, app transactions and App Store Server
// Notifications V2 (whose nested signed data is verified too) share this path.

import COpenSSL

public enum JWSKind: String, Sendable, CaseIterable {
    case transaction
    case renewalInfo = "renewal_info"
    case appTransaction = "app_transaction"
    case notification
    /// A Retention Messaging realtime request: Apple asks the app's server what to show a
    /// subscriber who is about to cancel.
    case realtimeRequest = "realtime_request"
    /// Signed by Apple, but of no shape this library models: it grants nothing, and it is valid
    /// only when the app rule could check it (its bundle id or its app id matched).
    case unknown

    /// Kinds whose payload always names its bundle: one without a bundleId fails closed.
    var namesBundle: Bool {
        switch self {
        case .transaction, .appTransaction, .notification: return true
        case .renewalInfo, .realtimeRequest, .unknown: return false
        }
    }

    /// How results and reasons name the kind.
    var described: String {
        switch self {
        case .appTransaction: return "app transaction"
        case .renewalInfo: return "renewal info"
        case .realtimeRequest: return "realtime request"
        case .unknown: return "signed payload of an unknown kind"
        default: return rawValue
        }
    }
}

/// What the host should do with a Retention Messaging realtime request.
public enum RealtimeAction: String, Sendable {
    /// Answer it (see the `realtime_response` signature kind).
    case respond
    /// A requestIdentifier the host already answered.
    case ignoreDuplicate = "ignore_duplicate"
    /// Signed longer ago than the freshness window allows (or in the future): a replay.
    case ignoreStale = "ignore_stale"
    /// The token is not valid.
    case reject
}

/// A verified realtime request's fields (Apple's decodedRealtimeRequest).
public struct RealtimeRequest: Sendable {
    public internal(set) var originalTransactionID: String
    public internal(set) var productID: String
    public internal(set) var userLocale: String
    public internal(set) var requestIdentifier: String
    public internal(set) var appAppleID: Int64?
    public internal(set) var signedDateMs: Int64
    public internal(set) var action: RealtimeAction = .respond

    /// How far in the future a signedDate may be (clocks differ) before the request is a replay.
    static let futureToleranceMs: Int64 = 60_000
    /// Apple waits about a second for the answer: a request signed five minutes ago is a replay.
    public static let defaultMaxAgeMs: Int64 = 300_000
}

/// What the host should do with a notification, given what it already applied.
public enum NotificationAction: String, Sendable {
    case apply
    case ignoreStale = "ignore_stale"
    case ignoreDuplicate = "ignore_duplicate"
    /// The token is not valid: do nothing with it, whatever its stale/duplicate state.
    case reject
    /// Apple asks for consumption data about a refund request (CONSUMPTION_REQUEST): apply it
    /// and answer with the consumption_info endpoint.
    case sendConsumptionInfo = "send_consumption_info"
    /// A type or subtype this library does not know: keep it as data; it changes nothing.
    case recordOnly = "record_only"
}

public struct NotificationInfo: Sendable {
    public internal(set) var type: String
    public internal(set) var subtype: String?
    public internal(set) var uuid: String?
    public internal(set) var signedDateMs: Int64?
    public internal(set) var action: NotificationAction = .apply
    /// What the notification does to the subscriber's state.
    public internal(set) var effect: NotificationEffect = .unknown
    /// The nested signedTransactionInfo and signedRenewalInfo, each verified like the outer token.
    public internal(set) var transaction: Transaction?
    public internal(set) var renewal: RenewalInfo?
    /// A consent change's appData.signedAppTransactionInfo, verified like the outer token: the
    /// payload as Apple signed it.
    public internal(set) var appTransactionJSON: [UInt8]?
}

/// The checks a JWS must pass before it is valid, in the order they run.
enum JWSCheck: CaseIterable, Sendable, AppRuleChecks {
    /// Compact JWS, an ES256 header with x5c, a JSON object payload.
    case token
    /// The facts read before trust (kind, dates, environment, bundle, app id).
    case facts
    /// The kind the caller (or the outer notification) asked for.
    case kind
    /// The chain at the validation instant, the signature by its leaf, the leaf's revocation.
    case signer
    /// The app rules (Policy/AppPolicy.swift).
    case environment, bundle, appAppleID
    /// A payload that names no app of its own: one of the app rules matched, or its kind was asked for.
    case appNamed
    /// The payload's records, built after the decision.
    case records
    /// A notification's nested signed data (skipped for every other token).
    case nested
}

public struct JWSReport: Sendable {
    /// Undecided until every check passed or one failed; an undecided report is never valid.
    var gate = CheckGate<JWSCheck>()
    public var judgement: Judgement { gate.judgement }
    public internal(set) var kind: JWSKind?
    public internal(set) var environment: PurchaseEnvironment?
    public internal(set) var bundleID: String?
    /// Apple's `appAppleId` when the payload carries one (notifications, app transactions).
    public internal(set) var appAppleID: Int64?
    public internal(set) var signedDateMs: Int64?
    /// The instant the certificate chain was validated at.
    public internal(set) var validatedAtMs: Int64?
    public internal(set) var chain: [CertificateSummary] = []
    /// OCSP facts of the leaf (nil until the chain verified).
    public internal(set) var revocation: RevocationReport?
    /// The decoded payload, as received (valid JSON: Jansson parsed it).
    public internal(set) var payloadJSON: [UInt8]?
    public internal(set) var transaction: Transaction?
    public internal(set) var renewal: RenewalInfo?
    public internal(set) var appAccountToken: String?
    public internal(set) var productType: String?
    public internal(set) var notification: NotificationInfo?
    public internal(set) var realtime: RealtimeRequest?
    public internal(set) var entitlements: EntitlementReport?

    public var verdict: Verdict { judgement.verdict }
    public var isValid: Bool { judgement.verdict == .valid }

    /// Refuses the token at `check`. What was decoded stays for logs, but no action says to use
    /// it: a host that reads only the action is as safe as one that reads the verdict.
    mutating func fail(_ check: JWSCheck, _ verdict: Verdict, _ reason: String) {
        gate.fail(check, verdict, reason)
        notification?.action = .reject
        realtime?.action = .reject
    }
}

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
            } else if let last = options.lastSignedDateMs, let signed = n.signedDateMs, signed < last {
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
