// The compact JWS form (RFC 7515): base64url(header) "." base64url(payload) "." base64url(sig).
// Strict: exactly three non-empty segments, base64url without padding or whitespace.

struct CompactJWS {
    /// The ASCII bytes the signature covers: header "." payload, exactly as received.
    var signingInput: [UInt8]
    var header: [UInt8]
    var payload: [UInt8]
    var signature: [UInt8]

    static func parse(_ input: UnsafeRawBufferPointer) -> Result<CompactJWS, JWSProblem> {
        var segments: [[UInt8]] = [[]]
        var dots = 0
        for b in input {
            if b == UInt8(ascii: ".") {
                dots += 1
                guard dots <= 2 else { return .failure(.malformed("a compact JWS has exactly three segments")) }
                segments.append([])
            } else {
                segments[segments.count - 1].append(b)
            }
        }
        guard segments.count == 3 else { return .failure(.malformed("a compact JWS has exactly three segments, found \(segments.count)")) }
        guard let header = base64URL(segments[0]), let payload = base64URL(segments[1]), let signature = base64URL(segments[2]) else {
            return .failure(.malformed("a JWS segment is not base64url (A-Z a-z 0-9 - _, no padding)"))
        }
        return .success(CompactJWS(signingInput: segments[0] + [UInt8(ascii: ".")] + segments[1],
                                   header: header, payload: payload, signature: signature))
    }

    /// base64url without padding; anything else (including '+', '/', '=', whitespace) is refused.
    static func base64URL(_ text: [UInt8]) -> [UInt8]? {
        guard !text.isEmpty, text.count % 4 != 1 else { return nil }
        for c in text {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): continue
            default: return nil
            }
        }
        return Base64.decode(text)
    }
}

enum JWSProblem: Error {
    case malformed(String)
}
