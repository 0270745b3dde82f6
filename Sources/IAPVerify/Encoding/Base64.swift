// Base64 in and out, through OpenSSL's block codec. Receipts arrive as standard or URL-safe
// base64, with or without padding, often wrapped in lines; this layer normalises that first.

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

    /// What a byte is in standard base64: 1 a letter of the alphabet, 2 `=`, 0 anything else.
    private static let plainClass: [UInt8] = (0..<256).map { b -> UInt8 in
        switch UInt8(b) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"): return 1
        case UInt8(ascii: "="): return 2
        default: return 0
        }
    }

    /// The common case, decoded in place: standard base64 in one line, its length a multiple of 4,
    /// with at most two `=` at the end. Exactly what `decode` would make of it (the permissive pass
    /// would change nothing); nil sends anything else to that pass. Receipts are tens of
    /// kilobytes, and copying them byte by byte first cost more than decoding.
    static func decodePlain(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        let n = input.count
        guard n >= 4, n % 4 == 0, n < Int(Int32.max), let base = input.baseAddress else { return nil }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var padding = 0
        if bytes[n - 1] == UInt8(ascii: "=") { padding = bytes[n - 2] == UInt8(ascii: "=") ? 2 : 1 }
        let body = n - padding
        let plain = plainClass.withUnsafeBufferPointer { table -> Bool in
            var ok: UInt8 = 1
            for i in 0..<body { ok &= table[Int(bytes[i])] }
            return ok == 1
        }
        guard plain, body > 0 else { return nil }
        let out = [UInt8](unsafeUninitializedCapacity: n / 4 * 3) { o, count in
            let written = EVP_DecodeBlock(o.baseAddress, bytes, Int32(n))
            count = written >= padding ? Int(written) - padding : 0
            if written < padding { count = 0 }
        }
        // EVP_DecodeBlock refuses nothing here that the permissive pass would take; an empty
        // result means it refused, and the permissive pass gives the exact answer.
        return out.isEmpty ? nil : out
    }

    static func decode(_ input: [UInt8]) -> [UInt8]? {
        input.withUnsafeBytes { decode($0) }
    }

    /// Standard base64 with padding.
    static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let input = Array(bytes)
        if input.isEmpty { return "" }
        var out = [UInt8](repeating: 0, count: (input.count + 2) / 3 * 4 + 1)
        let n = out.withUnsafeMutableBufferPointer { o in
            input.withUnsafeBufferPointer { i in EVP_EncodeBlock(o.baseAddress, i.baseAddress, Int32(i.count)) }
        }
        return String(decoding: out.prefix(Int(max(0, n))), as: UTF8.self)
    }
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
