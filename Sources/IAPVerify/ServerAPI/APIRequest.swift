// Building an App Store Server API request: the call names an endpoint and its parameters; the
// result is the exact HTTP request (method, URL, headers with a fresh bearer token, body). The
// host sends it as is. Every id and filter is validated; ids that could change the path are
// refused rather than escaped.

extension ServerEnvironment {
    /// The App Store Server API hosts Apple recommends since 2026-05-05 (LocalTesting has none:
    /// the signer's `local_testing_base_url` names it).
    public var baseURL: String? {
        switch self {
        case .production: return "https://api.storekit.apple.com"
        case .sandbox: return "https://api.storekit-sandbox.apple.com"
        case .localTesting: return nil
        }
    }
}

public struct APIRequest: Sendable {
    public internal(set) var endpoint: APIEndpoint
    public internal(set) var environment: ServerEnvironment
    public internal(set) var method: String
    public internal(set) var url: String
    /// In the order they should be sent.
    public internal(set) var headers: [(name: String, value: String)]
    /// The body, exactly as it must be sent; nil when the endpoint has none.
    public internal(set) var body: [UInt8]?
    /// True when the body is bytes of another type than JSON (an image): the result carries it
    /// base64 in `body_base64`, never as text.
    public internal(set) var bodyIsBinary = false
    public internal(set) var tokenExpiresAtMs: Int64
    /// Old spellings the call used, each with what to write instead.
    public internal(set) var deprecations: [String] = []

    public func resultJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 512 + (body?.count ?? 0) * 2)
        w.beginObject()
        w.field(APIRequestResultMember.endpoint, endpoint.rawValue)
        w.field(APIRequestResultMember.environment, environment.rawValue)
        w.field(APIRequestResultMember.method, method)
        w.field(APIRequestResultMember.url, url)
        w.key(APIRequestResultMember.headers)
        w.beginObject()
        for h in headers { w.key(text: h.name); w.string(h.value) }
        w.endObject()
        w.field(APIRequestResultMember.body, bodyIsBinary ? nil : body.map { String(decoding: $0, as: UTF8.self) })
        w.field(APIRequestResultMember.bodyBase64, bodyIsBinary ? body.map { Base64.encode($0) } : nil)
        w.field(APIRequestResultMember.tokenExpiresAtMs, tokenExpiresAtMs)
        w.field(APIRequestResultMember.deprecations, deprecations)
        w.endObject()
        return w.bytes
    }
}

extension Signer {
    /// Builds the request `call` describes (see docs/server-api.md for the call format).
    public func apiRequest(_ call: UnsafeRawBufferPointer, nowMs: Int64) throws(IAPVFailure) -> APIRequest {
        // Room for an image's base64 (upload_image); other calls are held to 256 KiB below.
        guard call.count <= 12 * 1024 * 1024 else { throw .argument("the call is \(call.count) bytes; at most 12 MiB (an 8 MiB image in base64)") }
        let doc = try ConfigJSONDocument(bytes: call, what: "call", status: .invalidArgument)
        guard let members = doc.root.members else { throw .argument("call: expected a JSON object, got \(doc.root.typeName)") }
        var description = try CallDescription(members)
        try description.check(size: call.count)
        let spec = description.endpoint.spec
        let url = try requestURL(description, spec: spec)
        let (body, contentType) = try Self.requestBody(description, spec: spec)
        let token = try apiToken(nowMs: nowMs, lifetimeSeconds: description.lifetime)
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer " + token.token), ("Accept", "application/json")]
        if body != nil { headers.append(("Content-Type", contentType)) }
        var request = APIRequest(endpoint: description.endpoint, environment: description.environment, method: spec.method, url: url,
                                 headers: headers, body: body, tokenExpiresAtMs: token.expiresAtMs,
                                 deprecations: description.deprecations)
        if case .binary? = spec.body { request.bodyIsBinary = true }
        return request
    }

    /// The URL: the environment's base, the endpoint's path with its parameters, then the query.
    private func requestURL(_ call: CallDescription, spec: APIEndpointSpec) throws(IAPVFailure) -> String {
        let base: String?
        switch call.environment {
        case .production: base = testBaseURL ?? call.environment.baseURL
        case .sandbox: base = testSandboxBaseURL ?? call.environment.baseURL
        case .localTesting: base = localTestingBaseURL
        }
        guard var url = base else {
            throw .argument("call.environment LocalTesting needs local_testing_base_url in the signer config: the server you test against")
        }
        for part in spec.path {
            switch part {
            case .literal(let text):
                url += "/" + text
            case .parameter(let p):
                guard let value = call.parameters[p] else { throw .argument("\(call.endpoint.rawValue) needs call.\(p.rawValue)") }
                if p.isUUID {
                    guard APIURL.isUUID(value) else { throw .argument("call.\(p.rawValue) must be a UUID you made for it") }
                    url += "/" + value.lowercased()
                } else {
                    url += "/" + (try APIURL.pathSegment(value, name: "call.\(p.rawValue)"))
                }
            }
        }
        var pairs: [(String, String)] = []
        for (p, name) in spec.queryParameters.sorted(by: { $0.value < $1.value }) {
            if let value = call.parameters[p] {
                guard !value.isEmpty, value.utf8.count <= 4096, value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                    throw .argument("call.\(p.rawValue) must be 1-4096 printable ASCII characters, as Apple sent it")
                }
                pairs.append((name, value))
            }
        }
        if let query = call.query, !query.isNull {
            pairs += try Self.queryPairs(query, spec: spec, endpoint: call.endpoint)
        }
        if !pairs.isEmpty {
            url += "?" + pairs.map { APIURL.queryEscape($0.0) + "=" + APIURL.queryEscape($0.1) }.joined(separator: "&")
        }
        return url
    }

    /// The body as it is sent, and its content type; nil when the endpoint takes none.
    private static func requestBody(_ call: CallDescription, spec: APIEndpointSpec) throws(IAPVFailure) -> ([UInt8]?, String) {
        let endpoint = call.endpoint
        switch spec.body {
        case .json(let fields)?:
            if let b = call.bodyBase64, !b.isNull { throw .argument("\(endpoint.rawValue) takes a JSON body in call.body, not call.body_base64") }
            return (try body(call.body, fields: fields, endpoint: endpoint), "application/json")
        case .binary(let type, let maxBytes)?:
            if let b = call.body, !b.isNull {
                throw .argument("\(endpoint.rawValue) sends the image's bytes: pass them base64 in call.body_base64 (the bindings take bytes as body)")
            }
            return (try binaryBody(call.bodyBase64, contentType: type, maxBytes: maxBytes, endpoint: endpoint), type)
        case nil:
            if let b = call.body, !b.isNull { throw .argument("\(endpoint.rawValue) takes no body; remove call.body") }
            if let b = call.bodyBase64, !b.isNull { throw .argument("\(endpoint.rawValue) takes no body; remove call.body_base64") }
            return (nil, "application/json")
        }
    }

    /// An image sent as it is: base64 in the call, a PNG by its signature, within Apple's size.
    private static func binaryBody(_ value: ConfigJSONValue?, contentType: String, maxBytes: Int,
                                   endpoint: APIEndpoint) throws(IAPVFailure) -> [UInt8] {
        guard let value, !value.isNull else {
            throw .argument("\(endpoint.rawValue) needs call.body_base64: the \(contentType) file's bytes, base64")
        }
        guard let text = value.string, let bytes = Base64.decode(Array(text.utf8)), !bytes.isEmpty else {
            throw .argument("call.body_base64 must be the file's bytes in standard base64")
        }
        guard bytes.count <= maxBytes else { throw .argument("call.body_base64 holds \(bytes.count) bytes; at most \(maxBytes)") }
        if contentType == "image/png" {
            let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            guard bytes.starts(with: signature) else {
                throw .argument("call.body_base64 is not a PNG file (it does not start with the PNG signature); Apple takes PNG images only")
            }
        }
        return bytes
    }

    private static func queryPairs(_ query: ConfigJSONValue, spec: APIEndpointSpec, endpoint: APIEndpoint) throws(IAPVFailure) -> [(String, String)] {
        guard let members = query.members else { throw .argument("call.query must be an object of Apple's query parameters") }
        for (name, _) in members where !spec.query.contains(where: { $0.name == name }) {
            if let p = spec.queryParameters.first(where: { $0.value == name })?.key {
                throw .argument("call.query.\(name): pass it as call.\(p.rawValue)")
            }
            let known = spec.query.map(\.name)
            throw .argument("call.query.\(name) is not a filter of \(endpoint.rawValue)"
                + (known.isEmpty ? " (it takes none)" : "; expected " + known.joined(separator: ", ")))
        }
        // The table's order, not the object's: the URL is the same however the host wrote the call.
        var out: [(String, String)] = []
        for entry in spec.query {
            guard let value = query[entry.name], !value.isNull else { continue }
            let name = entry.name
            let path = "call.query.\(name)"
            if case .list(let element, let maxCount) = entry.type {
                let items = value.array ?? [value]
                guard items.count <= maxCount else { throw .argument("\(path) has \(items.count) values; at most \(maxCount)") }
                for item in items { out.append((name, try text(item, element, path: path))) }
            } else {
                out.append((name, try text(value, entry.type, path: path)))
            }
        }
        return out
    }

    /// A query value as the text Apple reads: numbers and booleans written out.
    private static func text(_ value: ConfigJSONValue, _ type: APIFieldType, path: String) throws(IAPVFailure) -> String {
        try check(value, type, path: path)
        if let s = value.string { return s }
        if let n = value.integer { return String(n) }
        if let b = value.bool { return b ? "true" : "false" }
        throw .argument("\(path) must be \(type.describe)")
    }

    private static func check(_ value: ConfigJSONValue, _ type: APIFieldType, path: String) throws(IAPVFailure) {
        let ok: Bool
        switch type {
        case .string(let maxLength):
            if let s = value.string {
                ok = !s.isEmpty && s.utf8.count <= maxLength && !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f })
            } else { ok = false }
        case .integer(let range):
            ok = value.integer.map(range.contains) ?? false
        case .bool:
            ok = value.bool != nil
        case .isTrue:
            ok = value.bool == true
        case .oneOf(let values):
            ok = value.string.map(values.contains) ?? false
        case .text(let maxCharacters):
            if let s = value.string {
                ok = !s.isEmpty && s.unicodeScalars.count <= maxCharacters
            } else { ok = false }
        case .uuid:
            ok = value.string.map(APIURL.isUUID) ?? false
        case .uuidOrEmpty:
            ok = value.string.map { $0.isEmpty || APIURL.isUUID($0) } ?? false
        case .code(let letters):
            ok = value.string.map { $0.utf8.count == letters && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } } ?? false
        case .object(let fields):
            guard let members = value.members else { throw .argument("\(path) must be \(type.describe)") }
            for (name, _) in members where !fields.contains(where: { $0.name == name }) {
                throw .argument("\(path).\(name) is not a field here; expected " + fields.map(\.name).joined(separator: ", "))
            }
            for field in fields {
                guard let v = value[field.name], !v.isNull else {
                    if field.required { throw .argument("\(path) needs \(field.name) (\(field.type.describe))") }
                    continue
                }
                try check(v, field.type, path: "\(path).\(field.name)")
            }
            ok = true
        case .list(let element, let maxCount):
            guard let items = value.array, items.count <= maxCount else { throw .argument("\(path) must be \(type.describe), at most \(maxCount)") }
            for (i, item) in items.enumerated() { try check(item, element, path: "\(path)[\(i)]") }
            ok = true
        case .nonEmptyList(let element):
            guard let items = value.array, !items.isEmpty else { throw .argument("\(path) must be \(type.describe)") }
            for (i, item) in items.enumerated() { try check(item, element, path: "\(path)[\(i)]") }
            ok = true
        }
        guard ok else { throw .argument("\(path) must be \(type.describe), got \(value.typeName)") }
    }

    /// The body re-written from validated fields, in the table's order: never the host's bytes.
    private static func body(_ value: ConfigJSONValue?, fields: [APIBodyField],
                             endpoint: APIEndpoint) throws(IAPVFailure) -> [UInt8] {
        let members = value?.members ?? []
        if let value, !value.isNull, value.members == nil {
            throw .argument("call.body must be an object in Apple's field names")
        }
        for (name, _) in members where !fields.contains(where: { $0.name == name }) {
            throw .argument("call.body.\(name) is not a field of \(endpoint.rawValue); expected " + fields.map(\.name).joined(separator: ", "))
        }
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        for field in fields {
            guard let v = members.first(where: { $0.key == field.name })?.value, !v.isNull else {
                if field.required { throw .argument("\(endpoint.rawValue) needs call.body.\(field.name) (\(field.type.describe))") }
                continue
            }
            try check(v, field.type, path: "call.body.\(field.name)")
            w.key(text: field.name)
            write(v, field.type, into: &w)
        }
        w.endObject()
        return w.bytes
    }

    /// A checked value, written as its type says: objects in the table's order, UUIDs in lower
    /// case (as Apple's libraries send them).
    private static func write(_ v: ConfigJSONValue, _ type: APIFieldType, into w: inout JSONWriter) {
        switch type {
        case .object(let fields):
            w.beginObject()
            for field in fields {
                guard let member = v[field.name], !member.isNull else { continue }
                w.key(text: field.name)
                write(member, field.type, into: &w)
            }
            w.endObject()
            return
        case .list(let element, _), .nonEmptyList(let element):
            w.beginArray()
            for item in v.array ?? [] { write(item, element, into: &w) }
            w.endArray()
            return
        case .uuid, .uuidOrEmpty:
            w.string(v.string?.lowercased())
            return
        default:
            break
        }
        if let s = v.string { w.string(s) }
        else if let n = v.integer { w.int(n) }
        else if let b = v.bool { w.bool(b) }
        else { w.null() }
    }
}

/// URL pieces: ids in paths, query escaping, base URLs.
enum APIURL {
    /// An id as one path segment. Delimiters are refused, not escaped: an id that needs them is
    /// not one Apple issued, and escaping would hide a path change from the host's logs.
    static func pathSegment(_ value: String, name: String) throws(IAPVFailure) -> String {
        guard !value.isEmpty, value.utf8.count <= 256 else { throw .argument("\(name) must be 1-256 characters") }
        for c in value.utf8 {
            switch c {
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\\"), UInt8(ascii: "%"):
                throw .argument("\(name) contains \"\(Character(Unicode.Scalar(c)))\", a path or query delimiter; ids Apple issues never do")
            case 0..<0x21, 0x7f:
                throw .argument("\(name) contains a space or control character")
            default: continue
            }
        }
        // Two "." Characters in a row (a "." with a combining mark after it is another Character).
        if zip(value, value.dropFirst()).contains(where: { $0 == "." && $1 == "." }) || value == "." {
            throw .argument("\(name) contains \"..\" or is \".\"; ids Apple issues never do")
        }
        return queryEscape(value)
    }

    /// Percent-encodes everything outside RFC 3986's unreserved set.
    static func queryEscape(_ s: String) -> String {
        var out: [UInt8] = []
        let hex = Array("0123456789ABCDEF".utf8)
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(c)
            default:
                out += [UInt8(ascii: "%"), hex[Int(c >> 4)], hex[Int(c & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isUUID(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count == 36 else { return false }
        for (i, c) in b.enumerated() {
            if [8, 13, 18, 23].contains(i) { if c != UInt8(ascii: "-") { return false }; continue }
            let isHex = (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
            if !isHex { return false }
        }
        return true
    }

    /// `http(s)://host[:port]` with no path, user or query: LocalTesting's server, which the
    /// developer names deliberately for that environment.
    static func isAnyBaseURL(_ s: String) -> Bool {
        let rest: Substring
        if s.hasPrefix("https://") { rest = s.dropFirst(8) } else if s.hasPrefix("http://") { rest = s.dropFirst(7) } else { return false }
        guard !rest.isEmpty, rest.utf8.count <= 255 else { return false }
        return rest.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") || c == UInt8(ascii: ":") || c == UInt8(ascii: "[") || c == UInt8(ascii: "]")
        }
    }

    /// `http(s)://host[:port]` on the loopback interface only: the override exists for a fake
    /// API in tests, and a config that could point elsewhere would hand live tokens to any host.
    static func isBaseURL(_ s: String) -> Bool {
        let rest: Substring
        if s.hasPrefix("https://") { rest = s.dropFirst(8) } else if s.hasPrefix("http://") { rest = s.dropFirst(7) } else { return false }
        for host in ["127.0.0.1", "localhost", "[::1]"] where rest.hasPrefix(host) {
            let port = rest.dropFirst(host.count)
            if port.isEmpty { return true }
            guard port.first == ":", port.count >= 2, port.count <= 6 else { return false }
            return port.dropFirst().allSatisfy { $0 >= "0" && $0 <= "9" }
        }
        return false
    }
}

/// What a call names, read member by member: the endpoint, environment and token lifetime, the
/// endpoint's parameters, and the query and body as given.
private struct CallDescription {
    var endpoint: APIEndpoint
    var environment = ServerEnvironment.production
    var deprecations: [String] = []
    var lifetime = APIToken.defaultLifetimeSeconds
    var parameters: [APIParameter: String] = [:]
    var query: ConfigJSONValue?
    var body: ConfigJSONValue?
    var bodyBase64: ConfigJSONValue?

    init(_ members: [(key: String, value: ConfigJSONValue)]) throws(IAPVFailure) {
        var endpoint: APIEndpoint?
        for (key, value) in members {
            switch CallMember.member(named: key) {
            case .endpoint:
                guard let s = value.string else { throw .argument("call.endpoint must be a string") }
                guard let e = APIEndpoint(rawValue: s) else {
                    throw .argument("call.endpoint \"\(s)\" is unknown; expected one of " + APIEndpoint.allCases.map(\.rawValue).joined(separator: ", "))
                }
                endpoint = e
            case .environment:
                guard let s = value.string, let e = ServerEnvironment.parse(s, path: "call.environment", deprecations: &deprecations) else {
                    throw .argument("call.environment must be \(ServerEnvironment.expectedForAPI)")
                }
                environment = e
            case .tokenLifetimeSeconds:
                guard let n = value.integer, (1...APIToken.maxLifetimeSeconds).contains(n) else {
                    throw .argument("call.token_lifetime_seconds must be an integer from 1 to 3600")
                }
                lifetime = n
            case .query: query = value
            case .body: body = value
            case .bodyBase64: bodyBase64 = value
            case nil:
                guard let p = APIParameter(rawValue: key) else {
                    let hint = APIParameter(rawValue: CallKeys.snakeCase(key)).map { "; did you mean \"\($0.rawValue)\"?" } ?? ""
                    throw .argument("call: unknown key \"\(key)\"\(hint)")
                }
                if value.isNull { continue }   // null means absent
                guard let s = value.string else { throw .argument("call.\(key) must be a string") }
                parameters[p] = s
            }
        }
        guard let endpoint else { throw .argument("call needs an \"endpoint\"") }
        self.endpoint = endpoint
    }

    /// The call applies to its endpoint: its size, its environment, its parameters. Notes Apple's
    /// replacement of a deprecated endpoint.
    mutating func check(size: Int) throws(IAPVFailure) {
        if case .binary = endpoint.spec.body {} else if size > 256 * 1024 {
            throw .argument("the call is \(size) bytes; a call description is at most 256 KiB")
        }
        if let newer = endpoint.replacement {
            deprecations.append("\(endpoint.rawValue) is deprecated by Apple: call \(newer.rawValue) instead")
        }
        if endpoint == .orderLookup, environment == .sandbox {
            throw .argument("order_lookup exists only in production: Apple has no sandbox order ids")
        }
        for p in parameters.keys where !endpoint.parameters.contains(p) {
            throw .argument("call.\(p.rawValue) does not apply to \(endpoint.rawValue)")
        }
    }
}
