// Per-call options: one table of keys says which entry point reads each; one reader per key;
// each entry point gets its own options type, built from what was read. An unknown key, a key
// the entry point does not read, or a wrong type is IAPV_E_INVALID_ARGUMENT.

/// The entry points that take options, by the C function that calls them.
public enum EntryPoint: String, Sendable, CaseIterable {
    case receipt = "iapv_verify_receipt"
    case response = "iapv_interpret_response"
    case entitlements = "iapv_compute_entitlements"
    case jws = "iapv_verify_jws"
    case apiResponse = "iapv_interpret_api_response"
}

/// Every options key and the entry points that read it. Each key is described once, in `spec`
/// (the description: JSON/Surface.swift): its name is the key a host writes.
enum OptionKey: CaseIterable {
    case deviceID, environment, endpoint, attempt, deliveredTransactionIDs, orders, renewalInfo, lastSignedDateMs
    case seenNotificationUUIDs, ocspResponses, httpStatus, retryAfter, kind, seenRequestIdentifiers, maxAgeMs

    init?(name: String) {
        guard let key = Self.byName[name] else { return nil }
        self = key
    }

    /// Every key by its name, made once: an options document is read on every call.
    private static let byName: [String: OptionKey] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    var name: String { "\(spec.name)" }

    var spec: MemberSpec {
        switch self {
        case .deviceID: MemberSpec("device_id", .string, nullable: true, default: "null",
            "the device's identifierForVendor (UUID) or, on macOS, its 12-hex-digit MAC address: the receipt's device hash is checked against it")
        case .environment: MemberSpec("environment", .string, nullable: true, values: .vocabulary(ServerEnvironment.self), default: "\"Production\"",
            "the host that answered: the /verifyReceipt host for responses, the App Store Server API host for API answers (LocalTesting too)")
        case .endpoint: MemberSpec("endpoint", .string, nullable: true, default: "null",
            "API answers: the endpoint that answered (required); /verifyReceipt: the deprecated name of environment")
        case .attempt: MemberSpec("attempt", .integer, nullable: true, default: "1", "which try of the same call this is (1 the first): the retry backoff grows with it")
        case .deliveredTransactionIDs: MemberSpec("delivered_transaction_ids", .array(.string), nullable: true, default: "[]",
            "transaction ids the host already delivered: the delivery plan leaves them out")
        case .orders: MemberSpec("orders", .array(.object(PendingOrderMember.self)), nullable: true, default: "[]",
            "pending orders to match with purchases (docs/entitlements.md)")
        case .renewalInfo: MemberSpec("renewal_info", .array(.object(RenewalInfoDescription.self)), nullable: true, default: "[]",
            "renewal infos the host holds (snake_case, as results write them), merged with the input's own")
        case .lastSignedDateMs: MemberSpec("last_signed_date_ms", .ms, nullable: true, default: "null",
            "the signedDate of the last notification applied for the same subscription: an older one is ignore_stale")
        case .seenNotificationUUIDs: MemberSpec("seen_notification_uuids", .array(.string), nullable: true, default: "[]",
            "notificationUUIDs already applied: a repeat is ignore_duplicate")
        case .ocspResponses: MemberSpec("ocsp_responses", .array(.string), nullable: true, default: "[]",
            "base64 DER OCSP answers the responders gave to earlier results' requests; answers for other certificates are skipped, so one cached list can serve every call (docs/revocation.md)")
        case .httpStatus: MemberSpec("http_status", .integer, nullable: true, default: "null",
            "the HTTP status Apple answered with, or 0 when Apple did not answer (refused, reset, timed out): the body is then not read; API answers: required")
        case .retryAfter: MemberSpec("retry_after", .string, nullable: true, default: "null", "API answers: the Retry-After header's text")
        case .kind: MemberSpec("kind", .string, nullable: true, values: .words("transaction renewal_info app_transaction notification realtime_request"),
            default: "null", "the kind of signed payload expected: any other kind is malformed (name it wherever the app sends a jwsRepresentation)")
        case .seenRequestIdentifiers: MemberSpec("seen_request_identifiers", .array(.string), nullable: true, default: "[]",
            "realtime requests already answered: a repeat is ignore_duplicate")
        case .maxAgeMs: MemberSpec("max_age_ms", .integer, nullable: true, default: "300000",
            "a realtime request signed longer ago than this is ignore_stale")
        }
    }

    var readBy: [EntryPoint] {
        switch self {
        case .deviceID: return [.receipt]
        case .environment, .attempt: return [.response, .apiResponse]
        // The API endpoint that answered; for /verifyReceipt, the old name of `environment`.
        case .endpoint: return [.response, .apiResponse]
        case .deliveredTransactionIDs, .orders, .renewalInfo: return EntryPoint.allCases
        case .lastSignedDateMs, .seenNotificationUUIDs, .kind, .seenRequestIdentifiers, .maxAgeMs: return [.jws]
        case .ocspResponses: return [.receipt, .jws, .apiResponse]
        // /verifyReceipt: the status when Apple answered without a body to read (or 0: no answer).
        case .httpStatus: return [.response, .apiResponse]
        case .retryAfter: return [.apiResponse]
        }
    }
}

/// What one options object said, read by the table. Each entry point's options type is built
/// from it; hosts get those through `Verifier.options(json:)`.
public struct OptionValues: Sendable {
    var deviceID: [UInt8]?
    var environment: ServerEnvironment?
    var apiEndpoint: APIEndpoint?
    var attempt: Int64?
    var host = EntitlementOptions()
    var lastSignedDateMs: Int64?
    var seenNotificationUUIDs: [String] = []
    var jwsKind: JWSKind?
    var seenRequestIdentifiers: [String] = []
    var maxAgeMs: Int64?
    var ocspResponses: [[UInt8]] = []
    var httpStatus: Int64?
    var retryAfter: String?
    var deprecations: [String] = []

    /// Parses the options JSON for one entry point; empty input means "no options".
    init(json: UnsafeRawBufferPointer, for entry: EntryPoint) throws(IAPVFailure) {
        guard json.count > 0 else { return }
        let doc = try ConfigJSONDocument(bytes: json, what: "options", status: .invalidArgument)
        guard let members = doc.root.members else {
            throw .argument("options: expected a JSON object, got \(doc.root.typeName)")
        }
        for (name, value) in members {
            guard let key = OptionKey(name: name) else {
                let hint = CallKeys.didYouMean(name, among: OptionKey.allCases.map(\.name))
                throw .argument("options: unknown key \"\(name)\"\(hint)")
            }
            guard key.readBy.contains(entry) else {
                throw .argument("options: \"\(name)\" does not apply to \(entry.rawValue); it is read by "
                    + key.readBy.map(\.rawValue).joined(separator: ", "))
            }
            // null means absent, for every key (a host passes its "nothing yet" as it has it).
            if value.isNull { continue }
            try read(key, value, path: "options.\(name)", entry: entry)
        }
    }

    private mutating func read(_ key: OptionKey, _ value: ConfigJSONValue, path: String, entry: EntryPoint) throws(IAPVFailure) {
        switch key {
        case .deviceID:
            guard let s = value.string else { throw .argument("\(path) must be a string, got \(value.typeName)") }
            guard let bytes = DeviceIdentifier.parse(s) else {
                throw .argument("\(path): expected a UUID (identifierForVendor) or a 12-digit hex MAC address")
            }
            deviceID = bytes
        case .environment:
            guard let s = value.string, let e = ServerEnvironment.parse(s, path: path, deprecations: &deprecations),
                  e != .localTesting || entry == .apiResponse else {
                throw .argument("\(path) must be \(entry == .apiResponse ? ServerEnvironment.expectedForAPI : ServerEnvironment.expected): the host that answered")
            }
            environment = e
        case .endpoint where entry == .response:
            guard let s = value.string, let e = ServerEnvironment(anyCase: s), e != .localTesting else {
                throw .argument("\(path) is the old name of options.environment, which must be \(ServerEnvironment.expected)")
            }
            deprecations.append("options.endpoint is deprecated for /verifyReceipt answers: write \"environment\": \"\(e.rawValue)\"; the old name goes in the next release")
            environment = e
        case .endpoint:
            guard let s = value.string, let e = APIEndpoint(rawValue: s) else {
                throw .argument("\(path) must name the API endpoint that answered, one of " + APIEndpoint.allCases.map(\.rawValue).joined(separator: ", "))
            }
            apiEndpoint = e
        case .attempt:
            guard let n = value.integer, n >= 1 else { throw .argument("\(path) must be an integer >= 1") }
            attempt = n
        case .deliveredTransactionIDs:
            host.deliveredTransactionIDs = try Self.strings(value, path)
        case .orders:
            guard let items = value.array else { throw .argument("\(path) must be an array of objects") }
            for (i, item) in items.enumerated() {
                host.orders.append(try Self.order(item, "\(path)[\(i)]"))
            }
        case .renewalInfo:
            host.renewalInfo = try Self.renewalInfos(value, path)
        case .lastSignedDateMs:
            guard let n = value.integer else { throw .argument("\(path) must be an integer (Unix ms)") }
            lastSignedDateMs = n
        case .seenNotificationUUIDs:
            seenNotificationUUIDs = try Self.strings(value, path)
        case .kind:
            let known = JWSKind.allCases.filter { $0 != .unknown }
            guard let s = value.string, let k = JWSKind(rawValue: s), k != .unknown else {
                throw .argument("\(path) must be the kind of signed payload expected, one of " + known.map(\.rawValue).joined(separator: ", "))
            }
            jwsKind = k
        case .seenRequestIdentifiers:
            seenRequestIdentifiers = try Self.strings(value, path)
        case .maxAgeMs:
            guard let n = value.integer, n >= 0 else { throw .argument("\(path) must be an integer >= 0 (milliseconds)") }
            maxAgeMs = n
        case .ocspResponses:
            ocspResponses += try Self.ocspResponses(value, path)
        case .httpStatus:
            httpStatus = try Self.httpStatus(value, path, entry: entry)
        case .retryAfter:
            guard let s = value.string else { throw .argument("\(path) must be the Retry-After header's text (a string)") }
            retryAfter = s
        }
    }

    /// The same reader as a /verifyReceipt body's pending_renewal_info.
    private static func renewalInfos(_ value: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> [RenewalInfo] {
        let doc = try value.serialised.withUnsafeBytes {
            JSONDocument.parse($0, what: path, status: .invalidArgument)
        }.get()
        do {
            return try TransactionJSON.renewalInfos(doc.root, path: path)
        } catch {
            throw .argument(error.message)
        }
    }

    private static func ocspResponses(_ value: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> [[UInt8]] {
        guard let items = value.array else { throw .argument("\(path) must be an array of base64 DER OCSP responses") }
        var out: [[UInt8]] = []
        for (i, item) in items.enumerated() {
            guard let s = item.string, let der = Base64.decode(Array(s.utf8)), !der.isEmpty else {
                throw .argument("\(path)[\(i)] must be a base64 DER OCSP response")
            }
            out.append(der)
        }
        return out
    }

    /// A /verifyReceipt call may also say 0: Apple did not answer at all.
    private static func httpStatus(_ value: ConfigJSONValue, _ path: String, entry: EntryPoint) throws(IAPVFailure) -> Int64 {
        if entry == .response {
            guard let n = value.integer, n == 0 || (100...599).contains(n) else {
                throw .argument("\(path) must be the HTTP status code, 100-599, or 0 when Apple did not answer (refused, reset, timed out)")
            }
            return n
        }
        guard let n = value.integer, (100...599).contains(n) else { throw .argument("\(path) must be the HTTP status code, 100-599") }
        return n
    }

    private static func strings(_ value: ConfigJSONValue, _ path: String) throws(IAPVFailure) -> [String] {
        guard let items = value.array else { throw .argument("\(path) must be an array of strings") }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard let s = item.string else { throw .argument("\(path)[\(i)] must be a string, got \(item.typeName)") }
            out.append(s)
        }
        return out
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

/// An entry point's options type: which entry point it is for, and how it is built from what the
/// options JSON said.
public protocol EntryOptions: Sendable {
    static var entryPoint: EntryPoint { get }
    init(_ values: OptionValues)
}

extension ReceiptOptions: EntryOptions {
    public static var entryPoint: EntryPoint { .receipt }
    public init(_ v: OptionValues) {
        self.init()
        (deviceID, ocspResponses, host) = (v.deviceID, v.ocspResponses, v.host)
    }
}

extension ResponseOptions: EntryOptions {
    public static var entryPoint: EntryPoint { .response }
    public init(_ v: OptionValues) {
        self.init(environment: v.environment ?? .production, attempt: v.attempt ?? 1, httpStatus: v.httpStatus, host: v.host,
                  deprecations: v.deprecations)
    }
}

extension EntitlementOptions: EntryOptions {
    public static var entryPoint: EntryPoint { .entitlements }
    public init(_ v: OptionValues) { self = v.host }
}

extension JWSOptions: EntryOptions {
    public static var entryPoint: EntryPoint { .jws }
    public init(_ v: OptionValues) {
        self.init()
        (ocspResponses, lastSignedDateMs, seenNotificationUUIDs, host) = (v.ocspResponses, v.lastSignedDateMs, v.seenNotificationUUIDs, v.host)
        (kind, seenRequestIdentifiers) = (v.jwsKind, v.seenRequestIdentifiers)
        if let age = v.maxAgeMs { maxAgeMs = age }
    }
}

extension APIResponseOptions: EntryOptions {
    public static var entryPoint: EntryPoint { .apiResponse }
    public init(_ v: OptionValues) {
        self.init()
        (endpoint, environment, httpStatus, retryAfter) = (v.apiEndpoint, v.environment ?? .production, v.httpStatus, v.retryAfter)
        (attempt, ocspResponses, host, deprecations) = (v.attempt ?? 1, v.ocspResponses, v.host, v.deprecations)
    }
}

extension EntryOptions {
    /// Options from JSON without the size cap: the fuzz harness and tests. Hosts use
    /// `Verifier.options(json:)`, which applies it.
    package init(json: UnsafeRawBufferPointer) throws(IAPVFailure) {
        self.init(try OptionValues(json: json, for: Self.entryPoint))
    }
}
