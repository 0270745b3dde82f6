// Typed field access, in two flavours named at each use:
// - tolerant, for Apple's unsigned JSON bodies (/verifyReceipt) and the entitlement input, read
//   the way they really arrive: numbers as strings or numbers, booleans as true/"true"/"1"/1,
//   dates as *_ms (preferred) or "2020-11-25 08:31:02 Etc/GMT";
// - strict, for signed JWS payloads, whose types Apple fixes: a string is a JSON string, an
//   integer a JSON number (Xcode's fractional milliseconds keep their whole part), a boolean a
//   JSON boolean, and Apple's 0/1 status codes (autoRenewStatus) are read with `flag`.
// Either way a field that is present but unreadable is an error, never a silent default.

struct FieldProblem: Error {
    let message: String
}

extension JSONValue {
    /// A string, or a number written as its decimal text.
    func tolerantString() -> String? {
        switch kind {
        case .string: return string
        case .integer: return integer.map { String($0) }
        case .real: return wholeReal.map { String(Int64($0)) }
        default: return nil
        }
    }

    /// True when `tolerantString()` reads this value (no String made).
    var isTolerantString: Bool {
        switch kind {
        case .string, .integer: return true
        case .real: return wholeReal != nil
        default: return false
        }
    }

    /// A real that is a whole number small enough to be an id.
    private var wholeReal: Double? {
        guard let r = real, r.isFinite, r == r.rounded(), abs(r) < 9.0e15 else { return nil }
        return r
    }

    /// An integer from a number or a decimal string ("1437663784000").
    func tolerantInt() -> Int64? {
        switch kind {
        case .integer: return integer
        case .string:
            guard let digits = utf8 else { return nil }
            return Int64(decimal: digits)
        case .real:
            // Xcode-made values carry fractions of a millisecond: keep the whole part.
            guard let r = real, r.isFinite, abs(r) < 9.0e15 else { return nil }
            return Int64(r.rounded(.down))
        default: return nil
        }
    }

    /// A boolean from true/false, "true"/"false", 1/0 or "1"/"0".
    func tolerantBool() -> Bool? {
        switch kind {
        case .bool: return bool
        case .integer:
            guard let n = integer, n == 0 || n == 1 else { return nil }
            return n == 1
        case .string:
            // By length first: one compare instead of up to four.
            guard let u = utf8 else { return nil }
            switch u.count {
            case 1: return u[0] == UInt8(ascii: "1") ? true : u[0] == UInt8(ascii: "0") ? false : nil
            case 4: return isString("true") ? true : nil
            case 5: return isString("false") ? false : nil
            default: return nil
            }
        default: return nil
        }
    }
}

extension Int64 {
    /// The value of eight ASCII digits (the first in the lowest byte), or nil when one is not a
    /// digit: each byte's high nibble must be 3 and its low one at most 9 (adding 6 carries past
    /// 9), then pairs, fours and the eight are combined by three multiplications.
    @inline(__always) static func eightDigits(_ x: UInt64) -> Int64? {
        let high: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        guard (x & high) | (((x &+ 0x0606_0606_0606_0606) & high) >> 4) == 0x3333_3333_3333_3333 else { return nil }
        var v = x & 0x0F0F_0F0F_0F0F_0F0F
        v = (v &* 2561) >> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* 6_553_601) >> 16
        v = ((v & 0x0000_FFFF_0000_FFFF) &* 42_949_672_960_001) >> 32
        return Int64(truncatingIfNeeded: v)
    }

    /// What `Int64(String)` reads (an optional sign, then one or more ASCII digits, nil on
    /// overflow), straight from UTF-8 bytes: no String is made for a number Apple sends as text.
    init?(decimal text: UnsafeBufferPointer<UInt8>) {
        var i = 0
        var negative = false
        if let first = text.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            i = 1
        }
        guard i < text.count else { return nil }
        var value: Int64 = 0
        if text.count &- i <= 18 {
            // Up to 18 digits cannot overflow (10^18 < 2^63), so no check per digit: dates in
            // milliseconds have 13, Apple's ids 16 to 19. Eight digits at a time, then one by one.
            let raw = UnsafeRawPointer(text.baseAddress!)
            while text.count &- i >= 8 {
                guard let eight = Self.eightDigits(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))) else { return nil }
                value = value &* 100_000_000 &+ eight
                i &+= 8
            }
            while i < text.count {
                let d = text[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                value = value &* 10 &+ Int64(d)
                i &+= 1
            }
            self = negative ? 0 &- value : value
            return
        }
        while i < text.count {
            let d = text[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times10.subtractingReportingOverflow(Int64(d)) : times10.addingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            value = next
            i += 1
        }
        self = value
    }
}

/// How a FieldReader reads types: see the top of this file.
enum FieldFlavour: Sendable {
    /// Apple's unsigned JSON bodies and the entitlement input.
    case tolerant
    /// Signed JWS payloads.
    case strict
}

/// Typed field access on one JSON object, naming the field when it cannot be read.
struct FieldReader {
    let object: JSONValue
    private let decoder: FieldDecoder
    private let keys: KeyIndex

    var flavour: FieldFlavour { decoder.flavour }
    /// Where the object is, for error messages ("latest_receipt_info[3]").
    var path: String { decoder.path }

    init(_ object: JSONValue, path: String, index: Int? = nil, _ flavour: FieldFlavour) throws(FieldProblem) {
        self.object = object
        self.decoder = try FieldDecoder(object, path: path, index: index, flavour)
        self.keys = object.keyIndex
    }

    @inline(__always) private func present(_ key: StaticString) -> JSONValue? {
        // The slot read straight from the stored index, so the index itself is never copied.
        let at = keys.slots[KeyIndex.slot(key.utf8Start, key.utf8CodeUnitCount)]
        return object.member(key, indexed: at).flatMap(FieldDecoder.present)
    }

    func string(_ key: StaticString) throws(FieldProblem) -> String? {
        guard let v = present(key) else { return nil }
        return try decoder.string(v, key)
    }

    func int(_ key: StaticString) throws(FieldProblem) -> Int64? {
        guard let v = present(key) else { return nil }
        return try decoder.int(v, key)
    }

    func bool(_ key: StaticString) throws(FieldProblem) -> Bool? {
        guard let v = present(key) else { return nil }
        return try decoder.bool(v, key)
    }

    /// One of Apple's 0/1 status codes (autoRenewStatus), as a boolean. Strict: the number 0 or 1
    /// (or a JSON boolean); tolerant: as `bool`.
    func flag(_ key: StaticString) throws(FieldProblem) -> Bool? {
        guard let v = present(key) else { return nil }
        return try decoder.flag(v, key)
    }

    func stringArray(_ key: StaticString) throws(FieldProblem) -> [String]? {
        guard let v = present(key) else { return nil }
        return try decoder.stringArray(v, key)
    }

    /// A nested object, or nil when absent; an error when present but not an object.
    func object(_ key: StaticString) throws(FieldProblem) -> FieldReader? {
        guard let v = present(key) else { return nil }
        return try FieldReader(v, path: "\(path).\(key)", flavour)
    }

    /// A date: `<name>_ms` when present, else `<name>` as ms digits or "YYYY-MM-DD HH:MM:SS Etc/GMT".
    func date(_ name: StaticString, ms msKey: StaticString) throws(FieldProblem) -> Int64? {
        try decoder.date(ms: present(msKey), msKey, text: present(name), name)
    }
}

/// The typing half of a FieldReader: reads one value that is present, in a flavour, and names the
/// field (with the object's path) when it cannot. Readers that find the members themselves (the
/// record field tables) use it directly.
struct FieldDecoder {
    let flavour: FieldFlavour
    private let base: String
    private let index: Int?

    /// Where the object is, for error messages ("latest_receipt_info[3]"). Made only on error:
    /// a list of a thousand transactions builds no path strings.
    var path: String { index.map { "\(base)[\($0)]" } ?? base }

    /// Fails unless `object` is a JSON object.
    init(_ object: JSONValue, path: String, index: Int? = nil, _ flavour: FieldFlavour) throws(FieldProblem) {
        self.flavour = flavour
        self.base = path
        self.index = index
        guard object.kind == .object else { throw FieldProblem(message: "\(self.path) must be an object, got \(object.typeName)") }
    }

    /// The value as a field reads it: null and the empty string count as absent.
    @inline(__always) static func present(_ v: JSONValue) -> JSONValue? {
        if v.isNull { return nil }
        if v.utf8?.count == 0 { return nil }
        return v
    }

    func string(_ v: JSONValue, _ key: StaticString) throws(FieldProblem) -> String {
        let s = flavour == .strict ? (v.kind == .string ? v.string : nil) : v.tolerantString()
        guard let s else { throw notString(v, key) }
        return s
    }

    /// Fails where `string` fails, in the tolerant flavour, without making the String.
    func checkString(_ v: JSONValue, _ key: StaticString) throws(FieldProblem) {
        guard v.isTolerantString else { throw notString(v, key) }
    }

    private func notString(_ v: JSONValue, _ key: StaticString) -> FieldProblem {
        FieldProblem(message: "\(path).\(key) must be a string, got \(v.typeName)")
    }

    func int(_ v: JSONValue, _ key: StaticString) throws(FieldProblem) -> Int64 {
        let n = flavour == .strict && v.kind == .string ? nil : v.tolerantInt()
        guard let n else { throw FieldProblem(message: "\(path).\(key) must be an integer, got \(v.typeName)") }
        return n
    }

    func bool(_ v: JSONValue, _ key: StaticString) throws(FieldProblem) -> Bool {
        let b = flavour == .strict ? (v.kind == .bool ? v.bool : nil) : v.tolerantBool()
        guard let b else { throw FieldProblem(message: "\(path).\(key) must be a boolean, got \(v.typeName)") }
        return b
    }

    /// One of Apple's 0/1 status codes: strict, the number 0 or 1 (or a JSON boolean); tolerant, as `bool`.
    func flag(_ v: JSONValue, _ key: StaticString) throws(FieldProblem) -> Bool {
        guard flavour == .strict else { return try bool(v, key) }
        let b: Bool? = v.kind == .bool ? v.bool : v.kind == .integer ? v.integer.flatMap { $0 == 0 ? false : $0 == 1 ? true : nil } : nil
        guard let b else { throw FieldProblem(message: "\(path).\(key) must be 0 or 1, got \(v.typeName)") }
        return b
    }

    func stringArray(_ v: JSONValue, _ key: StaticString) throws(FieldProblem) -> [String] {
        guard let items = v.array else { throw FieldProblem(message: "\(path).\(key) must be an array of strings, got \(v.typeName)") }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard let s = item.string else { throw FieldProblem(message: "\(path).\(key)[\(i)] must be a string, got \(item.typeName)") }
            out.append(s)
        }
        return out
    }

    /// A date from its two members (either may be absent): `ms` wins; else the `text` member as ms
    /// digits or "YYYY-MM-DD HH:MM:SS Etc/GMT" (tolerant), or as a number of ms (strict).
    func date(ms: JSONValue?, _ msKey: StaticString, text: JSONValue?, _ name: StaticString) throws(FieldProblem) -> Int64? {
        if let ms { return try int(ms, msKey) }
        guard let v = text else { return nil }
        if flavour == .strict { return try int(v, name) }   // a signed payload's dates are numbers of ms
        if let n = v.tolerantInt() { return n }
        if let s = v.string, let ms = AppleDate.milliseconds(s) { return ms }
        throw FieldProblem(message: "\(path).\(name) is not a date Apple writes (ms, or \"YYYY-MM-DD HH:MM:SS Etc/GMT\")")
    }
}

enum AppleDate {
    /// "2020-11-25 08:31:02 Etc/GMT" (also "... GMT" or "... UTC"), or RFC 3339.
    static func milliseconds(_ s: String) -> Int64? {
        var text = s
        for zone in [" Etc/GMT", " GMT", " UTC"] where text.hasSuffix(zone) {
            text = String(text.dropLast(zone.count)).replacingSpaceWithT() + "Z"
            return RFC3339.milliseconds(Array(text.utf8))
        }
        return RFC3339.milliseconds(Array(text.utf8))
    }
}

private extension String {
    func replacingSpaceWithT() -> String {
        var bytes = Array(utf8)
        if bytes.count > 10, bytes[10] == UInt8(ascii: " ") { bytes[10] = UInt8(ascii: "T") }
        return String(decoding: bytes, as: UTF8.self)
    }
}
