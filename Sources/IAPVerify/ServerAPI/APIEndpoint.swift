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
    // Deprecated by Apple, still the default of its own library: built for teams that migrate.
    case transactionHistoryV1 = "transaction_history_v1"
    case consumptionInfoV1 = "consumption_info_v1"
    // Retention Messaging (base inApps/v1/messaging).
    case uploadImage = "upload_image"
    case deleteImage = "delete_image"
    case listImages = "list_images"
    case uploadMessage = "upload_message"
    case deleteMessage = "delete_message"
    case listMessages = "list_messages"
    case configureDefaultMessage = "configure_default_message"
    case getDefaultMessage = "get_default_message"
    case deleteDefaultMessage = "delete_default_message"
    case configureRealtimeURL = "configure_realtime_url"
    case getRealtimeURL = "get_realtime_url"
    case deleteRealtimeURL = "delete_realtime_url"
    case initiatePerformanceTest = "initiate_performance_test"
    case performanceTestResult = "performance_test_result"
    // The Advanced Commerce API's server calls (base advancedCommerce/v1), on the same hosts and
    // with the same bearer token; each answers with the signed transaction it changed.
    case advancedCommerceCancelSubscription = "advanced_commerce_cancel_subscription"
    case advancedCommerceChangeSubscriptionMetadata = "advanced_commerce_change_subscription_metadata"
    case advancedCommerceChangeSubscriptionPrice = "advanced_commerce_change_subscription_price"
    case advancedCommerceMigrateSubscription = "advanced_commerce_migrate_subscription"
    case advancedCommerceRevokeSubscription = "advanced_commerce_revoke_subscription"
    case advancedCommerceRequestRefund = "advanced_commerce_request_refund"

    /// Apple has deprecated it; the result's `deprecations` says what to call instead.
    var replacement: APIEndpoint? {
        switch self {
        case .transactionHistoryV1: return .transactionHistory
        case .consumptionInfoV1: return .consumptionInfo
        default: return nil
        }
    }
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
    case imageIdentifier = "image_identifier"
    case messageIdentifier = "message_identifier"
    case locale
    case requestID = "request_id"

    /// Identifiers the developer makes are UUIDs; Apple's libraries send them in lower case.
    var isUUID: Bool { self == .imageIdentifier || self == .messageIdentifier }
}

/// The JSON type a query value or body field must have.
indirect enum APIFieldType: Sendable {
    case string(maxLength: Int)
    case integer(ClosedRange<Int64>)
    case bool
    /// Exactly `true` (Apple refuses anything else, e.g. customerConsented).
    case isTrue
    case oneOf([String])
    /// Text of at most this many characters (Unicode scalars, as Apple counts them).
    case text(maxCharacters: Int)
    case uuid
    /// A UUID or the empty string (consumption v1's appAccountToken when the purchase has none).
    case uuidOrEmpty
    /// Exactly this many capital ASCII letters: an ISO 3166-1 alpha-3 storefront or an ISO 4217
    /// currency code.
    case code(letters: Int)
    /// A JSON object with these fields (written in this order).
    case object([APIBodyField])
    /// A list of the element type (a query parameter repeated, or a JSON array in a body).
    case list(APIFieldType, maxCount: Int)
    /// A JSON array of at least one element (Apple refuses an empty `items`).
    case nonEmptyList(APIFieldType)

    var describe: String {
        switch self {
        case .string(let n): return "a string of at most \(n) characters"
        case .integer(let r): return "an integer from \(r.lowerBound) to \(r.upperBound)"
        case .bool: return "a boolean"
        case .isTrue: return "true"
        case .oneOf(let values): return "one of " + values.joined(separator: ", ")
        case .text(let n): return "a string of at most \(n) characters"
        case .uuid: return "a UUID"
        case .uuidOrEmpty: return "a UUID or \"\""
        case .code(let n): return "\(n) capital letters"
        case .object(let fields): return "an object with " + fields.map(\.name).joined(separator: ", ")
        case .list(let element, _): return "a list of " + element.describe
        case .nonEmptyList(let element): return "a non-empty list of " + element.describe
        }
    }
}

struct APIBodyField: Sendable {
    var name: String
    var type: APIFieldType
    var required: Bool
    init(_ name: String, _ type: APIFieldType, _ required: Bool) { (self.name, self.type, self.required) = (name, type, required) }
}

/// What an endpoint sends as its body.
enum APIBody: Sendable {
    /// A JSON object of these fields, re-written from the validated call.
    case json([APIBodyField])
    /// Bytes sent as they are, with this Content-Type (passed base64 in the call).
    case binary(contentType: String, maxBytes: Int)
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
    var body: APIBody?
    var paging: APIPaging = .none

    var pathParameters: [APIParameter] {
        path.compactMap { if case .parameter(let p) = $0 { return p } else { return nil } }
    }
}

private let productTypes = ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"]
private let millis: ClosedRange<Int64> = 0...Int64(253_402_300_799_999)  // up to year 9999
private let shortText = APIFieldType.string(maxLength: 128)
private let messaging = APIPathPart.literal("inApps/v1/messaging")
private let defaultMessage: [APIPathPart] = [messaging, .literal("default"), .parameter(.productID), .parameter(.locale)]

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
                body: .json([APIBodyField("customerConsented", .isTrue, true),
                       APIBodyField("sampleContentProvided", .bool, true),
                       APIBodyField("deliveryStatus", .oneOf(["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                                                  "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]), true),
                       APIBodyField("consumptionPercentage", .integer(0...100_000), false),
                       APIBodyField("refundPreference", .oneOf(["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]), false)]))
        case .setAppAccountToken:
            return APIEndpointSpec(
                method: "PUT", path: [.literal("inApps/v1/transactions"), .parameter(.originalTransactionID), .literal("appAccountToken")],
                body: .json([APIBodyField("appAccountToken", .uuid, true)]))
        case .extendRenewalDate:
            return APIEndpointSpec(
                method: "PUT", path: [.literal("inApps/v1/subscriptions/extend"), .parameter(.originalTransactionID)],
                body: .json([APIBodyField("extendByDays", .integer(1...90), true), APIBodyField("extendReasonCode", .integer(0...3), true),
                       APIBodyField("requestIdentifier", shortText, true)]))
        case .massExtendRenewalDate:
            return APIEndpointSpec(
                method: "POST", path: [.literal("inApps/v1/subscriptions/extend/mass")],
                body: .json([APIBodyField("extendByDays", .integer(1...90), true), APIBodyField("extendReasonCode", .integer(0...3), true),
                       APIBodyField("requestIdentifier", shortText, true), APIBodyField("productId", shortText, true),
                       APIBodyField("storefrontCountryCodes", .list(.string(maxLength: 3), maxCount: 300), false)]))
        case .massExtendStatus:
            return APIEndpointSpec(
                method: "GET", path: [.literal("inApps/v1/subscriptions/extend/mass"), .parameter(.productID), .parameter(.requestIdentifier)])
        case .notificationHistory:
            return APIEndpointSpec(
                method: "POST", path: [.literal("inApps/v1/notifications/history")],
                queryParameters: [.paginationToken: "paginationToken"],
                body: .json([APIBodyField("startDate", .integer(millis), true), APIBodyField("endDate", .integer(millis), true),
                       APIBodyField("notificationType", shortText, false), APIBodyField("notificationSubtype", shortText, false),
                       APIBodyField("transactionId", shortText, false), APIBodyField("onlyFailures", .bool, false)]),
                paging: .paginationToken)
        case .testNotification:
            return APIEndpointSpec(method: "POST", path: [.literal("inApps/v1/notifications/test")])
        case .testNotificationStatus:
            return APIEndpointSpec(method: "GET", path: [.literal("inApps/v1/notifications/test"), .parameter(.testNotificationToken)])
        case .finishTransaction:
            return APIEndpointSpec(method: "POST", path: [.literal("inApps/v1/transactions"), .parameter(.transactionID), .literal("finish")])
        case .transactionHistoryV1:
            var v2 = APIEndpoint.transactionHistory.spec
            v2.path = [.literal("inApps/v1/history"), .parameter(.transactionID)]
            return v2
        case .consumptionInfoV1:
            let small = APIFieldType.integer(0...7)
            return APIEndpointSpec(
                method: "PUT", path: [.literal("inApps/v1/transactions/consumption"), .parameter(.transactionID)],
                body: .json([APIBodyField("customerConsented", .bool, true), APIBodyField("consumptionStatus", .integer(0...3), true),
                             APIBodyField("platform", .integer(0...2), true), APIBodyField("sampleContentProvided", .bool, true),
                             APIBodyField("deliveryStatus", .integer(0...5), true), APIBodyField("appAccountToken", .uuidOrEmpty, true),
                             APIBodyField("accountTenure", small, true), APIBodyField("playTime", small, true),
                             APIBodyField("lifetimeDollarsRefunded", small, true), APIBodyField("lifetimeDollarsPurchased", small, true),
                             APIBodyField("userStatus", .integer(0...4), true), APIBodyField("refundPreference", .integer(0...3), false)]))
        case .uploadImage:
            return APIEndpointSpec(method: "PUT", path: [messaging, .literal("image"), .parameter(.imageIdentifier)],
                                   query: [("imageSize", .oneOf(["FULL_SIZE", "BULLET_POINT"]))],
                                   body: .binary(contentType: "image/png", maxBytes: 8 * 1024 * 1024))
        case .deleteImage:
            return APIEndpointSpec(method: "DELETE", path: [messaging, .literal("image"), .parameter(.imageIdentifier)])
        case .listImages:
            return APIEndpointSpec(method: "GET", path: [messaging, .literal("image/list")])
        case .uploadMessage:
            let image = APIFieldType.object([APIBodyField("imageIdentifier", .uuid, true), APIBodyField("altText", .text(maxCharacters: 150), true)])
            let bullet = APIFieldType.object([APIBodyField("text", .text(maxCharacters: 66), true), APIBodyField("imageIdentifier", .uuid, true),
                                              APIBodyField("altText", .text(maxCharacters: 150), true)])
            return APIEndpointSpec(
                method: "PUT", path: [messaging, .literal("message"), .parameter(.messageIdentifier)],
                body: .json([APIBodyField("header", .text(maxCharacters: 66), true), APIBodyField("body", .text(maxCharacters: 144), true),
                             APIBodyField("image", image, false), APIBodyField("headerPosition", .oneOf(["ABOVE_BODY", "ABOVE_IMAGE"]), false),
                             APIBodyField("bulletPoints", .list(bullet, maxCount: 5), false)]))
        case .deleteMessage:
            return APIEndpointSpec(method: "DELETE", path: [messaging, .literal("message"), .parameter(.messageIdentifier)])
        case .listMessages:
            return APIEndpointSpec(method: "GET", path: [messaging, .literal("message/list")])
        case .configureDefaultMessage:
            return APIEndpointSpec(method: "PUT", path: defaultMessage, body: .json([APIBodyField("messageIdentifier", .uuid, true)]))
        case .getDefaultMessage:
            return APIEndpointSpec(method: "GET", path: defaultMessage)
        case .deleteDefaultMessage:
            return APIEndpointSpec(method: "DELETE", path: defaultMessage)
        case .configureRealtimeURL:
            return APIEndpointSpec(method: "PUT", path: [messaging, .literal("realtime/url")],
                                   body: .json([APIBodyField("realtimeURL", .text(maxCharacters: 256), true)]))
        case .getRealtimeURL:
            return APIEndpointSpec(method: "GET", path: [messaging, .literal("realtime/url")])
        case .deleteRealtimeURL:
            return APIEndpointSpec(method: "DELETE", path: [messaging, .literal("realtime/url")])
        case .initiatePerformanceTest:
            return APIEndpointSpec(method: "POST", path: [messaging, .literal("performanceTest")],
                                   body: .json([APIBodyField("originalTransactionId", shortText, true)]))
        case .performanceTestResult:
            return APIEndpointSpec(method: "GET", path: [messaging, .literal("performanceTest/result"), .parameter(.requestID)])
        // Advanced Commerce (AdvancedCommerceCalls.swift).
        case .advancedCommerceCancelSubscription: return AdvancedCommerceCalls.cancelSubscription
        case .advancedCommerceChangeSubscriptionMetadata: return AdvancedCommerceCalls.changeSubscriptionMetadata
        case .advancedCommerceChangeSubscriptionPrice: return AdvancedCommerceCalls.changeSubscriptionPrice
        case .advancedCommerceMigrateSubscription: return AdvancedCommerceCalls.migrateSubscription
        case .advancedCommerceRevokeSubscription: return AdvancedCommerceCalls.revokeSubscription
        case .advancedCommerceRequestRefund: return AdvancedCommerceCalls.requestRefund
        }
    }

    /// Every parameter the endpoint takes (path and paging).
    var parameters: Set<APIParameter> {
        let s = spec
        return Set(s.pathParameters).union(s.queryParameters.keys)
    }
}
