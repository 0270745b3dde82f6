// What the service remembers, and every decision that reads or changes it. An actor: each claim,
// notification and entitlement read runs alone, as one database transaction would. A real
// service keeps the same tables in a database (see docs/deployment.md): `deliveries` keyed by
// transaction id is the unique index that makes delivery exactly-once.

import IAPVerify

/// A normalised transaction or renewal info, as the library wrote it in a result.
struct Statement: Sendable {
    var json: [UInt8]
    var signedDateMs: Int64?

    /// Of two records of one transaction (or one renewal info), the one Apple signed later wins.
    func replaces(_ old: Statement?) -> Bool {
        guard let old, let mine = signedDateMs, let theirs = old.signedDateMs else { return true }
        return mine >= theirs
    }
}

struct Delivery: Sendable {
    var userID: String
    var productID: String
    var deliveredMs: Int64
    var revokedMs: Int64?
}

/// Per subscription: what the library needs to put a notification in order.
struct SubscriptionNews: Sendable {
    var lastSignedDateMs: Int64?
    var notificationUUIDs: [String] = []
}

actor PurchaseStore {
    let verifier: Verifier

    /// original transaction id -> the user who owns the purchase
    private var owners: [String: String] = [:]
    /// original transaction id -> transaction id -> the latest signed record
    private var transactions: [String: [String: Statement]] = [:]
    /// original transaction id -> the latest renewal info
    private var renewals: [String: Statement] = [:]
    /// transaction id -> its delivery (one per transaction, ever)
    private var deliveries: [String: Delivery] = [:]
    /// original transaction id (or "" for notifications about no purchase) -> notification state
    private var news: [String: SubscriptionNews] = [:]

    init(verifier: Verifier) {
        self.verifier = verifier
    }

    // MARK: POST /transactions

    /// A verified signed transaction claimed by `userID`: refused if it belongs to someone else;
    /// else stored, and whatever the library's delivery plan lists is delivered once.
    func claim(_ report: JWSReport, transactionJSON: [UInt8], by userID: String, nowMs: Int64) -> Answer {
        guard let transaction = report.transaction else {
            return Answer(400, Refusal(verdict: "malformed", reason: "a valid token that carries no transaction"))
        }
        let original = transaction.originalTransactionID ?? transaction.transactionID
        if let refusal = ownershipRefusal(original: original, transaction: transaction, claimant: userID) {
            return Answer(409, refusal)
        }
        owners[original] = userID
        merge(transaction: transaction, json: transactionJSON, original: original)
        do {
            let plan = try deliver(to: userID, nowMs: nowMs)
            return Answer(200, Accepted(userID: userID, transactionID: transaction.transactionID,
                                        originalTransactionID: original, delivered: plan.delivered,
                                        revoked: plan.revoked, entitlements: plan.access))
        } catch {
            return Answer.failed(error)
        }
    }

    // MARK: POST /apple/notifications

    /// A notification that verified once (`probe`): verified again with what this store knows
    /// about its subscription, then applied as the library's `action` says.
    func apply(notification payload: [UInt8], probe: JWSReport, nowMs: Int64) -> Answer {
        guard let probed = probe.notification else {
            return Answer(400, Refusal(verdict: "malformed", reason: "a valid token that carries no notification"))
        }
        let original = probed.transaction.map { $0.originalTransactionID ?? $0.transactionID }
            ?? probed.renewal?.originalTransactionID
        let key = original ?? ""
        var options = JWSOptions()
        options.kind = .notification
        options.seenNotificationUUIDs = news[key]?.notificationUUIDs ?? []
        options.lastSignedDateMs = news[key]?.lastSignedDateMs
        let report: JWSReport
        do {
            report = try verifier.verifyJWS(payload, options: options, nowMs: nowMs)
        } catch {
            return Answer.failed(error)
        }
        guard report.isValid, let notification = report.notification, let uuid = notification.uuid else {
            // It verified a moment ago at the same clock: only a token without a UUID gets here.
            return Answer(400, Refusal(verdict: report.isValid ? "malformed" : report.verdict.rawValue,
                                       reason: report.isValid ? "a notification without notificationUUID" : report.judgement.reason))
        }
        switch notification.action {
        case .ignoreDuplicate:
            return Answer(200, NotificationOutcome(status: notification.action.rawValue, notificationUUID: uuid))
        case .ignoreStale, .recordOnly:
            // Stale: a newer state is already applied. Unknown type: kept as data, grants nothing.
            news[key, default: SubscriptionNews()].notificationUUIDs.append(uuid)
            return Answer(200, NotificationOutcome(status: notification.action.rawValue, notificationUUID: uuid))
        case .reject:
            return Answer(400, Refusal(verdict: report.verdict.rawValue, reason: report.judgement.reason))
        case .apply, .sendConsumptionInfo:
            break
        }

        var owner: String?
        if let original {
            if let refusal = ownershipRefusal(original: original, transaction: notification.transaction, claimant: nil) {
                return Answer(409, refusal)
            }
            owner = owners[original] ?? Self.tokenUser(notification.transaction)
            if let owner { owners[original] = owner }
        }
        let document = report.resultJSON()
        if let transaction = notification.transaction, let original,
           let json = ResultJSON.object(in: document, at: ["notification", "transaction"]) {
            merge(transaction: transaction, json: json, original: original)
        }
        if let renewal = notification.renewal,
           let json = ResultJSON.object(in: document, at: ["notification", "renewal_info"]) {
            let statement = Statement(json: json, signedDateMs: renewal.commerce.signedDateMs)
            if statement.replaces(renewals[renewal.originalTransactionID]) {
                renewals[renewal.originalTransactionID] = statement
            }
        }
        news[key, default: SubscriptionNews()].notificationUUIDs.append(uuid)
        if let signed = notification.signedDateMs {
            news[key]!.lastSignedDateMs = max(news[key]!.lastSignedDateMs ?? signed, signed)
        }
        var outcome = NotificationOutcome(status: notification.action.rawValue, notificationUUID: uuid, userID: owner)
        if let owner {
            do {
                let plan = try deliver(to: owner, nowMs: nowMs)
                (outcome.delivered, outcome.revoked) = (plan.delivered, plan.revoked)
            } catch {
                return Answer.failed(error)
            }
        }
        // A send_consumption_info action also asks the host to answer Apple through the App Store
        // Server API (consumption_info); this example only applies it.
        return Answer(200, outcome)
    }

    // MARK: GET /users/{id}/entitlements

    func entitlements(of userID: String, nowMs: Int64) -> Answer {
        do {
            let report = try evaluate(userID, delivered: [], nowMs: nowMs)
            return Answer(200, EntitlementsDocument(userID: userID, nowMs: nowMs,
                                                    entitlements: report.entitlements.map(EntitlementView.init)))
        } catch {
            return Answer.failed(error)
        }
    }

    // MARK: the rules

    /// The user a transaction's appAccountToken names (lower case). A Family Sharing member's
    /// copy names the purchaser, not the member: it names nobody here.
    static func tokenUser(_ transaction: Transaction?) -> String? {
        guard let transaction, transaction.ownershipType != "FAMILY_SHARED" else { return nil }
        return transaction.commerce.appAccountToken?.lowercased()
    }

    /// Who may have the purchase `original`: the user already recorded, else the one its
    /// appAccountToken names, else the claimant. A refusal when those disagree.
    private func ownershipRefusal(original: String, transaction: Transaction?, claimant: String?) -> Refusal? {
        let recorded = owners[original]
        let named = Self.tokenUser(transaction)
        if let recorded, let named, recorded.lowercased() != named {
            return Refusal(verdict: "owned_by_another_user",
                           reason: "transaction \(original): its appAccountToken names another user than the one who owns it")
        }
        guard let claimant else { return nil }
        if let recorded, recorded != claimant {
            return Refusal(verdict: "owned_by_another_user", reason: "transaction \(original) belongs to another user")
        }
        if recorded == nil, let named, named != claimant.lowercased() {
            return Refusal(verdict: "owned_by_another_user", reason: "transaction \(original): its appAccountToken names another user")
        }
        return nil
    }

    private func merge(transaction: Transaction, json: [UInt8], original: String) {
        let statement = Statement(json: json, signedDateMs: transaction.commerce.signedDateMs)
        if statement.replaces(transactions[original]?[transaction.transactionID]) {
            transactions[original, default: [:]][transaction.transactionID] = statement
        }
    }

    /// The library's entitlements over every statement of the user's purchases.
    private func evaluate(_ userID: String, delivered: [String], nowMs: Int64) throws -> EntitlementReport {
        let mine = owners.filter { $0.value == userID }.keys.sorted()
        let input = ResultJSON.entitlementInput(
            transactions: mine.flatMap { original in (transactions[original] ?? [:]).sorted { $0.key < $1.key }.map(\.value.json) },
            renewals: mine.compactMap { renewals[$0]?.json })
        let result = try verifier.computeEntitlements(input, options: EntitlementOptions(deliveredTransactionIDs: delivered), nowMs: nowMs)
        guard result.isValid, let report = result.entitlements else {
            throw StoreError.unreadable("the stored statements of \(userID) are unreadable: \(result.judgement.reason)")
        }
        return report
    }

    /// Runs the library's delivery plan for the user and records it: each `to_deliver` item at
    /// most once (the `deliveries` key), each `to_revoke` item taken back once.
    private func deliver(to userID: String, nowMs: Int64) throws -> (delivered: [String], revoked: [String], access: [String: Bool]) {
        let already = deliveries.filter { $0.value.userID == userID }.keys.sorted()
        let report = try evaluate(userID, delivered: already, nowMs: nowMs)
        var delivered: [String] = []
        var revoked: [String] = []
        for item in report.delivery.toDeliver where deliveries[item.transactionID] == nil {
            deliveries[item.transactionID] = Delivery(userID: userID, productID: item.productID, deliveredMs: nowMs)
            delivered.append(item.transactionID)
        }
        for item in report.delivery.toRevoke where deliveries[item.transactionID]?.revokedMs == nil {
            deliveries[item.transactionID]?.revokedMs = nowMs
            revoked.append(item.transactionID)
        }
        var access: [String: Bool] = [:]
        for e in report.entitlements { access[e.id] = e.active }
        return (delivered, revoked, access)
    }
}

enum StoreError: Error {
    case unreadable(String)
}

extension Answer {
    /// A call that could not answer. The detail goes to the log, not to the client.
    static func failed(_ error: any Error) -> Answer {
        switch error {
        case let failure as IAPVFailure:
            log("library_failure", ["status": failure.status.name, "message": failure.message])
            return failure.status == .tooLarge ? .error(413, "the input is too large") : .error(500, "internal error")
        case StoreError.unreadable(let why):
            log("store_unreadable", ["reason": why])
            return .error(500, "internal error")
        default:
            log("unexpected_error", ["error": "\(error)"])
            return .error(500, "internal error")
        }
    }
}

// MARK: answer bodies

struct Refusal: Encodable, Sendable {
    var status = "refused"
    var verdict: String
    var reason: String
}

struct Accepted: Encodable, Sendable {
    var status = "accepted"
    var userID: String
    var transactionID: String
    var originalTransactionID: String
    var delivered: [String]
    var revoked: [String]
    var entitlements: [String: Bool]

    enum CodingKeys: String, CodingKey {
        case status, delivered, revoked, entitlements
        case userID = "user_id", transactionID = "transaction_id", originalTransactionID = "original_transaction_id"
    }
}

struct NotificationOutcome: Encodable, Sendable {
    var status: String
    var notificationUUID: String
    var userID: String? = nil
    var delivered: [String]? = nil
    var revoked: [String]? = nil

    enum CodingKeys: String, CodingKey {
        case status, delivered, revoked
        case notificationUUID = "notification_uuid", userID = "user_id"
    }
}

struct EntitlementsDocument: Encodable, Sendable {
    var userID: String
    var nowMs: Int64
    var entitlements: [EntitlementView]

    enum CodingKeys: String, CodingKey {
        case entitlements
        case userID = "user_id", nowMs = "now_ms"
    }
}

/// What an app needs of an entitlement, read from the typed `Entitlement`.
struct EntitlementView: Encodable, Sendable {
    var id: String
    var active: Bool
    var state: String
    var productID: String?
    var originalTransactionID: String?
    var transactionID: String?
    var expiresDateMs: Int64?
    var willRenew: Bool?
    var renewsTo: String?
    var period: String?
    var ownership: String?
    var expirationReason: String?
    var revocationType: String?
    var priceIncrease: String?

    init(_ e: Entitlement) {
        id = e.id
        active = e.active
        state = e.state.rawValue
        productID = e.productID
        originalTransactionID = e.originalTransactionID
        transactionID = e.transactionID
        expiresDateMs = e.expiresDateMs
        willRenew = e.willRenew
        renewsTo = e.renewsTo
        period = e.period?.rawValue
        ownership = e.ownership?.rawValue
        expirationReason = e.expirationReason
        revocationType = e.revocationType
        priceIncrease = e.priceIncrease
    }

    enum CodingKeys: String, CodingKey {
        case id, active, state, period, ownership
        case productID = "product_id", originalTransactionID = "original_transaction_id", transactionID = "transaction_id"
        case expiresDateMs = "expires_date_ms", willRenew = "will_renew", renewsTo = "renews_to"
        case expirationReason = "expiration_reason", revocationType = "revocation_type", priceIncrease = "price_increase"
    }
}
