// Reading the JSON bodies Apple sends (/verifyReceipt responses, App Store Server API answers,
// JWS headers and payloads) and the entitlement input: simdjson's tape through CJSONTape.
// Parsing writes one flat tape into buffers a per-thread parser reuses, and a field is read
// only when asked for, so a big body costs one pass plus the fields the caller reads.
// A JSONDocument owns the tape; JSONValue is a borrowed view that must not outlive it.

import CJSONTape
import Glibc

/// A parsed JSON body. Owns the tape and hands its parser back on deinit.
final class JSONDocument {
    private let tape: OpaquePointer
    let root: JSONValue

    /// Parses `bytes` strictly: duplicate keys, NUL characters and integers beyond Int64 are
    /// rejected, and the top level must be an object or an array (as the config reader does).
    /// - Parameter what: names the input in error messages ("the response", "the input").
    init(bytes: UnsafeRawBufferPointer, what: String, status: StatusCode) throws(IAPVFailure) {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw IAPVFailure(status, "\(what): empty input; expected a JSON object")
        }
        var error: UnsafePointer<CChar>?
        guard let parsed = json_tape_parse(base, bytes.count, &error) else {
            throw IAPVFailure(status, "\(what): invalid JSON: \(error.map { String(cString: $0) } ?? "unreadable")")
        }
        tape = parsed
        root = JSONValue(view: json_tape_get_view(parsed), at: JSON_TAPE_ROOT)
    }

    deinit { json_tape_free(tape) }

    static func parse(_ bytes: UnsafeRawBufferPointer, what: String, status: StatusCode) -> Result<JSONDocument, IAPVFailure> {
        do {
            return .success(try JSONDocument(bytes: bytes, what: what, status: status))
        } catch {
            return .failure(error)
        }
    }
}

/// An array's elements in order, read off the tape as they are asked for.
struct JSONElements: Sequence, IteratorProtocol {
    fileprivate let view: json_tape_view
    fileprivate var position: UInt32
    fileprivate let end: UInt32
    /// The parser's count of the elements, for reserving room only (it saturates at 0xFFFFFF).
    let countHint: Int

    mutating func next() -> JSONValue? {
        guard position < end else { return nil }
        defer { position = json_tape_after(view, position) }
        return JSONValue(view: view, at: position)
    }
}

/// See `JSONValue.keyIndex`.
struct KeyIndex {
    static let crowded = UInt32.max
    var slots = InlineArray<64, UInt32>(repeating: 0)

    /// The slot's entry for `key` (see `JSONValue.member(_:indexed:)`).
    @inline(__always) func entry(_ key: StaticString) -> UInt32 {
        slots.span[Self.slot(key.utf8Start, key.utf8CodeUnitCount)]  // a borrow: no copy of the table
    }

    @inline(__always) static func slot(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        let mix = n == 0 ? 0 : n &* 7 &+ Int(p[0]) &* 3 &+ Int(p[n - 1])
        return mix & 63
    }
}

/// A borrowed value inside a `JSONDocument`: the tape and the value's index on it.
struct JSONValue {
    let view: json_tape_view
    let at: UInt32

    typealias Kind = JSONKind

    var kind: Kind {
        switch json_tape_kind(view, at) {
        case UInt32(JSON_TAPE_OBJECT): return .object
        case UInt32(JSON_TAPE_ARRAY): return .array
        case UInt32(JSON_TAPE_STRING): return .string
        case UInt32(JSON_TAPE_INT64): return .integer
        case UInt32(JSON_TAPE_DOUBLE): return .real
        case UInt32(JSON_TAPE_TRUE), UInt32(JSON_TAPE_FALSE): return .bool
        default: return .null  // the parser refuses integers beyond Int64, so no other kind occurs
        }
    }

    var typeName: String { kind.typeName }
    var isNull: Bool { kind == .null }

    /// The string's UTF-8 bytes, valid while the document lives; nil when not a string.
    var utf8: UnsafeBufferPointer<UInt8>? {
        guard json_tape_kind(view, at) == UInt32(JSON_TAPE_STRING) else { return nil }
        var n: UInt32 = 0
        let p = json_tape_string(view, at, &n)
        return UnsafeBufferPointer(start: p, count: Int(n))
    }

    var string: String? { utf8.map { String(decoding: $0, as: UTF8.self) } }

    /// True when this is the string `literal` (compared as bytes, no String made).
    func isString(_ literal: StaticString) -> Bool {
        guard let u = utf8, u.count == literal.utf8CodeUnitCount else { return false }
        return u.count == 0 || memcmp(u.baseAddress!, literal.utf8Start, u.count) == 0
    }

    var integer: Int64? { kind == .integer ? json_tape_int64(view, at) : nil }
    var bool: Bool? {
        switch json_tape_kind(view, at) {
        case UInt32(JSON_TAPE_TRUE): return true
        case UInt32(JSON_TAPE_FALSE): return false
        default: return nil
        }
    }
    var real: Double? { kind == .real ? json_tape_double(view, at) : nil }

    /// True when `other` is the same JSON as this value: the same structure, every string the
    /// same bytes (unescaped) and every number the same value on the tape, so that any reader
    /// reads the two alike. Compared word by word, stopping at the first difference.
    func sameJSON(as other: JSONValue) -> Bool {
        let end = json_tape_after(view, at)
        guard json_tape_after(other.view, other.at) &- other.at == end &- at else { return false }
        let a = view.words!, b = other.view.words!
        var i = Int(at), j = Int(other.at)
        while i < Int(end) {
            let x = a[i], y = b[j]
            guard x >> 56 == y >> 56 else { return false }
            switch UInt32(truncatingIfNeeded: x >> 56) {
            case UInt32(JSON_TAPE_STRING):
                var m: UInt32 = 0, n: UInt32 = 0
                let p = json_tape_string(view, UInt32(i), &m), q = json_tape_string(other.view, UInt32(j), &n)
                guard m == n, m == 0 || memcmp(p!, q!, Int(m)) == 0 else { return false }
            case UInt32(JSON_TAPE_INT64), UInt32(JSON_TAPE_UINT64), UInt32(JSON_TAPE_DOUBLE):
                guard a[i + 1] == b[j + 1] else { return false }   // the value's bits
                i += 1
                j += 1
            case UInt32(JSON_TAPE_OBJECT), UInt32(JSON_TAPE_ARRAY), UInt32(UInt8(ascii: "}")), UInt32(UInt8(ascii: "]")):
                // The count, and the index of the matching brace relative to this one.
                guard (x >> 32) == (y >> 32),
                      UInt32(truncatingIfNeeded: x) &- UInt32(i) == UInt32(truncatingIfNeeded: y) &- UInt32(j) else { return false }
            default:
                break   // true, false, null: the kind says it all
            }
            i += 1
            j += 1
        }
        return true
    }

    /// The array elements, or nil when this is not an array.
    var array: [JSONValue]? { elements.map(Array.init) }

    /// The array elements walked in place (no array of them made), or nil when this is not an
    /// array.
    var elements: JSONElements? {
        guard kind == .array else { return nil }
        return JSONElements(view: view, position: at + 1, end: json_tape_end(view, at), countHint: Int(json_tape_count(view, at)))
    }

    /// The object members in document order, or nil when this is not an object.
    var members: [(key: String, value: JSONValue)]? {
        guard kind == .object else { return nil }
        var out: [(key: String, value: JSONValue)] = []
        let end = json_tape_end(view, at)
        var i = at + 1
        while i < end {
            let key = JSONValue(view: view, at: i).string ?? ""
            out.append((key, JSONValue(view: view, at: i + 1)))
            i = json_tape_after(view, i + 1)
        }
        return out
    }

    /// Where an object's keys sit, by a 6-bit slot of each key (from its length and end bytes):
    /// the tape index of the only key in a slot, `KeyIndex.crowded` when two or more share it,
    /// 0 when none does. A reader that asks for thirty fields of an object with a dozen then
    /// finds each, or rules it out, with one compare instead of a scan.
    var keyIndex: KeyIndex {
        var index = KeyIndex()
        guard kind == .object else { return index }
        let end = json_tape_end(view, at)
        var i = at + 1
        while i < end {
            var n: UInt32 = 0
            let p = json_tape_string(view, i, &n)
            let slot = KeyIndex.slot(p!, Int(n))
            index.slots[slot] = index.slots[slot] == 0 ? i : KeyIndex.crowded
            i = json_tape_after(view, i + 1)
        }
        return index
    }

    /// The value of `key`, given what the object's `keyIndex` holds for it.
    func member(_ key: StaticString, indexed at: UInt32) -> JSONValue? {
        if at == 0 { return nil }
        if at == KeyIndex.crowded { return self[literal: key] }
        var n: UInt32 = 0
        let p = json_tape_string(view, at, &n)
        guard Int(n) == key.utf8CodeUnitCount, n == 0 || memcmp(p!, key.utf8Start, Int(n)) == 0 else { return nil }
        return JSONValue(view: view, at: at + 1)
    }

    /// Lookup by a literal key: no String made.
    subscript(literal key: StaticString) -> JSONValue? {
        guard kind == .object else { return nil }
        let found = json_tape_find(view, at, key.utf8Start, key.utf8CodeUnitCount)
        return found == 0 ? nil : JSONValue(view: view, at: found)
    }

    subscript(key: String) -> JSONValue? {
        guard kind == .object else { return nil }
        var key = key
        let found = key.withUTF8 { json_tape_find(view, at, $0.baseAddress, $0.count) }
        return found == 0 ? nil : JSONValue(view: view, at: found)
    }
}
