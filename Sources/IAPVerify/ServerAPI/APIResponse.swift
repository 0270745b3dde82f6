// Interpreting an App Store Server API answer the host received: HTTP status, Retry-After and
// body. The status decides the `action`, as /verifyReceipt's status does in VerifyReceipt/; a 200
// body is trusted only as a whole: every signed item in it must verify with this verifier's rules.

/// The paging token to send with the next call.
public enum APINextPage: Sendable, Equatable {
    case revision(String)
    case paginationToken(String)
}

/// Apple's subscription status (1–5) for one subscription, beside the engine's own state.
public struct SubscriptionStatusCheck: Sendable {
    public var subscriptionGroupIdentifier: String?
    public var originalTransactionID: String
    public var appleStatus: Int64
    public var engineState: EntitlementState?
    public var agrees: Bool
}

public struct NotificationSummary: Sendable {
    public var type: String
    public var subtype: String?
    public var effect: NotificationEffect
    public var uuid: String?
    public var signedDateMs: Int64?
}

/// The checks an App Store Server API answer must pass before it is valid, in the order they run.
enum APICheck: CaseIterable, Sendable, AppRuleChecks {
    /// A 2xx status.
    case http
    /// A JSON object with the endpoint's required members (or the empty answer it gives).
    case shape
    /// The app rules on the answer's unsigned facts (Policy/AppPolicy.swift).
    case environment, bundle, appAppleID
    /// Every signed item verified, and the paging token read.
    case items
    /// An order lookup's status is 0 (valid).
    case order
}

public struct APIResponseReport: Sendable {
    /// Undecided until every check passed or one failed; an undecided report is never valid.
    var gate = CheckGate<APICheck>()
    public var judgement: Judgement { gate.judgement }
    public internal(set) var endpoint: APIEndpoint
    public internal(set) var environment: ServerEnvironment
    public internal(set) var httpStatus: Int64
    public internal(set) var action: NextAction
    public internal(set) var retryAfterMs: Int64?
    public internal(set) var errorCode: Int64?
    public internal(set) var errorMessage: String?
    public internal(set) var nextPage: APINextPage?
    /// Signed items verified in this answer.
    public internal(set) var signedItems = 0
    public internal(set) var transactions: [Transaction] = []
    public internal(set) var renewals: [RenewalInfo] = []
    /// The verified app transaction payload (app_transaction_info), as Apple signed it.
    public internal(set) var appTransactionJSON: [UInt8]?
    public internal(set) var notifications: [NotificationSummary] = []
    public internal(set) var statuses: [SubscriptionStatusCheck] = []
    /// Order lookup: Apple's 0 (valid) or 1 (invalid).
    public internal(set) var orderStatus: Int64?
    /// The answer's unsigned top-level fields (test notification token, extension results...).
    public internal(set) var unsignedJSON: [UInt8]?
    /// OCSP facts of the first signed item's certificate (or of the item that was refused).
    public internal(set) var revocation: RevocationReport?
    public internal(set) var entitlements: EntitlementReport?
    /// Old spellings the options used, each with what to write instead.
    public internal(set) var deprecations: [String] = []

    public var statusDisagreements: [SubscriptionStatusCheck] { statuses.filter { !$0.agrees } }

    /// Refused by its HTTP status (or before it: the answer is not a 2xx one).
    init(_ verdict: Verdict, _ reason: String, options: APIResponseOptions, endpoint: APIEndpoint, action: NextAction) {
        self.init(options: options, endpoint: endpoint)
        gate.fail(.http, verdict, reason)
        self.action = action
    }

    /// Undecided and rejecting: where a 2xx answer starts, so that a path that forgets to decide
    /// grants nothing. Only `accept(_:)`, after every check, makes it valid.
    init(options: APIResponseOptions, endpoint: APIEndpoint) {
        self.endpoint = endpoint
        environment = options.environment
        deprecations = options.deprecations
        httpStatus = options.httpStatus ?? 0
        action = .reject
    }

    /// The explicit pass: valid only through the gate, when every check of the answer ran and
    /// none failed (otherwise the answer stays undecided and rejected).
    mutating func accept(_ reason: String) {
        guard gate.pass(reason) else { return }
        action = nextPage == nil ? .accept : .nextPage
    }

    /// A failed check: the whole answer grants nothing.
    mutating func refuse(_ check: APICheck, _ verdict: Verdict, _ reason: String) {
        gate.fail(check, verdict, reason)
        action = .reject
        nextPage = nil
        transactions = []
        renewals = []
        appTransactionJSON = nil
        notifications = []
        statuses = []
        entitlements = nil
    }
}

/// Apple's error codes that say "try again".
private let retryableErrorCodes: Set<Int64> = [4040002, 4040004, 4040006, 5000001]
private let transactionIDNotFound: Int64 = 4040010

/// Interprets App Store Server API answers with the verifier's rules.
struct APIResponseChecker: Checker {
    let context: CheckContext

    func interpret(_ body: UnsafeRawBufferPointer, options: APIResponseOptions,
                   nowMs: Int64) throws(IAPVFailure) -> APIResponseReport {
        guard let endpoint = options.endpoint else {
            throw .argument("options.endpoint is required: the API endpoint that answered (e.g. \"transaction_history\")")
        }
        guard let http = options.httpStatus else {
            throw .argument("options.http_status is required: the HTTP status of Apple's answer")
        }
        func report(_ verdict: Verdict, _ reason: String, _ action: NextAction) -> APIResponseReport {
            APIResponseReport(verdict, reason, options: options, endpoint: endpoint, action: action)
        }

        // Error bodies are {"errorCode": n, "errorMessage": "..."}; anything else carries no code.
        var errorCode: Int64?
        var errorMessage: String?
        if !(200...299).contains(http), body.count > 0,
           case .success(let doc) = JSONDocument.parse(body, what: "error body", status: .invalidArgument) {
            errorCode = doc.root[literal: "errorCode"]?.integer
            errorMessage = doc.root[literal: "errorMessage"]?.string.map { String($0.prefix(512)) }
        }
        func failure(_ verdict: Verdict, _ reason: String, _ action: NextAction) -> APIResponseReport {
            var r = report(verdict, reason, action)
            r.errorCode = errorCode
            r.errorMessage = errorMessage
            return r
        }
        let apple = errorCode.map { " (Apple's error \($0)\(errorMessage.map { ": \($0)" } ?? ""))" } ?? ""

        if http == 401 {
            return failure(.configurationError,
                           "Apple refused the bearer token (HTTP 401): check the key id, issuer id, bundle id and private key; Apple also answers 401 before an app's first production release",
                           .fixConfiguration)
        }
        if errorCode == transactionIDNotFound {
            if options.environment == .production, config.environments.contains(.sandbox) {
                return failure(.wrongEnvironment, "the transaction id is not known in production: ask the sandbox host\(apple)", .retrySandbox)
            }
            return failure(.rejectedByApple, options.environment == .sandbox
                ? "the transaction id is not known in sandbox either: not retrying, no sandbox/production loop\(apple)"
                : "the transaction id is not known in production, and this config does not accept Sandbox\(apple)", .reject)
        }
        if http == 429 || http >= 500 || errorCode.map(retryableErrorCodes.contains) == true {
            let what = http == 429 ? "HTTP 429, Apple's rate limit" : "HTTP \(http), a temporary error"
            if options.attempt >= RetryAfter.maxAttempts {
                return failure(.temporarilyUnavailable, "\(what) after \(options.attempt) attempts: give up and store it for later\(apple)", .giveUp)
            }
            var r = failure(.temporarilyUnavailable, "\(what): retry later\(apple)", .retryLater)
            switch RetryAfter.parse(options.retryAfter, nowMs: nowMs) {
            case .instant(let ms):
                r.retryAfterMs = ms
            case .absent:
                r.retryAfterMs = RetryAfter.backoff(attempt: options.attempt)
            case .unreadable(let shown):
                r.retryAfterMs = RetryAfter.backoff(attempt: options.attempt)
                r.gate.fail(.http, .temporarilyUnavailable,
                            "\(what): retry later; Retry-After \(shown) is not a UNIX time in milliseconds, so the backoff applies\(apple)")
            }
            return r
        }
        if (400...499).contains(http) {
            return failure(.rejectedByApple, "Apple rejected the request with HTTP \(http)\(apple)", .reject)
        }
        guard (200...299).contains(http) else {
            return failure(.malformed, "HTTP \(http) is not an answer the App Store Server API gives; nothing is granted", .reject)
        }
        var base = APIResponseReport(options: options, endpoint: endpoint)
        base.gate.mark(.http, .ok)
        return acceptedAPIBody(body, endpoint: endpoint, options: options, nowMs: nowMs, base: base)
    }

    /// A 2xx answer: its shape, then every signed item, then the engine.
    private func acceptedAPIBody(_ body: UnsafeRawBufferPointer, endpoint: APIEndpoint, options: APIResponseOptions,
                                 nowMs: Int64, base: APIResponseReport) -> APIResponseReport {
        var r = base
        let shape = APIAnswerShape.of(endpoint)
        if shape.isEmpty { return emptyAnswer(body, endpoint: endpoint, options: options, nowMs: nowMs, into: r) }
        guard let doc = answerDocument(body, endpoint: endpoint, shape: shape, into: &r),
              unsignedFactsMatch(doc.root, options: options, into: &r) else { return r }
        var walker = SignedItemWalker(jws: JWSChecker(context: context), expected: options.environment.purchaseEnvironment, nowMs: nowMs,
                                      ocsp: options.ocspResponses)
        do {
            try verifySignedItems(doc.root, endpoint: endpoint, walker: &walker, options: options, nowMs: nowMs, into: &r)
            try readNextPage(doc.root, endpoint: endpoint, into: &r)
        } catch let e as APIShapeError {
            r.refuse(.items, .malformed, e.message)
            return r
        } catch let e as APIItemFailure {
            r.refuse(.items, e.verdict, e.reason)
            r.revocation = e.revocation
            return r
        } catch {
            r.refuse(.items, .malformed, "the answer could not be read")
            return r
        }
        r.gate.mark(.items, .ok)
        r.unsignedJSON = APIAnswerShape.unsignedFields(doc.root, signed: shape.signed)
        if r.orderStatus == 1 {
            r.refuse(.order, .rejectedByApple, "Apple says the order id is invalid (order lookup status 1)")
            return r
        }
        r.gate.mark(.order, r.orderStatus == nil ? .skipped : .ok)
        r.signedItems = walker.verified
        r.revocation = walker.revocation
        r.entitlements = context.engine.evaluate(r.transactions, ownRenewals: r.renewals, host: options.host, nowMs: nowMs)
        r.accept("\(walker.verified) signed item\(walker.verified == 1 ? "" : "s") verified in the \(endpoint.rawValue) answer from \(options.environment.rawValue)"
            + (r.nextPage == nil ? "" : "; Apple has more: call again with next_page"))
        return r
    }

    /// An endpoint that answers with no body (or an empty object): accepted when it did.
    private func emptyAnswer(_ body: UnsafeRawBufferPointer, endpoint: APIEndpoint, options: APIResponseOptions,
                             nowMs: Int64, into base: APIResponseReport) -> APIResponseReport {
        var r = base
        if body.count > 0 {
            guard case .success(let doc) = JSONDocument.parse(body, what: "answer", status: .invalidArgument),
                  let members = doc.root.members, members.isEmpty else {
                r.refuse(.shape, .malformed, "\(endpoint.rawValue) answers with an empty body; this one has content of another shape")
                return r
            }
        }
        // No body: nothing names an environment or an app, and nothing is signed.
        r.gate.mark(.shape, .ok)
        for check in [APICheck.environment, .bundle, .appAppleID, .items, .order] { r.gate.mark(check, .skipped) }
        r.entitlements = context.engine.evaluate([], ownRenewals: [], host: options.host, nowMs: nowMs)
        r.accept("Apple accepted the \(endpoint.rawValue) request (HTTP \(r.httpStatus))")
        return r
    }

    /// The answer parsed, an object with the endpoint's required members; nil once `r` is refused.
    private func answerDocument(_ body: UnsafeRawBufferPointer, endpoint: APIEndpoint, shape: APIAnswerShape,
                                into r: inout APIResponseReport) -> JSONDocument? {
        let doc: JSONDocument
        switch JSONDocument.parse(body, what: "the API answer", status: .invalidArgument) {
        case .success(let d): doc = d
        case .failure(let e):
            r.refuse(.shape, .malformed, e.message)
            return nil
        }
        guard let members = doc.root.members else {
            r.refuse(.shape, .malformed, "the \(endpoint.rawValue) answer is not a JSON object")
            return nil
        }
        guard members.contains(where: { shape.required.contains($0.key) }) || shape.required.isEmpty else {
            r.refuse(.shape, .malformed, "the answer has none of \(shape.required.joined(separator: ", ")): it is not a \(endpoint.rawValue) answer")
            return nil
        }
        for name in shape.required where doc.root[name] == nil {
            r.refuse(.shape, .malformed, "the \(endpoint.rawValue) answer has no \(name)")
            return nil
        }
        r.gate.mark(.shape, .ok)
        return doc
    }

    /// The unsigned fields are only data, but the body's environment and bundle must still match:
    /// the app rules, in the order every entry point uses. False once `r` is refused.
    private func unsignedFactsMatch(_ root: JSONValue, options: APIResponseOptions, into r: inout APIResponseReport) -> Bool {
        guard let (check, verdict, why) = config.applyAppRules(Self.policyFacts(root, options: options), marking: &r.gate) else {
            return true
        }
        r.refuse(check, verdict, why)
        return false
    }

    /// The answer's own environment (it must be the answering host's) and bundle id, when it
    /// names them; it carries no Apple app id.
    private static func policyFacts(_ root: JSONValue, options: APIResponseOptions) -> PolicyFacts {
        let environment: EnvironmentFact
        switch root[literal: "environment"].map({ $0.string }) {
        case nil: environment = .unnamed
        case .some(nil): environment = .refused(.malformed, "environment must be a string")
        case .some(let e?):
            environment = PurchaseEnvironment(appleName: e) == options.environment.purchaseEnvironment
                ? .matched
                : .refused(.environmentRejected, "the answer says environment \(e), but it came from the \(options.environment.rawValue) host")
        }
        let bundle: BundleFact
        switch root[literal: "bundleId"].map({ $0.string }) {
        case nil: bundle = .unnamed
        case .some(nil): bundle = .unreadable("bundleId must be a string")
        case .some(let b?): bundle = .text(b)
        }
        return PolicyFacts(environment: environment, bundle: bundle, what: "API answer")
    }

    /// Every signed item the endpoint's answer carries, verified through `walker` into `r`.
    private func verifySignedItems(_ root: JSONValue, endpoint: APIEndpoint, walker: inout SignedItemWalker,
                                   options: APIResponseOptions, nowMs: Int64, into r: inout APIResponseReport) throws {
        switch endpoint {
        case .transactionInfo:
            try walker.transaction(root, "signedTransactionInfo", into: &r)
        case .transactionHistory, .transactionHistoryV1, .refundHistory, .orderLookup:
            let list = try APIAnswerShape.array(root, "signedTransactions")
            for (i, item) in list.enumerated() {
                try walker.transactionText(item, "signedTransactions[\(i)]", into: &r)
            }
            if endpoint == .orderLookup {
                guard let s = root[literal: "status"]?.integer, s == 0 || s == 1 else {
                    throw APIShapeError("order lookup status must be 0 (valid) or 1 (invalid)")
                }
                r.orderStatus = s
            }
        case .subscriptionStatuses:
            try verifyStatuses(root, walker: &walker, options: options, nowMs: nowMs, into: &r)
        case .appTransactionInfo:
            try walker.appTransaction(root, "signedAppTransactionInfo", into: &r)
        case .notificationHistory:
            let list = try APIAnswerShape.array(root, "notificationHistory")
            for (i, item) in list.enumerated() {
                try walker.notification(item, "signedPayload", at: "notificationHistory[\(i)]", into: &r)
            }
        case .testNotificationStatus:
            try walker.notification(root, "signedPayload", at: "answer", into: &r)
        case .testNotification, .extendRenewalDate, .massExtendRenewalDate, .massExtendStatus,
             .consumptionInfo, .consumptionInfoV1, .setAppAccountToken, .finishTransaction,
             .uploadImage, .deleteImage, .listImages, .uploadMessage, .deleteMessage, .listMessages,
             .configureDefaultMessage, .getDefaultMessage, .deleteDefaultMessage,
             .configureRealtimeURL, .getRealtimeURL, .deleteRealtimeURL,
             .initiatePerformanceTest, .performanceTestResult:
            // Unsigned answers: their fields are data (`unsigned`), checked for shape only.
            break
        }
    }

    /// Each subscription status: its signed transaction and renewal info, which must belong to the
    /// subscription it names, and the engine's state beside Apple's status.
    private func verifyStatuses(_ root: JSONValue, walker: inout SignedItemWalker, options: APIResponseOptions,
                                nowMs: Int64, into r: inout APIResponseReport) throws {
        let groups = try APIAnswerShape.array(root, "data")
        for (g, group) in groups.enumerated() {
            let groupID = group[literal: "subscriptionGroupIdentifier"]?.string
            let last = try APIAnswerShape.array(group, "lastTransactions", at: "data[\(g)]")
            for (i, item) in last.enumerated() {
                let at = "data[\(g)].lastTransactions[\(i)]"
                guard let status = item[literal: "status"]?.integer else { throw APIShapeError("\(at).status must be an integer") }
                guard let original = item[literal: "originalTransactionId"]?.string else {
                    throw APIShapeError("\(at).originalTransactionId must be a string")
                }
                let txn = try walker.transaction(item, "signedTransactionInfo", at: at, into: &r)
                var renewal: RenewalInfo?
                if item[literal: "signedRenewalInfo"] != nil {
                    renewal = try walker.renewal(item, "signedRenewalInfo", at: at, into: &r)
                }
                guard txn.chainID == original, renewal.map({ $0.originalTransactionID == original }) ?? true else {
                    throw APIItemFailure(.malformed, "\(at): the signed items belong to another subscription than originalTransactionId \(original)")
                }
                r.statuses.append(statusCheck(group: groupID, original: original, status: status, transaction: txn,
                                              renewal: renewal, options: options, nowMs: nowMs))
            }
        }
    }

    /// `hasMore`: where the next page starts, by the endpoint's kind of paging.
    private func readNextPage(_ root: JSONValue, endpoint: APIEndpoint, into r: inout APIResponseReport) throws {
        guard let more = root[literal: "hasMore"] else { return }
        guard let hasMore = more.bool else { throw APIShapeError("hasMore must be a boolean") }
        guard hasMore else { return }
        switch endpoint.spec.paging {
        case .revision:
            guard let rev = root[literal: "revision"]?.string, !rev.isEmpty else {
                throw APIShapeError("hasMore is true but the answer has no revision to continue from")
            }
            r.nextPage = .revision(rev)
        case .paginationToken:
            guard let token = root[literal: "paginationToken"]?.string, !token.isEmpty else {
                throw APIShapeError("hasMore is true but the answer has no paginationToken to continue from")
            }
            r.nextPage = .paginationToken(token)
        case .none:
            break
        }
    }

    /// The engine's state for one subscription, beside Apple's status for it.
    private func statusCheck(group: String?, original: String, status: Int64, transaction: Transaction,
                             renewal: RenewalInfo?, options: APIResponseOptions, nowMs: Int64) -> SubscriptionStatusCheck {
        let report = context.engine.evaluate([transaction], renewals: [renewal].compactMap { $0 }, host: EntitlementOptions(), nowMs: nowMs)
        let state = report.entitlements.first { $0.originalTransactionID == original || $0.transactionID == transaction.transactionID }?.state
        let expected: [EntitlementState]
        switch status {
        case 1: expected = [.active]
        case 2: expected = [.expired, .upgraded]
        case 3: expected = [.billingRetry]
        case 4: expected = [.gracePeriod]
        case 5: expected = [.refunded]
        default: expected = []
        }
        return SubscriptionStatusCheck(subscriptionGroupIdentifier: group, originalTransactionID: original, appleStatus: status,
                                       engineState: state, agrees: state.map(expected.contains) ?? false)
    }
}

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

