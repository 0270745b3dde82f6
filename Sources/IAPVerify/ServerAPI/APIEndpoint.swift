// Apple's App Store Server API endpoints as data: method, path, which call parameters each takes,
// its query filters and body fields with their types, and how it pages. One table serves the
// request builder, the response interpreter, the CLI and the docs tests.

/// The endpoints, by the snake-case names calls use.
public enum APIEndpoint: String, CaseIterable, Sendable {
    case transactionInfo = "transaction_info"
    case transactionHistory = "transaction_history"
    case subscriptionStatuses = "subscription_statuses"
    case orderLookup = "order_lookup"
    case refundHistory = "refund_history"
    case appTransactionInfo = "app_transaction_info"
    case consumptionInfo = "consumption_info"
    case setAppAccountToken = "set_app_account_token"
    case extendRenewalDate = "extend_renewal_date"
    case massExtendRenewalDate = "mass_extend_renewal_date"
    case massExtendStatus = "mass_extend_status"
    case notificationHistory = "notification_history"
    case testNotification = "test_notification"
    case testNotificationStatus = "test_notification_status"
    case finishTransaction = "finish_transaction"
}

/// A call parameter that becomes part of the path (or, for paging tokens, the query).
public enum APIParameter: String, CaseIterable, Sendable {
    case transactionID = "transaction_id"
    case originalTransactionID = "original_transaction_id"
    case orderID = "order_id"
    case revision
    case paginationToken = "pagination_token"
    case productID = "product_id"
    case requestIdentifier = "request_identifier"
    case testNotificationToken = "test_notification_token"
}

/// The JSON type a query value or body field must have.
indirect enum APIFieldType: Sendable {
    case string(maxLength: Int)
    case integer(ClosedRange<Int64>)
    case bool
    /// Exactly `true` (Apple refuses anything else, e.g. customerConsented).
    case isTrue
    case oneOf([String])
    case uuid
    /// A list of the element type (a query parameter repeated, or a JSON array in a body).
    case list(APIFieldType, maxCount: Int)

    var describe: String {
        switch self {
        case .string(let n): return "a string of at most \(n) characters"
        case .integer(let r): return "an integer from \(r.lowerBound) to \(r.upperBound)"
        case .bool: return "a boolean"
        case .isTrue: return "true"
        case .oneOf(let values): return "one of " + values.joined(separator: ", ")
        case .uuid: return "a UUID"
        case .list(let element, _): return "a list of " + element.describe
        }
    }
}

enum APIPathPart: Sendable {
    case literal(String)
    case parameter(APIParameter)
}

/// How an endpoint's answer continues on a next page.
enum APIPaging: Sendable {
    case none
    /// `revision` in the answer, sent back as the `revision` query parameter while `hasMore`.
    case revision
    /// `paginationToken` in the answer, sent back as the `paginationToken` query parameter.
    case paginationToken
}

struct APIEndpointSpec: Sendable {
    var method: String
    var path: [APIPathPart]
    /// Parameters that go into the query rather than the path, with their query names.
    var queryParameters: [APIParameter: String] = [:]
    var query: [(name: String, type: APIFieldType)] = []
    /// nil: the endpoint takes no body.
    var body: [(name: String, type: APIFieldType, required: Bool)]?
    var paging: APIPaging = .none

    var pathParameters: [APIParameter] {
        path.compactMap { if case .parameter(let p) = $0 { return p } else { return nil } }
    }
}

private let productTypes = ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"]
private let millis: ClosedRange<Int64> = 0...Int64(253_402_300_799_999)  // up to year 9999
private let shortText = APIFieldType.string(maxLength: 128)

extension APIEndpoint {
    var spec: APIEndpointSpec {
        switch self {
        case .transactionInfo:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v1/transactions"), .parameter(.transactionID)])
        case .transactionHistory:
            return APIEndpointSpec(
                method: "GET", path: [.literal("inApps/v2/history"), .parameter(.transactionID)],
                queryParameters: [.revision: "revision"],
                query: [("startDate", .integer(millis)), ("endDate", .integer(millis)),
                        ("productId", .list(shortText, maxCount: 100)),
                        ("productType", .list(.oneOf(productTypes), maxCount: 4)),
                        ("sort", .oneOf(["ASCENDING", "DESCENDING"])),
                        ("subscriptionGroupIdentifier", .list(shortText, maxCount: 100)),
                        ("inAppOwnershipType", .oneOf(["FAMILY_SHARED", "PURCHASED"])),
                        ("revoked", .bool)],
                paging: .revision)
        case .subscriptionStatuses:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v1/subscriptions"), .parameter(.transactionID)],
                                   query: [("status", .list(.integer(1...5), maxCount: 5))])
        case .orderLookup:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v1/lookup"), .parameter(.orderID)])
        case .refundHistory:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v2/refund/lookup"), .parameter(.transactionID)],
                                   queryParameters: [.revision: "revision"], paging: .revision)
        case .appTransactionInfo:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v1/transactions/appTransactions"), .parameter(.transactionID)])
        case .consumptionInfo:
            return APIEndpointSpec(
                method: "PUT", path: [.literal("inApps/v2/transactions/consumption"), .parameter(.transactionID)],
                body: [("customerConsented", .isTrue, true),
                       ("sampleContentProvided", .bool, true),
                       ("deliveryStatus", .oneOf(["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                                                  "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]), true),
                       ("consumptionPercentage", .integer(0...100_000), false),
                       ("refundPreference", .oneOf(["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]), false)])
        case .setAppAccountToken:
            return APIEndpointSpec(
                method: "PUT", path: [.literal("inApps/v1/transactions"), .parameter(.originalTransactionID), .literal("appAccountToken")],
                body: [("appAccountToken", .uuid, true)])
        case .extendRenewalDate:
            return APIEndpointSpec(
                method: "PUT", path: [.literal("inApps/v1/subscriptions/extend"), .parameter(.originalTransactionID)],
                body: [("extendByDays", .integer(1...90), true), ("extendReasonCode", .integer(0...3), true),
                       ("requestIdentifier", shortText, true)])
        case .massExtendRenewalDate:
            return APIEndpointSpec(
                method: "POST", path: [.literal("inApps/v1/subscriptions/extend/mass")],
                body: [("extendByDays", .integer(1...90), true), ("extendReasonCode", .integer(0...3), true),
                       ("requestIdentifier", shortText, true), ("productId", shortText, true),
                       ("storefrontCountryCodes", .list(.string(maxLength: 3), maxCount: 300), false)])
        case .massExtendStatus:
            return APIEndpointSpec(
                method: "GET", path: [.literal("inApps/v1/subscriptions/extend/mass"), .parameter(.productID), .parameter(.requestIdentifier)])
        case .notificationHistory:
            return APIEndpointSpec(
                method: "POST", path: [.literal("inApps/v1/notifications/history")],
                queryParameters: [.paginationToken: "paginationToken"],
                body: [("startDate", .integer(millis), true), ("endDate", .integer(millis), true),
                       ("notificationType", shortText, false), ("notificationSubtype", shortText, false),
                       ("transactionId", shortText, false), ("onlyFailures", .bool, false)],
                paging: .paginationToken)
        case .testNotification:
            return APIEndpointSpec(method: "POST", path: [.literal("inApps/v1/notifications/test")])
        case .testNotificationStatus:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v1/notifications/test"), .parameter(.testNotificationToken)])
        case .finishTransaction:
            return APIEndpointSpec(method: "POST", path: [.literal("inApps/v1/transactions"), .parameter(.transactionID), .literal("finish")])
        }
    }

    /// Every parameter the endpoint takes (path and paging).
    var parameters: Set<APIParameter> {
        let s = spec
        return Set(s.pathParameters).union(s.queryParameters.keys)
    }
}
