// Base64 in and out. Receipts arrive as standard or URL-safe base64, with or without padding,
// often wrapped in lines: plain one-line base64 is decoded in place by a table; anything else is
// normalised first and decoded by OpenSSL's block codec, as is all encoding.

import CFastBase64
import COpenSSL

enum Base64 {
    /// Decodes permissive base64: whitespace is skipped, `-`/`_` map to `+`/`/`, padding is optional.
    /// Returns nil for any other character or an impossible length.
    static func decode(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        decodePlain(input) ?? decodePermissive(input)
    }

    /// The permissive pass: normalises into a clean copy, then decodes.
    static func decodePermissive(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        var clean: [UInt8] = []
        clean.reserveCapacity(input.count + 3)
        var padding = 0
        for b in input {
            switch b {
            case UInt8(ascii: " "), 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "="):
                padding += 1
                continue
            case UInt8(ascii: "-"): clean.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): clean.append(UInt8(ascii: "/"))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                if padding > 0 { return nil }  // data after '='
                clean.append(b)
            default:
                return nil
            }
        }
        guard !clean.isEmpty, padding <= 2 else { return nil }
        let remainder = clean.count % 4
        guard remainder != 1 else { return nil }
        let added = remainder == 0 ? 0 : 4 - remainder
        if padding != 0 && padding != added { return nil }
        for _ in 0..<added { clean.append(UInt8(ascii: "=")) }
        guard clean.count < Int(Int32.max) else { return nil }
        var out = [UInt8](repeating: 0, count: clean.count / 4 * 3)
        let n = out.withUnsafeMutableBufferPointer { o in
            clean.withUnsafeBufferPointer { i in
                EVP_DecodeBlock(o.baseAddress, i.baseAddress, Int32(i.count))
            }
        }
        guard n >= 0, Int(n) >= added else { return nil }
        out.removeLast(out.count - (Int(n) - added))
        return out
    }

    /// Each byte's 6-bit value in standard base64; 0xFF for anything else, `=` included.
    private static func sextet(_ b: UInt8) -> UInt8 {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return b - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return b - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return 0xFF
        }
    }

    /// Four tables of 256, one per position in a quad: a character's bits already placed where
    /// they land in the quad's three bytes, read as a little-endian word (byte 0 = first output
    /// byte). A quad decodes to the OR of its four entries; a character outside the alphabet
    /// sets bit 24, which no valid entry uses.
    private static let quadTables: [UInt32] = (0..<4).flatMap { position in
        (0..<256).map { b -> UInt32 in
            let v = UInt32(sextet(UInt8(b)))
            guard v != 0xFF else { return 1 << 24 }
            switch position {
            case 0: return v << 2                                  // byte 0, high 6 bits
            case 1: return (v >> 4) | (v & 0x0F) << 12            // byte 0 low 2, byte 1 high 4
            case 2: return (v >> 2) << 8 | (v & 0x03) << 22       // byte 1 low 4, byte 2 high 2
            default: return v << 16                                // byte 2, low 6 bits
            }
        }
    }

    /// The common case, decoded in place: standard base64 in one line, its length a multiple of 4,
    /// with at most two `=` at the end. Exactly what `decode` would make of it (the permissive pass
    /// would change nothing; like it, the bits a final character has beyond the data are ignored);
    /// nil sends anything else to that pass. Receipts are tens of kilobytes: 32 characters a step
    /// by AVX2 (CFastBase64), and the rest by four table lookups and one 4-byte store a quad (the
    /// spare byte is overwritten by the next quad; the buffer has room past the data), any
    /// character outside the alphabet noticed once at the end.
    static func decodePlain(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        let n = input.count
        guard n >= 4, n % 4 == 0, n < Int(Int32.max), let base = input.baseAddress else { return nil }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var padding = 0
        if bytes[n - 1] == UInt8(ascii: "=") { padding = bytes[n - 2] == UInt8(ascii: "=") ? 2 : 1 }
        var invalid: UInt32 = 0
        // Room for the AVX2 bulk's 4 bytes past its last step too.
        let out = [UInt8](unsafeUninitializedCapacity: n / 4 * 3 + 4) { o, count in
            quadTables.withUnsafeBufferPointer { tables in
                let t0 = tables.baseAddress!, t1 = t0 + 256, t2 = t0 + 512, t3 = t0 + 768
                let to = UnsafeMutableRawPointer(o.baseAddress!)
                var seen: UInt32 = 0
                let whole = (n - padding) / 4   // quads without padding
                // Whole steps of 32 characters by AVX2 when the processor has it; the rest (and a
                // step holding anything outside the alphabet) here.
                let bulk = fast_base64_decode(bytes, whole * 4, o.baseAddress!)
                var i = bulk, j = bulk / 4 * 3
                for _ in (bulk / 4)..<whole {
                    let q = t0[Int(bytes[i])] | t1[Int(bytes[i + 1])] | t2[Int(bytes[i + 2])] | t3[Int(bytes[i + 3])]
                    seen |= q
                    to.storeBytes(of: q.littleEndian, toByteOffset: j, as: UInt32.self)
                    i &+= 4
                    j &+= 3
                }
                if padding > 0 {
                    // The last quad: two or three characters, then one or two bytes.
                    let q = t0[Int(bytes[i])] | t1[Int(bytes[i + 1])] | (padding == 1 ? t2[Int(bytes[i + 2])] : 0)
                    seen |= q
                    to.storeBytes(of: q.littleEndian, toByteOffset: j, as: UInt32.self)
                    j += 3 - padding
                }
                invalid = seen
                count = j
            }
        }
        return invalid & (1 << 24) == 0 ? out : nil
    }

    static func decode(_ input: [UInt8]) -> [UInt8]? {
        input.withUnsafeBytes { decode($0) }
    }

    /// Standard base64 with padding.
    static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let input = Array(bytes)
        if input.isEmpty { return "" }
        return String(unsafeUninitializedCapacity: encodedCapacity(input.count)) { out in
            input.withUnsafeBufferPointer { encode($0.baseAddress!, $0.count, into: out.baseAddress!) }
        }
    }

    /// The room `encode(_:_:into:)` needs for `n` bytes: the digits and OpenSSL's terminator.
    static func encodedCapacity(_ n: Int) -> Int { (n + 2) / 3 * 4 + 1 }

    /// Values up to this many bytes are encoded here: most a result carries (unknown receipt
    /// attributes) hold two or three bytes, and the call into OpenSSL cost more than their digits.
    static let shortEncoding = 48

    /// Writes the `n` bytes at `from` as standard base64 with padding into `out`, which has room
    /// for `encodedCapacity(n)` bytes; returns the digits written (nothing for 0 bytes or more
    /// than OpenSSL's encoder takes). Short values here, longer ones by OpenSSL's block encoder.
    static func encode(_ from: UnsafePointer<UInt8>, _ n: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
        guard n > 0, n < Int(Int32.max) / 2 else { return 0 }
        guard n <= shortEncoding else { return Int(max(0, EVP_EncodeBlock(out, from, Int32(n)))) }
        let alphabet = Self.alphabet.utf8Start
        var i = 0, o = 0
        while i + 3 <= n {
            let v = Int(from[i]) << 16 | Int(from[i + 1]) << 8 | Int(from[i + 2])
            out[o] = alphabet[v >> 18]
            out[o + 1] = alphabet[(v >> 12) & 63]
            out[o + 2] = alphabet[(v >> 6) & 63]
            out[o + 3] = alphabet[v & 63]
            i += 3
            o += 4
        }
        if i < n {
            let two = i + 1 < n
            let v = Int(from[i]) << 16 | (two ? Int(from[i + 1]) << 8 : 0)
            out[o] = alphabet[v >> 18]
            out[o + 1] = alphabet[(v >> 12) & 63]
            out[o + 2] = two ? alphabet[(v >> 6) & 63] : UInt8(ascii: "=")
            out[o + 3] = UInt8(ascii: "=")
            o += 4
        }
        return o
    }

    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
}


extension Base64 {
    /// base64url without padding (RFC 7515 §2), as JWS segments need.
    static func encodeURL<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 4 / 3 + 3)
        for c in Base64.encode(bytes).utf8 {
            switch c {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): out.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The fuzz harness's oracle for the in-place decoder: whatever it takes, OpenSSL's block codec
/// (the permissive pass) must decode to the same bytes.
@_spi(Testing) public enum Base64Oracle {
    public static func agrees(_ input: UnsafeRawBufferPointer) -> Bool {
        guard let plain = Base64.decodePlain(input) else { return true }
        return plain == Base64.decodePermissive(input)
    }
}
