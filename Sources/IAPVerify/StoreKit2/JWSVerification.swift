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

public struct JWSReport: Sendable {
    public internal(set) var judgement = Judgement.undecided
    public internal(set) var kind: JWSKind?
    public internal(set) var environment: ReceiptEnvironment?
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

    /// Refuses the token. What was decoded stays for logs, but no action says to use it: a host
    /// that reads only the action is as safe as one that reads the verdict.
    mutating func fail(_ verdict: Verdict, _ reason: String) {
        judgement = Judgement(verdict, reason)
        notification?.action = .reject
        realtime?.action = .reject
    }
}

/// Verifies compact JWS with the verifier's rules.
struct JWSChecker: Checker {
    let context: CheckContext

    /// Verifies a compact JWS at `nowMs` and decodes it.
    func verify(_ input: UnsafeRawBufferPointer, options: JWSOptions, nowMs: Int64) throws(IAPVFailure) -> JWSReport {
        try admit(input.count, nowMs: nowMs, what: "JWS")
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
            let renewals = (changes ? [n.renewal].compactMap { $0 } : []) + options.host.renewalInfo
            report.entitlements = entitlements(txns, renewals: renewals, host: options.host, nowMs: nowMs)
        } else {
            report.entitlements = entitlements([report.transaction].compactMap { $0 },
                                               renewals: [report.renewal].compactMap { $0 } + options.host.renewalInfo,
                                               host: options.host, nowMs: nowMs)
        }
        return report
    }

    /// One signed object. `expect` is the kind a nested token must have (when it has one).
    func verifySigned(_ input: UnsafeRawBufferPointer, nowMs: Int64, expect: JWSKind?, depth: Int, ocsp: [[UInt8]]) -> JWSReport {
        var report = JWSReport()
        let jws: CompactJWS
        switch CompactJWS.parse(input) {
        case .success(let j): jws = j
        case .failure(.malformed(let why)):
            report.fail(.malformed, why)
            return report
        }
        // Header: ES256 and an x5c chain; nothing else is trusted from it.
        let header: JSONDocument
        switch jws.header.withUnsafeBytes({ JSONDocument.parse($0, what: "the JWS header", status: .invalidArgument) }) {
        case .success(let d): header = d
        case .failure(let e):
            report.fail(.malformed, e.message)
            return report
        }
        guard header.root.kind == .object else { report.fail(.malformed, "the JWS header is not a JSON object"); return report }
        guard let alg = header.root[literal: "alg"]?.string else { report.fail(.malformed, "the JWS header has no alg"); return report }
        guard alg == "ES256" else {
            report.fail(.unsupportedAlgorithm, "the JWS alg is \(alg); App Store JWS are ES256 only")
            return report
        }
        guard let x5cItems = header.root[literal: "x5c"]?.array, !x5cItems.isEmpty else {
            report.fail(.malformed, "the JWS header has no x5c certificate chain")
            return report
        }
        var certDER: [[UInt8]] = []
        for item in x5cItems {
            guard let text = item.string, let der = Base64.decode(Array(text.utf8)), !der.isEmpty else {
                report.fail(.malformed, "an x5c entry is not base64 DER")
                return report
            }
            certDER.append(der)
        }
        // Payload.
        let payload: JSONDocument
        switch jws.payload.withUnsafeBytes({ JSONDocument.parse($0, what: "the JWS payload", status: .invalidArgument) }) {
        case .success(let d): payload = d
        case .failure(let e):
            report.fail(.malformed, e.message)
            return report
        }
        guard payload.root.kind == .object else { report.fail(.malformed, "the JWS payload is not a JSON object"); return report }
        report.payloadJSON = jws.payload
        do {
            try JWSPayloadDecoder.decode(payload.root, into: &report)
        } catch {
            report.fail(.malformed, error.message)
            return report
        }
        if let expect, let kind = report.kind, kind != expect {
            report.fail(.malformed, "the \(depth > 0 ? "nested " : "")token is a \(kind.described), not a \(expect.described)")
            return report
        }
        // The validation time: signedDate, else receiptCreationDate (app transactions), else now.
        // An old notification without signedDate is checked now, as Apple's verifier checks it:
        // its nested transaction's date is not the outer token's own.
        let created = try? FieldReader(payload.root, path: "payload", .strict).int("receiptCreationDate")
        let at = report.signedDateMs ?? created ?? nowMs
        let instant: ValidationInstant = report.signedDateMs == nil && created == nil ? .now : .signedDate
        report.validatedAtMs = at

        let xcode = report.environment?.isLocal == true
        if xcode, !config.xcodeAccept {
            report.fail(.environmentRejected, "this JWS was signed by \(report.environment?.rawValue ?? "Xcode") (a local certificate); set xcode.accept to accept it")
            return report
        }
        if !xcode, certDER.count != 3 {
            report.fail(.notAppleSigner, "the x5c chain has \(certDER.count) certificates; App Store JWS carry exactly 3")
            return report
        }
        // Chain, cached by the exact x5c bytes.
        var keyBytes: [UInt8] = []
        for der in certDER { keyBytes += der }
        let key = ChainKey(xcode ? .xcodeJWS : .jws, signer: [], certificates: keyBytes[...])
        let verified: VerifiedChain
        switch cache.verifiedChain(for: key, certificates: certDER.map { $0[...] }, atMs: at, instant: instant,
                                   anchors: context.anchors(xcode: xcode), applePolicy: !xcode,
                                   signer: { $0.isEmpty ? nil : 0 }) {
        case .success(let chain): verified = chain
        case .failure(let refusal):
            report.fail(refusal.verdict, refusal.reason)
            return report
        }
        report.chain = verified.summaries
        guard ES256.verify(signature: jws.signature, message: jws.signingInput, key: verified.leafKey) else {
            report.fail(.signatureInvalid, jws.signature.count == 64
                ? "the ES256 signature does not verify"
                : "the ES256 signature must be 64 bytes of r‖s, got \(jws.signature.count)")
            return report
        }
        // Revocation, at the call's now: a revoked leaf never passes; `required` wants a good answer.
        let (revocation, refusal) = self.revocation(of: verified, responses: ocsp, nowMs: nowMs)
        report.revocation = revocation
        if let (verdict, why) = refusal {
            report.fail(verdict, why)
            return report
        }
        // Environment and bundle, as for receipts.
        let environmentOutcome = report.environment.map { config.checkEnvironment($0, what: "JWS") }
            ?? .failed(.environmentRejected, "the JWS names no known environment")
        if case .failed(let verdict, let why) = environmentOutcome {
            report.fail(verdict, why)
            return report
        }
        // The app rule, for every kind, known or not: the bundle id wherever the payload has one
        // (kinds that always name one fail closed without it), then Apple's app id wherever it has
        // one. A payload that names no app of its own (a realtime request, an unknown shape) is
        // valid only when one of the two matched, or when the caller asked for its kind by name.
        let kind = report.kind ?? .unknown
        var appChecked = false
        if report.bundleID != nil || kind.namesBundle {
            switch config.checkBundle(report.bundleID, what: kind.described) {
            case .failed(let verdict, let why):
                report.fail(verdict, why)
                return report
            case .ok: appChecked = true
            case .skipped, .notChecked: break
            }
        }
        switch config.checkAppAppleID(report.appAppleID, environment: report.environment, what: kind.described) {
        case .failed(let verdict, let why):
            report.fail(verdict, why)
            return report
        case .ok: appChecked = true
        case .skipped, .notChecked: break
        }
        if !appChecked, !kind.namesBundle, kind != .renewalInfo, expect != kind {
            report.fail(.malformed, kind == .unknown
                ? "a \(kind.described) is accepted only when its bundleId or appAppleId matches the config, and this one's could not be checked"
                : "a \(kind.described) names its app only by appAppleId: set app_apple_id in the config, or pass options.kind \"\(kind.rawValue)\" to accept it unchecked")
            return report
        }
        if report.kind == .notification, var n = report.notification, depth == 0 {
            // Nested signed data is verified like the outer token.
            if let text = try? FieldReader(payload.root, path: "payload", .strict).object("data")?.string("signedTransactionInfo") {
                let nested = Array(text.utf8).withUnsafeBytes { verifySigned($0, nowMs: nowMs, expect: .transaction, depth: 1, ocsp: ocsp) }
                guard nested.isValid else {
                    report.fail(nested.verdict, "signedTransactionInfo: \(nested.judgement.reason)")
                    return report
                }
                n.transaction = nested.transaction
            }
            if let text = try? FieldReader(payload.root, path: "payload", .strict).object("data")?.string("signedRenewalInfo") {
                let nested = Array(text.utf8).withUnsafeBytes { verifySigned($0, nowMs: nowMs, expect: .renewalInfo, depth: 1, ocsp: ocsp) }
                guard nested.isValid else {
                    report.fail(nested.verdict, "signedRenewalInfo: \(nested.judgement.reason)")
                    return report
                }
                n.renewal = nested.renewal
            }
            if let text = try? FieldReader(payload.root, path: "payload", .strict).object("appData")?.string("signedAppTransactionInfo") {
                let nested = Array(text.utf8).withUnsafeBytes { verifySigned($0, nowMs: nowMs, expect: .appTransaction, depth: 1, ocsp: ocsp) }
                guard nested.isValid else {
                    report.fail(nested.verdict, "appData.signedAppTransactionInfo: \(nested.judgement.reason)")
                    return report
                }
                n.appTransactionJSON = nested.payloadJSON
            }
            report.notification = n
        }
        report.judgement = Judgement(.valid, "a \(kind.described) signed by \(xcode ? report.environment?.rawValue ?? "Xcode" : "Apple"), checked at \(RFC3339.format(at))")
        return report
    }
}
