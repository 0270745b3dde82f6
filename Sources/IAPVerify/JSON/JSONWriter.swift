// Writing result JSON. Input JSON is parsed by Jansson; output is appended straight into one byte
// buffer, which avoids building a Jansson tree (hundreds of allocations) for every result.

import COpenSSL

/// An append-only JSON emitter. Callers write keys and values in order; commas are automatic.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var first = true
    private var afterKey = false

    init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    private mutating func separate() {
        if afterKey { afterKey = false; return }
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); first = true }
    mutating func endObject() { bytes.append(UInt8(ascii: "}")); first = false }
    mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); first = true }
    mutating func endArray() { bytes.append(UInt8(ascii: "]")); first = false }

    /// Keys are literals, copied as raw bytes: they never need escaping.
    mutating func key(_ k: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// A key that comes from data (escaped like any string).
    mutating func key(_ k: String) {
        separate()
        appendQuoted(k)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ s: String) { separate(); appendQuoted(s) }
    mutating func string(_ s: String?) { if let s { string(s) } else { null() } }
    mutating func int(_ v: Int64) {
        separate()
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = v.magnitude
        var digits: (UInt64, UInt64) = (0, 0)  // up to 20 digits, written right to left
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            repeat {
                buf[15 - count] = UInt8(48 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0 && count < 16
            if magnitude > 0 {  // more than 16 digits: finish with the slow path
                bytes.append(contentsOf: String(magnitude).utf8)
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[(16 - count)..<16]))
        }
    }
    mutating func int(_ v: Int64?) { if let v { int(v) } else { null() } }
    mutating func bool(_ v: Bool) { separate(); bytes.append(contentsOf: (v ? "true" : "false").utf8) }
    mutating func bool(_ v: Bool?) { if let v { bool(v) } else { null() } }
    mutating func null() { separate(); bytes.append(contentsOf: "null".utf8) }

    /// A JSON string holding `raw` as standard base64 (OpenSSL's encoder, via a scratch buffer).
    mutating func base64<C: Collection>(_ raw: C) where C.Element == UInt8 {
        separate()
        bytes.append(UInt8(ascii: "\""))
        let count = raw.count
        if count > 0, count < Int(Int32.max) / 2 {
            let needed = (count + 2) / 3 * 4 + 1
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: needed) { out in
                guard let base = out.baseAddress else { return }
                let n = raw.withContiguousStorageIfAvailable { EVP_EncodeBlock(base, $0.baseAddress, Int32($0.count)) }
                    ?? Array(raw).withUnsafeBufferPointer { EVP_EncodeBlock(base, $0.baseAddress, Int32($0.count)) }
                bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: Int(max(0, n))))
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends an already-serialised JSON value verbatim.
    mutating func rawJSON(_ json: [UInt8]) { separate(); bytes.append(contentsOf: json) }

    mutating func field(_ k: StaticString, _ v: String?) { key(k); string(v) }
    /// A member written only when it has a value (fields some sources never carry).
    mutating func optional(_ k: StaticString, _ v: String?) { if let v { key(k); string(v) } }
    mutating func optional(_ k: StaticString, _ v: Int64?) { if let v { key(k); int(v) } }
    mutating func optional(_ k: StaticString, _ v: Bool?) { if let v { key(k); bool(v) } }
    mutating func field(_ k: StaticString, _ v: Int64?) { key(k); int(v) }
    mutating func field(_ k: StaticString, _ v: Bool?) { key(k); bool(v) }

    private mutating func appendQuoted(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        let clean = s.withUTF8 { utf8 -> Bool in
            // Fast path: nothing to escape, copy the bytes at once.
            for b in utf8 where b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if clean {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
