// Per-call options. An unknown key or a wrong type is IAPV_E_INVALID_ARGUMENT.

/// Which entry point options are for: each reads its own keys and refuses the others.
public enum OptionsEntry: Sendable {
    /// Receipts, /verifyReceipt responses, entitlement input and JWS.
    case general
    /// App Store Server API answers (iapv_interpret_api_response).
    case apiResponse

    /// Keys only the other entry point reads.
    func refuses(_ key: String) -> Bool {
        switch self {
        case .general: return ["http_status", "retry_after", "environment"].contains(key)
        case .apiResponse: return ["device_id", "last_signed_date_ms", "seen_notification_uuids"].contains(key)
        }
    }
}

public struct CallOptions: Sendable {
    /// Raw device identifier bytes: 16 for an iOS identifierForVendor, 6 for a macOS MAC address.
    public var deviceID: [UInt8]?
    public var endpoint: AppleEndpoint?
    public var attempt: Int64 = 1
    public var deliveredTransactionIDs: [String] = []
    public var orders: [PendingOrder] = []
    /// Pending renewal infos the host has for these subscriptions (pending_renewal_info names).
    public var renewalInfo: [RenewalInfo] = []
    /// JWS notifications: the `signed_date_ms` the host last applied for this subscription.
    public var lastSignedDateMs: Int64?
    /// JWS notifications: notification UUIDs the host already handled.
    public var seenNotificationUUIDs: [String] = []
    /// DER OCSP responses the host fetched for the leaves of earlier results (base64 in JSON).
    public var ocspResponses: [[UInt8]] = []
    /// API answers: which endpoint answered, on which host, with which HTTP status and
    /// Retry-After header text.
    public var apiEndpoint: APIEndpoint?
    public var apiEnvironment: APIEnvironment = .production
    public var httpStatus: Int64?
    public var retryAfter: String?

    public init() {}

    /// Parses the options JSON; empty input means "no options".
    /// Hosts use `Verifier.callOptions(json:entry:)`, which applies the size cap first.
    package init(json: UnsafeRawBufferPointer, entry: OptionsEntry = .general) throws(IAPVFailure) {
        self.init()
        guard json.count > 0 else { return }
        let doc = try ConfigJSONDocument(bytes: json, what: "options", status: .invalidArgument)
        guard let members = doc.root.members else {
            throw .argument("options: expected a JSON object, got \(doc.root.typeName)")
        }
        for (key, value) in members {
            let path = "options.\(key)"
            if entry.refuses(key) {
                throw .argument("options: \"\(key)\" does not apply to this call")
            }
            switch (key, entry) {
            case ("endpoint", .apiResponse):
                guard let s = value.string, let e = APIEndpoint(rawValue: s) else {
                    throw .argument("\(path) must name the API endpoint that answered, one of " + APIEndpoint.allCases.map(\.rawValue).joined(separator: ", "))
                }
                apiEndpoint = e
            case ("environment", _):
                guard let s = value.string, let e = APIEnvironment(rawValue: s) else {
                    throw .argument("\(path) must be \"production\" or \"sandbox\" (the host that answered)")
                }
                apiEnvironment = e
            case ("http_status", _):
                guard let n = value.integer, (100...599).contains(n) else { throw .argument("\(path) must be the HTTP status code, 100-599") }
                httpStatus = n
            case ("retry_after", _):
                guard let s = value.string else { throw .argument("\(path) must be the Retry-After header's text (a string)") }
                retryAfter = s
            default: break
            }
            switch key {
            case "endpoint" where entry == .apiResponse, "environment", "http_status", "retry_after": continue
            case "device_id":
                guard let s = value.string else { throw .argument("\(path) must be a string, got \(value.typeName)") }
                guard let bytes = DeviceIdentifier.parse(s) else {
                    throw .argument("\(path): expected a UUID (identifierForVendor) or a 12-digit hex MAC address")
                }
                deviceID = bytes
            case "endpoint":
                guard let s = value.string, let e = AppleEndpoint(rawValue: s) else {
                    throw .argument("\(path) must be \"production\" or \"sandbox\"")
                }
                endpoint = e
            case "attempt":
                guard let n = value.integer, n >= 1 else { throw .argument("\(path) must be an integer >= 1") }
                attempt = n
            case "delivered_transaction_ids":
                guard let items = value.array else { throw .argument("\(path) must be an array of strings") }
                for (i, item) in items.enumerated() {
                    guard let s = item.string else { throw .argument("\(path)[\(i)] must be a string, got \(item.typeName)") }
                    deliveredTransactionIDs.append(s)
                }
            case "orders":
                guard let items = value.array else { throw .argument("\(path) must be an array of objects") }
                for (i, item) in items.enumerated() {
                    orders.append(try Self.order(item, "\(path)[\(i)]"))
                }
            case "renewal_info":
                // The same reader as a /verifyReceipt body's pending_renewal_info.
                let doc = try value.serialised.withUnsafeBytes {
                    JSONDocument.parse($0, what: path, status: .invalidArgument)
                }.get()
                do {
                    renewalInfo = try TransactionJSON.renewalInfos(doc.root, path: path)
                } catch {
                    throw .argument(error.message)
                }
            case "last_signed_date_ms":
                guard let n = value.integer else { throw .argument("\(path) must be an integer (Unix ms)") }
                lastSignedDateMs = n
            case "ocsp_responses":
                guard let items = value.array else { throw .argument("\(path) must be an array of base64 DER OCSP responses") }
                for (i, item) in items.enumerated() {
                    guard let s = item.string, let der = Base64.decode(Array(s.utf8)), !der.isEmpty else {
                        throw .argument("\(path)[\(i)] must be a base64 DER OCSP response")
                    }
                    ocspResponses.append(der)
                }
            case "seen_notification_uuids":
                guard let items = value.array else { throw .argument("\(path) must be an array of strings") }
                for (i, item) in items.enumerated() {
                    guard let s = item.string else { throw .argument("\(path)[\(i)] must be a string") }
                    seenNotificationUUIDs.append(s)
                }
            default:
                throw .argument("options: unknown key \"\(key)\"")
            }
        }
    }

    private static func order(_ v: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> PendingOrder {
        guard let members = v.members else { throw .argument("\(path) must be an object, got \(v.typeName)") }
        var id: String?, product: String?, created: Int64?
        for (k, value) in members {
            switch k {
            case "order_id":
                guard let s = value.string else { throw .argument("\(path).order_id must be a string") }
                id = s
            case "product_id":
                guard let s = value.string else { throw .argument("\(path).product_id must be a string") }
                product = s
            case "created_ms":
                guard let n = value.integer else { throw .argument("\(path).created_ms must be an integer") }
                created = n
            default: throw .argument("\(path): unknown key \"\(k)\"")
            }
        }
        guard let id, let product, let created else {
            throw .argument("\(path) needs order_id, product_id and created_ms")
        }
        return PendingOrder(orderID: id, productID: product, createdMs: created)
    }
}
