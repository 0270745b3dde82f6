// Writing result JSON. Input JSON is parsed by Jansson; output is appended straight into one byte
// buffer, which avoids building a Jansson tree (hundreds of allocations) for every result.

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

    mutating func key(_ k: String) {
        separate()
        appendQuoted(k)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ s: String) { separate(); appendQuoted(s) }
    mutating func string(_ s: String?) { if let s { string(s) } else { null() } }
    mutating func int(_ v: Int64) { separate(); bytes.append(contentsOf: String(v).utf8) }
    mutating func int(_ v: Int64?) { if let v { int(v) } else { null() } }
    mutating func bool(_ v: Bool) { separate(); bytes.append(contentsOf: (v ? "true" : "false").utf8) }
    mutating func bool(_ v: Bool?) { if let v { bool(v) } else { null() } }
    mutating func null() { separate(); bytes.append(contentsOf: "null".utf8) }

    /// Appends an already-serialised JSON value verbatim.
    mutating func rawJSON(_ json: [UInt8]) { separate(); bytes.append(contentsOf: json) }

    mutating func field(_ k: String, _ v: String?) { key(k); string(v) }
    mutating func field(_ k: String, _ v: Int64?) { key(k); int(v) }
    mutating func field(_ k: String, _ v: Bool?) { key(k); bool(v) }

    private mutating func appendQuoted(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
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
