// The signed items of an App Store Server API answer: each verified with the verifier's JWS rules
// and checked against the host that answered, and the answer's expected shape per endpoint.

struct APIShapeError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

struct APIItemFailure: Error {
    let verdict: Verdict
    let reason: String
    var revocation: RevocationReport?
    init(_ verdict: Verdict, _ reason: String, revocation: RevocationReport? = nil) {
        self.verdict = verdict
        self.reason = reason
        self.revocation = revocation
    }
}

/// Verifies each signed item of an answer with the verifier's JWS rules, and checks that it
/// comes from the environment of the host that answered.
struct SignedItemWalker {
    let jws: JWSChecker
    let expected: PurchaseEnvironment
    let nowMs: Int64
    let ocsp: [[UInt8]]
    var verified = 0
    var revocation: RevocationReport?

    private mutating func verify(_ text: JSONValue?, _ where_: String, kind: JWSKind) throws -> JWSReport {
        guard let token = text?.string else { throw APIShapeError("\(where_) must be a JWS string") }
        let report = Array(token.utf8).withUnsafeBytes { jws.verifySigned($0, nowMs: nowMs, expect: kind, depth: 0, ocsp: ocsp) }
        guard report.isValid else {
            throw APIItemFailure(report.verdict, "\(where_): \(report.judgement.reason)", revocation: report.revocation)
        }
        if revocation == nil { revocation = report.revocation }
        guard report.kind == kind else { throw APIItemFailure(.malformed, "\(where_) is not a signed \(kind.rawValue)") }
        guard report.environment == expected || report.environment == nil && kind == .renewalInfo else {
            throw APIItemFailure(.environmentRejected,
                                 "\(where_) is signed for \(report.environment?.rawValue ?? "no environment"), but the answer came from the \(expected.rawValue) host")
        }
        verified += 1
        return report
    }

    @discardableResult
    mutating func transaction(_ object: JSONValue, _ key: StaticString, at: String = "answer",
                              into r: inout APIResponseReport) throws -> Transaction {
        let report = try verify(object[literal: key], "\(at).\(key)", kind: .transaction)
        guard let t = report.transaction else { throw APIItemFailure(.malformed, "\(at).\(key) carries no transaction") }
        r.transactions.append(t)
        return t
    }

    mutating func transactionText(_ item: JSONValue, _ where_: String, into r: inout APIResponseReport) throws {
        let report = try verify(item, where_, kind: .transaction)
        guard let t = report.transaction else { throw APIItemFailure(.malformed, "\(where_) carries no transaction") }
        r.transactions.append(t)
    }

    mutating func renewal(_ object: JSONValue, _ key: StaticString, at: String, into r: inout APIResponseReport) throws -> RenewalInfo {
        let report = try verify(object[literal: key], "\(at).\(key)", kind: .renewalInfo)
        guard let info = report.renewal else { throw APIItemFailure(.malformed, "\(at).\(key) carries no renewal info") }
        r.renewals.append(info)
        return info
    }

    mutating func appTransaction(_ object: JSONValue, _ key: StaticString, into r: inout APIResponseReport) throws {
        let report = try verify(object[literal: key], "answer.\(key)", kind: .appTransaction)
        r.appTransactionJSON = report.payloadJSON
    }

    mutating func notification(_ object: JSONValue, _ key: StaticString, at: String, into r: inout APIResponseReport) throws {
        let report = try verify(object[literal: key], "\(at).\(key)", kind: .notification)
        guard let n = report.notification else { throw APIItemFailure(.malformed, "\(at).\(key) carries no notification") }
        r.notifications.append(NotificationSummary(type: n.type, subtype: n.subtype, effect: n.effect, uuid: n.uuid, signedDateMs: n.signedDateMs))
        if let t = n.transaction { r.transactions.append(t) }
        if let info = n.renewal { r.renewals.append(info) }
    }
}

/// What each endpoint's 200 answer holds.
struct APIAnswerShape {
    /// Keys that must be present; empty with `isEmpty` for endpoints without a body.
    var required: [String]
    /// Keys that hold signed items (left out of `unsigned`).
    var signed: [String]
    var isEmpty = false

    static func of(_ endpoint: APIEndpoint) -> APIAnswerShape {
        switch endpoint {
        case .transactionInfo: return APIAnswerShape(required: ["signedTransactionInfo"], signed: ["signedTransactionInfo"])
        case .transactionHistory, .transactionHistoryV1, .refundHistory:
            return APIAnswerShape(required: ["signedTransactions", "hasMore"], signed: ["signedTransactions"])
        case .orderLookup: return APIAnswerShape(required: ["status"], signed: ["signedTransactions"])
        case .subscriptionStatuses: return APIAnswerShape(required: ["data"], signed: ["data"])
        case .appTransactionInfo: return APIAnswerShape(required: ["signedAppTransactionInfo"], signed: ["signedAppTransactionInfo"])
        case .notificationHistory: return APIAnswerShape(required: ["notificationHistory", "hasMore"], signed: ["notificationHistory"])
        case .testNotification: return APIAnswerShape(required: ["testNotificationToken"], signed: [])
        case .testNotificationStatus: return APIAnswerShape(required: ["signedPayload"], signed: ["signedPayload"])
        case .extendRenewalDate: return APIAnswerShape(required: ["success"], signed: [])
        case .massExtendRenewalDate: return APIAnswerShape(required: ["requestIdentifier"], signed: [])
        case .massExtendStatus: return APIAnswerShape(required: ["requestIdentifier", "complete"], signed: [])
        case .consumptionInfo, .consumptionInfoV1, .setAppAccountToken, .finishTransaction,
             .uploadImage, .deleteImage, .uploadMessage, .deleteMessage, .configureDefaultMessage, .deleteDefaultMessage,
             .configureRealtimeURL, .deleteRealtimeURL:
            return APIAnswerShape(required: [], signed: [], isEmpty: true)
        // Apple may leave an empty list out, so a list answer needs none of its keys.
        case .listImages: return APIAnswerShape(required: [], signed: [])
        case .listMessages: return APIAnswerShape(required: [], signed: [])
        case .getDefaultMessage: return APIAnswerShape(required: ["messageIdentifier"], signed: [])
        case .getRealtimeURL: return APIAnswerShape(required: ["realtimeURL"], signed: [])
        case .initiatePerformanceTest: return APIAnswerShape(required: ["requestId"], signed: [])
        case .performanceTestResult: return APIAnswerShape(required: [], signed: [])
        // Advanced Commerce: the transaction the call changed, and a subscription's renewal info.
        case .advancedCommerceCancelSubscription, .advancedCommerceChangeSubscriptionMetadata, .advancedCommerceChangeSubscriptionPrice,
             .advancedCommerceMigrateSubscription, .advancedCommerceRevokeSubscription, .advancedCommerceRequestRefund:
            return APIAnswerShape(required: ["signedTransactionInfo"], signed: ["signedTransactionInfo", "signedRenewalInfo"])
        }
    }

    static func array(_ object: JSONValue, _ key: StaticString, at: String = "answer") throws -> [JSONValue] {
        guard let v = object[literal: key] else { return [] }
        guard let items = v.array else { throw APIShapeError("\(at).\(key) must be an array") }
        return items
    }

    /// The answer's other top-level fields, copied as data (scalars and shallow structures).
    static func unsignedFields(_ root: JSONValue, signed: [String]) -> [UInt8]? {
        guard let members = root.members else { return nil }
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        for (key, value) in members where !signed.contains(key) {
            w.key(text: key)
            copy(value, into: &w, depth: 0)
        }
        w.endObject()
        return w.bytes
    }

    private static func copy(_ v: JSONValue, into w: inout JSONWriter, depth: Int) {
        if let s = v.string { w.string(s) }
        else if let n = v.integer { w.int(n) }
        else if let b = v.bool { w.bool(b) }
        else if let d = v.real, d.isFinite { w.rawJSON(Array("\(d)".utf8)) }
        else if depth < 4, let items = v.array {
            w.beginArray()
            for item in items { copy(item, into: &w, depth: depth + 1) }
            w.endArray()
        } else if depth < 4, let members = v.members {
            w.beginObject()
            for (k, value) in members { w.key(text: k); copy(value, into: &w, depth: depth + 1) }
            w.endObject()
        } else { w.null() }
    }
}
