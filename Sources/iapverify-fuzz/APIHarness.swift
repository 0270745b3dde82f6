// The App Store Server API targets: `api` (Verifier.interpretAPIResponse, answers signed with the
// fake Apple-shaped PKI of Tests/shared/fakeapple) and `apicall` (Signer.apiRequest).
//
// `api` input layout (scripts/generate-api-fuzz-seeds.py writes seeds in it):
//   table mode, first byte != 0xFF:
//     byte 0  endpoint: APIEndpoint.allCases[byte % 15]
//     byte 1  HTTP status: statuses[byte % 16]
//     byte 2  bit 0: sandbox host; bits 1-3: attempt - 1; bits 4-7: Retry-After, retryAfters[n],
//             where 15 means "the fuzzer's text": byte 3 is its length n, the next n bytes the text
//     rest    the body
//   options mode, first byte == 0xFF:
//     bytes 1-2  big-endian length L of an options JSON (CallOptions, entry .apiResponse)
//     next L     the options JSON; rest: the body
// Oracle: never trap; a result that is not valid says reject, retry_*, give_up or
// fix_configuration, has no next page, no transactions and grants nothing; a valid one says
// accept or next_page.
//
// `apicall` input: a call JSON. Oracle: never trap; a built URL is printable ASCII, starts with
// the host's base URL, and has no "." or ".." path segment (also once percent-decoded), and no
// header value holds a control character.
import Glibc
@_spi(Testing) import IAPVerify

enum APIHarness {
    static let statuses: [Int64] = [200, 200, 200, 200, 201, 204, 400, 401, 404, 429, 500, 503, 302, 100, 599, 299]

    /// Retry-After header texts; nil is "no header". Index 15 is the fuzzer's own text.
    static let retryAfters: [String?] = [
        nil, "", "0", "1893456001000", "1893456000000", "1893455000000", "999999999999999999",
        "9999999999999999999", " 1893456005000\t", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "-5", "1.5",
        "\u{1}\u{7f}\u{e9}", String(repeating: "7", count: 40),
    ]

    /// IAPV_FUZZ_PRINT=1: one line per api input (verdict, action, reason), to read what seeds do.
    static let printing = getenv("IAPV_FUZZ_PRINT") != nil

    static let verifier: Verifier = {
        let json = Harness.file("Tests/shared/fakeapple/verifier.json")
        do {
            return try Array(json.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try Verifier(json: raw) }
        } catch {
            fputs("fuzz: Tests/shared/fakeapple/verifier.json rejected: \(error)\n", stderr)
            exit(2)
        }
    }()

    static let signer: Signer = {
        let json = Harness.file("Tests/shared/fakeapple/signer.json")
        do {
            return try Array(json.utf8).withUnsafeBytes { raw throws(IAPVFailure) in try Signer(json: raw) }
        } catch {
            fputs("fuzz: Tests/shared/fakeapple/signer.json rejected: \(error)\n", stderr)
            exit(2)
        }
    }()

    static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20:
                let hex = Array("0123456789abcdef")
                out += "\\u00" + String(hex[Int(u.value >> 4)]) + String(hex[Int(u.value & 15)])
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    // MARK: api

    static func runAPI(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 3 else { return }
        var options: APIResponseOptions
        let body: UnsafeRawBufferPointer
        if input[0] == 0xFF {
            let length = Int(input[1]) << 8 | Int(input[2])
            guard input.count >= 3 + length else { return }
            guard let parsed = try? APIResponseOptions(json: UnsafeRawBufferPointer(rebasing: input[3..<3 + length])) else { return }
            options = parsed
            body = UnsafeRawBufferPointer(rebasing: input[(3 + length)...])
        } else {
            let endpoint = APIEndpoint.allCases[Int(input[0]) % APIEndpoint.allCases.count]
            let status = statuses[Int(input[1]) % statuses.count]
            let flags = input[2]
            var json = "{\"endpoint\":\"\(endpoint.rawValue)\",\"http_status\":\(status)"
            json += ",\"environment\":\"\(flags & 1 == 0 ? "Production" : "Sandbox")\""
            json += ",\"attempt\":\(1 + Int(flags >> 1 & 7)),\"delivered_transaction_ids\":[\"1001\"]"
            let pick = Int(flags >> 4)
            var bodyStart = 3
            var ownText: String?
            if pick < retryAfters.count {
                if let text = retryAfters[pick] { json += ",\"retry_after\":" + jsonString(text) }
            } else {
                guard input.count >= 4 else { return }
                let n = Int(input[3])
                guard input.count >= 4 + n else { return }
                ownText = String(decoding: UnsafeRawBufferPointer(rebasing: input[4..<4 + n]), as: UTF8.self)
                bodyStart = 4 + n
            }
            json += "}"
            do {
                options = try Array(json.utf8).withUnsafeBytes { raw throws(IAPVFailure) in
                    try APIResponseOptions(json: raw)
                }
            } catch {
                fatalError("the harness's own options were refused: \(error) in \(json)")
            }
            if let ownText { options.retryAfter = ownText }
            body = UnsafeRawBufferPointer(rebasing: input[bodyStart...])
        }
        let report: APIResponseReport
        do {
            report = try verifier.interpretAPIResponse(body, options: options, nowMs: Harness.now)
        } catch {
            if printing { fputs("api: error \(error)\n", stderr) }
            return
        }
        let json = report.resultJSON()
        if printing {
            fputs("api: \(report.verdict.rawValue) \(report.action.rawValue) items=\(report.signedItems): \(report.judgement.reason.prefix(160))\n", stderr)
        }
        check(json, valid: report.isValid)
    }

    static let refusals: Set<String> = ["\"reject\"", "\"retry_later\"", "\"retry_sandbox\"", "\"give_up\"", "\"fix_configuration\""]

    static func check(_ json: [UInt8], valid: Bool) {
        guard let top = topLevel(json) else { fatalError("the result is not a JSON object: \(String(decoding: json, as: UTF8.self))") }
        func value(_ key: String) -> String {
            guard let v = top[key] else { fatalError("the result has no \(key): \(String(decoding: json, as: UTF8.self))") }
            return v
        }
        let verdict = value("verdict"), action = value("action")
        guard (verdict == "\"valid\"") == valid else { fatalError("verdict \(verdict), but isValid is \(valid)") }
        if valid {
            guard action == "\"accept\"" || action == "\"next_page\"" else { fatalError("valid, but action \(action)") }
            guard (action == "\"next_page\"") == (value("next_page") != "null") else {
                fatalError("action \(action) with next_page \(value("next_page"))")
            }
            return
        }
        guard refusals.contains(action) else { fatalError("verdict \(verdict) with action \(action)") }
        for (key, empty) in [("entitlements", "[]"), ("purchases", "[]"), ("transactions", "[]"), ("renewal_info", "[]"),
                             ("next_page", "null"), ("trusted", "false")] where value(key) != empty {
            fatalError("verdict \(verdict), but \(key) is \(value(key).prefix(300))")
        }
    }

    /// The top-level members of a JSON object, as raw value texts (enough for the writer's output).
    static func topLevel(_ b: [UInt8]) -> [String: String]? {
        var i = 0
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x0a || b[i] == 0x0d || b[i] == 0x09 { i += 1 } }
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        var out: [String: String] = [:]
        while true {
            skipSpace()
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: "}") { return out }
            guard b[i] == UInt8(ascii: "\"") else { return nil }
            let keyStart = i + 1
            i += 1
            while i < b.count, b[i] != UInt8(ascii: "\"") { i += b[i] == UInt8(ascii: "\\") ? 2 : 1 }
            guard i < b.count else { return nil }
            let key = String(decoding: b[keyStart..<i], as: UTF8.self)
            i += 1
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            let valueStart = i
            var depth = 0, inString = false
            scan: while i < b.count {
                let c = b[i]
                if inString {
                    if c == UInt8(ascii: "\\") { i += 1 } else if c == UInt8(ascii: "\"") { inString = false }
                } else {
                    switch c {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        if depth == 0 { break scan }
                        depth -= 1
                    case UInt8(ascii: ","): if depth == 0 { break scan }
                    default: break
                    }
                }
                i += 1
            }
            guard i < b.count else { return nil }
            var end = i
            while end > valueStart, [0x20, 0x0a, 0x0d, 0x09].contains(b[end - 1]) { end -= 1 }
            out[key] = String(decoding: b[valueStart..<end], as: UTF8.self)
            if b[i] == UInt8(ascii: ",") { i += 1 }
        }
    }

    // MARK: apicall

    /// Each host's base URL, as the signer builds it for a call without parameters.
    static let productionBase = base("Production"), sandboxBase = base("Sandbox")

    static func base(_ environment: String) -> String {
        let call = "{\"endpoint\":\"test_notification\",\"environment\":\"\(environment)\"}"
        let suffix = "/inApps/v1/notifications/test"
        guard let url = try? Array(call.utf8).withUnsafeBytes({ raw throws(IAPVFailure) in try signer.apiRequest(raw, nowMs: Harness.now).url }),
              url.hasSuffix(suffix) else {
            fputs("fuzz: the signer builds no test_notification request for \(environment)\n", stderr)
            exit(2)
        }
        return String(url.dropLast(suffix.count))
    }

    static func runCall(_ input: UnsafeRawBufferPointer) {
        guard let request = try? signer.apiRequest(input, nowMs: Harness.now) else { return }
        _ = request.resultJSON()
        let url = Array(request.url.utf8)
        for c in url where c < 0x21 || c > 0x7e {
            fatalError("the URL holds byte \(c): \(request.url)")
        }
        let baseText = request.environment == .production ? productionBase : sandboxBase
        let base = Array(baseText.utf8)
        guard url.count > base.count, Array(url[..<base.count]) == base, url[base.count] == UInt8(ascii: "/") else {
            fatalError("the URL does not start with \(baseText)/: \(request.url)")
        }
        let path = url[(base.count + 1)...].prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            let raw = Array(segment), decoded = percentDecoded(raw)
            for s in [raw, decoded] where s.isEmpty || s == [0x2e] || s == [0x2e, 0x2e] {
                fatalError("the URL has a path segment \"\(String(decoding: s, as: UTF8.self))\": \(request.url)")
            }
            if decoded.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
                fatalError("a path segment decodes to a delimiter: \(request.url)")
            }
        }
        for h in request.headers {
            for c in Array(h.name.utf8) + Array(h.value.utf8) where c < 0x20 || c == 0x7f {
                fatalError("header \(h.name) holds byte \(c)")
            }
        }
    }

    static func percentDecoded(_ s: [UInt8]) -> [UInt8] {
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < s.count {
            if s[i] == UInt8(ascii: "%"), i + 2 < s.count, let h = hex(s[i + 1]), let l = hex(s[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return out
    }
}
