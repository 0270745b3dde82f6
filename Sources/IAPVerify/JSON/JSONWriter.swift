// Writing result JSON: appended straight into one growing byte buffer, which avoids building a
// tree (hundreds of allocations) for every result.

#if canImport(Glibc)
import Glibc
#endif

/// A finished JSON document in one malloc'd, NUL-terminated block (the terminator is not
/// counted). The C boundary takes the block as it is: a large result is never copied.
/// Incomplete when the writer could not get memory: the C boundary answers IAPV_E_NO_MEMORY.
package final class JSONText {
    private var base: UnsafeMutablePointer<UInt8>?
    package let count: Int
    package let isComplete: Bool

    fileprivate init(base: UnsafeMutablePointer<UInt8>?, count: Int) {
        self.base = base
        self.count = count
        self.isComplete = base != nil
    }

    deinit { free(base) }

    /// A copy as a Swift array. Swift has no way to report a failed allocation, so for an
    /// incomplete text this stops the process, as Swift's own allocations do.
    package var bytes: [UInt8] {
        guard isComplete else { JSONWriter.outOfMemory() }
        return Array(UnsafeBufferPointer(start: base, count: count))
    }

    /// Hands the block to the caller, who frees it with `free`; the text is empty afterwards.
    package func take() -> UnsafeMutablePointer<CChar>? {
        defer { base = nil }
        return UnsafeMutableRawPointer(base)?.assumingMemoryBound(to: CChar.self)
    }
}

/// An append-only JSON emitter into one growing buffer. Callers write keys and values in order;
/// commas are automatic. Not copyable: the writer owns its block (malloc'd, so that a finished
/// document goes to C without a copy) and frees it unless `finish` hands it on; its cursor and
/// capacity are plain fields (no object to allocate, no reference counting per byte written).
/// A failed malloc or realloc never stops the process: the writer drops everything from then on
/// and `finish` gives an incomplete text, which the C boundary answers with IAPV_E_NO_MEMORY.
struct JSONWriter: ~Copyable {
    private var block: UnsafeMutablePointer<UInt8>?
    private var count = 0
    /// 0 once an allocation failed: every later write then finds no room and is dropped.
    private var capacity: Int
    private var failed = false
    private var first = true
    private var afterKey = false

    /// Where bytes go. Only used after `reserve` said there is room, so there is a block.
    @inline(__always) private var base: UnsafeMutablePointer<UInt8> { block.unsafelyUnwrapped }

    init(capacity: Int = 1024) {
        self.capacity = max(capacity, 64)
        block = malloc(self.capacity)?.assumingMemoryBound(to: UInt8.self)
        if block == nil { fail() }
    }

    deinit { free(block) }

    static func outOfMemory() -> Never { fatalError("out of memory for result JSON") }

    /// The JSON written so far (for Swift callers: an incomplete document stops the process, as
    /// Swift's own allocations do).
    var bytes: [UInt8] {
        if failed { Self.outOfMemory() }
        return Array(UnsafeBufferPointer(start: block, count: count))
    }

    /// The document, handed over without a copy. The writer must not be used afterwards.
    consuming func finish() -> JSONText {
        put(0)
        if failed {
            free(block)
            discard self
            return JSONText(base: nil, count: 0)
        }
        let text = JSONText(base: block, count: count - 1)
        discard self   // the block now belongs to the text
        return text
    }

    /// Room for `n` more bytes: the buffer at least doubles, so appends stay amortised O(1).
    /// False when there is none (an allocation failed): the caller writes nothing.
    @inline(__always) private mutating func reserve(_ n: Int) -> Bool {
        capacity - count >= n || grow(n)
    }

    private mutating func grow(_ n: Int) -> Bool {
        if failed { return false }
        let newCapacity = max(capacity * 2, count + n)
        guard let bigger = realloc(block, newCapacity) else {
            fail()   // the old block stays allocated until deinit or finish frees it
            return false
        }
        block = bigger.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
        return true
    }

    private mutating func fail() {
        failed = true
        capacity = 0
        count = 0
    }

    /// Copies `n` bytes. Keys and ids are short, and a call into memmove cost more than the copy:
    /// up to 32 bytes move as overlapping 8-byte words.
    @inline(__always) private static func copy(_ to: UnsafeMutablePointer<UInt8>, _ from: UnsafePointer<UInt8>, _ n: Int) {
        let src = UnsafeRawPointer(from), dst = UnsafeMutableRawPointer(to)
        if n >= 8, n <= 32 {
            let head = src.loadUnaligned(as: UInt64.self), tail = src.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            if n > 16 {
                let second = src.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                let third = src.loadUnaligned(fromByteOffset: n - 16, as: UInt64.self)
                dst.storeBytes(of: second, toByteOffset: 8, as: UInt64.self)
                dst.storeBytes(of: third, toByteOffset: n - 16, as: UInt64.self)
            }
            dst.storeBytes(of: head, as: UInt64.self)
            dst.storeBytes(of: tail, toByteOffset: n - 8, as: UInt64.self)
        } else if n < 8 {
            for i in 0..<n { to[i] = from[i] }
        } else {
            to.update(from: from, count: n)
        }
    }

    @inline(__always) private mutating func put(_ b: UInt8) {
        guard reserve(1) else { return }
        base[count] = b
        count += 1
    }

    private mutating func put(_ p: UnsafeRawBufferPointer) {
        guard let src = p.baseAddress, p.count > 0 else { return }
        guard reserve(p.count) else { return }
        UnsafeMutableRawPointer(base + count).copyMemory(from: src, byteCount: p.count)
        count += p.count
    }

    private mutating func put(_ p: UnsafeBufferPointer<UInt8>) { put(UnsafeRawBufferPointer(p)) }

    /// Literals are short: copied inline, not through a call into memmove.
    @inline(__always) private mutating func put(_ literal: StaticString) {
        let n = literal.utf8CodeUnitCount
        guard reserve(n) else { return }
        Self.copy(base + count, literal.utf8Start, n)
        count += n
    }

    @inline(__always) private mutating func separate() {
        if afterKey { afterKey = false; return }
        if !first { put(UInt8(ascii: ",")) }
        first = false
    }

    mutating func beginObject() { separate(); put(UInt8(ascii: "{")); first = true }
    mutating func endObject() { put(UInt8(ascii: "}")); first = false }
    mutating func beginArray() { separate(); put(UInt8(ascii: "[")); first = true }
    mutating func endArray() { put(UInt8(ascii: "]")); first = false }

    /// Keys are literals, copied as raw bytes: they never need escaping. Inlined: the call cost
    /// about as much as the copy.
    @inline(__always) mutating func key(_ k: StaticString) {
        let n = k.utf8CodeUnitCount
        guard reserve(n + 4) else { return }   // the separator too: one check for the whole key
        if afterKey {
            afterKey = false
        } else {
            if !first { base[count] = UInt8(ascii: ","); count += 1 }
            first = false
        }
        base[count] = UInt8(ascii: "\"")
        Self.copy(base + count + 1, k.utf8Start, n)
        base[count + n + 1] = UInt8(ascii: "\"")
        base[count + n + 2] = UInt8(ascii: ":")
        count += n + 3
        afterKey = true
    }

    /// A key that comes from data (escaped like any string). Named apart from `key(_:)`, so that a
    /// literal key is never taken for a String and scanned for escapes.
    mutating func key(text k: String) {
        separate()
        appendQuoted(k)
        put(UInt8(ascii: ":"))
        afterKey = true
    }

    // The small writers below are inlined into their callers: a result writes about a hundred
    // members, and a call per member and per value cost as much as the bytes.
    @inline(__always) mutating func string(_ s: String) { separate(); appendQuoted(s) }
    @inline(__always) mutating func string(_ s: String?) { if let s { string(s) } else { null() } }

    /// A string given as UTF-8 bytes (escaped like any string).
    @inline(__always) mutating func string(utf8 bytes: UnsafeBufferPointer<UInt8>) { separate(); appendQuoted(bytes) }

    @inline(__always) mutating func int(_ v: Int64) {
        separate()
        digits(v)
    }

    /// An integer's digits, with no separator.
    private mutating func digits(_ v: Int64) {
        guard reserve(20) else { return }
        if v >= 0, v < 10 {   // versions, quantities, flags: most integers a result holds
            base[count] = UInt8(truncatingIfNeeded: 48 + v)
            count += 1
            return
        }
        if v < 0 { base[count] = UInt8(ascii: "-"); count += 1 }
        var magnitude = v.magnitude
        // The digit count from the bit length (log10 2 ≈ 1233/4096) and one compare with a power of
        // ten: a loop of compares cost 13 rounds for a date in milliseconds. At most 2^63: 19 digits.
        let estimate = ((64 - magnitude.leadingZeroBitCount) &* 1233) >> 12
        let digits = max(1, estimate + (magnitude >= Self.powersOfTen[estimate] ? 1 : 0))
        // Two digits per division (dates in milliseconds have 13), from the right.
        let pairs = Self.digitPairs.utf8Start
        // Wrapping arithmetic: none of it can overflow (at most 19 digits), and the checks were a
        // good part of the loop.
        var at = count &+ digits
        while magnitude >= 100 {
            let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
            magnitude /= 100
            at &-= 2
            base[at] = pairs[pair]
            base[at &+ 1] = pairs[pair &+ 1]
        }
        if magnitude >= 10 {
            let pair = Int(truncatingIfNeeded: magnitude) &* 2
            base[at &- 2] = pairs[pair]
            base[at &- 1] = pairs[pair &+ 1]
        } else {
            base[at &- 1] = UInt8(truncatingIfNeeded: 48 &+ magnitude)
        }
        count &+= digits
    }

    /// A number as a JSON string of its decimal digits (ids Apple signs as INTEGERs).
    mutating func decimalString(_ v: Int64) {
        separate()
        put(UInt8(ascii: "\""))
        afterKey = true   // the digits follow the quote with no separator
        int(v)
        put(UInt8(ascii: "\""))
    }

    /// 10^0 ... 10^19.
    private static let powersOfTen: [UInt64] = (0..<20).map { n in (0..<n).reduce(UInt64(1)) { p, _ in p &* 10 } }

    /// "00" to "99", two bytes each.
    private static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    @inline(__always) mutating func int(_ v: Int64?) { if let v { int(v) } else { null() } }
    @inline(__always) mutating func bool(_ v: Bool) { separate(); put(v ? "true" : "false") }
    @inline(__always) mutating func bool(_ v: Bool?) { if let v { bool(v) } else { null() } }
    @inline(__always) mutating func null() { separate(); put("null") }

    /// A JSON string holding `raw` as standard base64.
    mutating func base64<C: Collection>(_ raw: C) where C.Element == UInt8 {
        separate()
        put(UInt8(ascii: "\""))
        let done: Void? = raw.withContiguousStorageIfAvailable { base64Digits($0) }
        if done == nil { Array(raw).withUnsafeBufferPointer { base64Digits($0) } }
        put(UInt8(ascii: "\""))
    }

    /// `raw` as standard base64 without quotes (Base64.encode, straight into the buffer);
    /// nothing for an empty value or one too long for the encoder.
    private mutating func base64Digits(_ raw: UnsafeBufferPointer<UInt8>) {
        guard let from = raw.baseAddress, raw.count > 0 else { return }
        guard reserve(Base64.encodedCapacity(raw.count)) else { return }
        count += Base64.encode(from, raw.count, into: base + count)
    }

    /// `{"type":T,"version":V,"value_base64":"…"}`: an attribute a receipt carries that the library
    /// does not read, the object a result repeats most (seven a purchase in most receipts), written
    /// as three literal pieces and its values.
    mutating func attribute(type: Int64, version: Int64, value: UnsafeBufferPointer<UInt8>) {
        separate()
        put(#"{"type":"#)
        digits(type)
        put(#","version":"#)
        digits(version)
        put(#","value_base64":""#)
        base64Digits(value)
        put(#""}"#)
        first = false
    }

    /// Appends an already-serialised JSON value verbatim.
    mutating func rawJSON(_ json: [UInt8]) { separate(); json.withUnsafeBytes { put($0) } }

    @inline(__always) mutating func field(_ k: StaticString, _ v: String?) { key(k); string(v) }
    /// A member written only when it has a value (fields some sources never carry).
    mutating func optional(_ k: StaticString, _ v: String?) { if let v { key(k); string(v) } }
    mutating func optional(_ k: StaticString, _ v: Int64?) { if let v { key(k); int(v) } }
    mutating func optional(_ k: StaticString, _ v: Bool?) { if let v { key(k); bool(v) } }
    @inline(__always) mutating func field(_ k: StaticString, _ v: Int64?) { key(k); int(v) }
    mutating func field(_ k: StaticString, _ list: [String]) {
        key(k)
        beginArray()
        for s in list { string(s) }
        endArray()
    }
    @inline(__always) mutating func field(_ k: StaticString, _ v: Bool?) { key(k); bool(v) }

    @inline(__always) private mutating func appendQuoted(_ s: String) {
        // Native strings are contiguous: read in place (a mutable copy for withUTF8 cost a retain).
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { appendQuoted($0) }
        if done == nil {
            var s = s
            s.withUTF8 { appendQuoted($0) }
        }
    }

    /// False when none of the eight bytes in `x` is below 0x20, a quote, a backslash or DEL.
    /// (Each test is exact for "some byte": a borrow reaches a higher byte only from a byte that
    /// already matched.) True sends the step to the byte loop, which decides.
    @inline(__always) static func mayNeedEscape(_ x: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        // (v - n) & ~v & high is not 0 exactly when some byte of v is below n. XOR with a byte below
        // 0x80 keeps each byte's high bit, so the four tests share one `& ~x & high` (AND
        // distributes over OR).
        let borrows = (x &- ones &* 0x20) | ((x ^ (ones &* 0x22)) &- ones) | ((x ^ (ones &* 0x5C)) &- ones)
            | ((x ^ (ones &* 0x7F)) &- ones)
        return borrows & ~x & high != 0
    }

    private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        // Fast path: nothing to escape, copy the bytes at once with both quotes.
        var plain = true
        if let p = utf8.baseAddress {
            // Eight bytes a step; the last step overlaps the one before it (bytes already found
            // plain stay plain), so only a text shorter than eight bytes is read one at a time.
            let n = utf8.count, raw = UnsafeRawPointer(p)
            if n >= 8 {
                var i = 0
                while i + 8 < n {
                    if Self.mayNeedEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { plain = false; break }
                    i += 8
                }
                if plain { plain = !Self.mayNeedEscape(raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)) }
            } else if n > 0 {
                // Shorter than a word (most enum values and codes): its bytes gathered into one
                // word by overlapping loads (none past the text), the rest 'a', which never needs
                // escaping, then the same one test instead of four compares a byte.
                let word: UInt64
                if n >= 4 {
                    word = UInt64(raw.loadUnaligned(as: UInt32.self)) | UInt64(raw.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)) << 32
                } else if n >= 2 {
                    word = UInt64(raw.loadUnaligned(as: UInt16.self)) | UInt64(raw.loadUnaligned(fromByteOffset: n - 2, as: UInt16.self)) << 16
                        | 0x6161_6161_0000_0000
                } else {
                    word = UInt64(p[0]) | 0x6161_6161_6161_6100
                }
                plain = !Self.mayNeedEscape(word)
            }
        }
        if plain {
            let n = utf8.count
            guard reserve(n + 2) else { return }
            base[count] = UInt8(ascii: "\"")
            if let from = utf8.baseAddress, n > 0 { Self.copy(base + count + 1, from, n) }
            base[count + n + 1] = UInt8(ascii: "\"")
            count += n + 2
            return
        }
        put(UInt8(ascii: "\""))
        let hex: StaticString = "0123456789abcdef"
        for b in utf8 {
            switch b {
            case UInt8(ascii: "\""): put("\\\"")
            case UInt8(ascii: "\\"): put("\\\\")
            case 0x0A: put("\\n")
            case 0x0D: put("\\r")
            case 0x09: put("\\t")
            case 0..<0x20, 0x7F:
                put("\\u00")
                put(hex.utf8Start[Int(b >> 4)])
                put(hex.utf8Start[Int(b & 0xF)])
            default: put(b)
            }
        }
        put(UInt8(ascii: "\""))
    }
}
