// A transaction id as the engine holds it. Apple's ids (transaction, original transaction, web
// order line item) are 16 to 19 ASCII digits: one byte past what a Swift String keeps without a
// heap allocation. An IDText keeps ASCII text of up to 23 bytes in the value itself, so a purchase
// costs no allocation and no reference counting for its ids, and the engine compares and hashes
// them as bytes; a String is made only when a caller asks for one. Other text is held as a String.

/// Text with String's equality, ordered by its bytes, kept inline when it is short ASCII.
struct IDText: Sendable {
    /// Inline: the bytes in order, zero after the text, the count in the last byte (byte 23).
    private enum Storage: Sendable {
        case inline(UInt64, UInt64, UInt64)
        case string(String)
    }

    private var storage: Storage

    static let inlineCapacity = 23

    init(_ s: String) {
        var s = s
        storage = s.withUTF8 { Self.inline($0) } ?? .string(s)
    }

    /// The empty text (no String made).
    static var empty: IDText { IDText(storage: .inline(0, 0, 0)) }

    private init(storage: Storage) { self.storage = storage }

    /// The text of valid UTF-8 bytes (read as `String(decoding:as:)` reads them).
    init(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        storage = Self.inline(bytes) ?? .string(String(decoding: bytes, as: UTF8.self))
    }

    private static func inline(_ bytes: UnsafeBufferPointer<UInt8>) -> Storage? {
        guard let key = inlineKey(utf8: bytes) else { return nil }
        return .inline(key.w0, key.w1, key.w2)
    }

    /// The key of the text `bytes` would be held inline as, without making the IDText; nil when
    /// the text is not ASCII of at most 23 bytes.
    @inline(__always) static func inlineKey(utf8 bytes: UnsafeBufferPointer<UInt8>) -> InlineKey? {
        guard bytes.count <= inlineCapacity else { return nil }
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &words) { raw in
            if let from = bytes.baseAddress { raw.baseAddress!.copyMemory(from: from, byteCount: bytes.count) }
        }
        // Only ASCII: there String's equality (canonical equivalence) and order are the bytes'.
        // (The bytes after the text are zero, so the words' high bits are the text's.)
        guard (words.0 | words.1 | words.2) & 0x8080_8080_8080_8080 == 0 else { return nil }
        withUnsafeMutableBytes(of: &words) { $0[23] = UInt8(bytes.count) }
        return InlineKey(w0: words.0, w1: words.1, w2: words.2)
    }

    var isInline: Bool {
        if case .inline = storage { return true }
        return false
    }

    /// The text as a String (made here for an inline text).
    var string: String {
        switch storage {
        case .string(let s): return s
        case .inline: return withUTF8 { String(decoding: $0, as: UTF8.self) }
        }
    }

    var isEmpty: Bool {
        switch storage {
        case .inline(_, _, let w2): return w2 >> 56 == 0
        case .string(let s): return s.isEmpty
        }
    }

    /// Calls `body` with the text's UTF-8 bytes, valid only during the call.
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch storage {
        case .inline(let w0, let w1, let w2):
            var words = (w0, w1, w2)
            return withUnsafeBytes(of: &words) { raw in
                body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: Int(w2 >> 56)))
            }
        case .string(var s):
            return s.withUTF8(body)
        }
    }

    /// An inline text's words, as a table key; nil for a text held as a String. Two inline texts
    /// are equal exactly when their keys are.
    var inlineKey: InlineKey? {
        guard case .inline(let w0, let w1, let w2) = storage else { return nil }
        return InlineKey(w0: w0, w1: w1, w2: w2)
    }

    struct InlineKey: Hashable {
        let w0, w1, w2: UInt64

        /// A hash keyed per process by `seed` (multiply-and-fold on the words): a few instructions
        /// where the standard library's hasher takes a hundred. It is not built to withstand an
        /// attacker, so every table that uses it counts its probe steps against `probeBudget` and
        /// past the budget falls back to String keys, which the standard library's hasher
        /// protects: crafted ids then cost at most the budget.
        @inline(__always) func hash(_ seed: UInt64) -> Int {
            @inline(__always) func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
                let p = a.multipliedFullWidth(by: b)
                return p.high ^ p.low
            }
            let k0: UInt64 = 0xA076_1D64_78BD_642F, k1: UInt64 = 0xE703_7ED1_A0B4_28DB, k2: UInt64 = 0x8EBC_6AF0_9C88_C6E3
            let h = fold(w0 ^ seed ^ k0, w1 ^ k1) ^ fold(w2 ^ seed ^ k2, seed ^ k1)
            return Int(truncatingIfNeeded: fold(h, k0 ^ seed))
        }

        /// The probe steps (past each lookup's first slot) a table keyed by `hash` may take in all
        /// over `lookups` lookups before it gives up on the hash: linear probing at half load takes
        /// under two a lookup on average, and chance runs of twenty and more occur in big tables,
        /// so only a total far above that (ids made to collide) trips it. (A per-lookup bound
        /// tripped by chance on honest ids, and so would a budget per distinct id: one id looked
        /// up a thousand times from a displaced slot.)
        static func probeBudget(_ lookups: Int, slack: Int = 256) -> Int { 8 * lookups + slack }

        /// Drawn once per process, from the standard library's randomly seeded hasher.
        static let seed: UInt64 = {
            var h = Hasher()
            h.combine(0x6961_7076 as UInt64)
            return UInt64(truncatingIfNeeded: h.finalize())
        }()
    }
}

/// Small integer ids for IDTexts, given in order of first sight, each with a `Value` its user
/// keeps beside it in the same list. Keyed by their
/// words in an open-addressed table while every text is inline (`InlineKey.hash`); from the
/// first text held as a String on, or once the probes exceed `InlineKey.probeBudget` (crafted
/// ids), by String (where canonically equal texts, which String equality joins, meet, and the
/// standard library's seeded hasher protects the table), every earlier text re-keyed once.
struct IDInternTable<Value> {
    /// The texts by id, and their values. While no String has taken over, every text is inline
    /// and its words are its key (read from it: no list of keys is kept beside it).
    private var entries: [(name: IDText, value: Value)] = []
    /// A new id's value.
    private let initial: Value
    /// -1 for an empty slot, else an index into `entries`; the count a power of two.
    private var slots: [Int32] = []
    private var byString: [String: Int]? = nil
    private let seed = IDText.InlineKey.seed
    /// Probe steps and lookups so far, for the budget (a lookup of an id already seen probes too).
    private var probes = 0
    private var lookups = 0
    private let slack: Int

    var count: Int { entries.count }
    func name(_ id: Int) -> IDText { entries[id].name }
    subscript(value id: Int) -> Value {
        get { entries[id].value }
        set { entries[id].value = newValue }
    }

    /// True once String keys have taken over (tests).
    var keyedByString: Bool { byString != nil }

    /// - Parameter slack: the probe budget's allowance (`InlineKey.probeBudget`); tests make it
    ///   negative to reach the String-keyed path without crafted ids.
    init(capacity: Int = 0, slack: Int = 256, initial: Value) {
        self.slack = slack
        self.initial = initial
        if capacity > 0 { entries.reserveCapacity(capacity) }
    }

    /// The id of `text`, given a new one (with the initial value) when unseen.
    mutating func id(_ text: IDText) -> Int {
        if byString == nil, let key = text.inlineKey {
            if slots.isEmpty, entries.count < 8 {
                // A few texts (most receipts' chains): compared in turn, no table built.
                for e in entries.indices where entries[e].name.inlineKey == key { return e }
                if entries.count < 7 { return add(text) }
            }
            if 2 * (entries.count + 1) > slots.count { rehash(max(16, 2 * slots.count)) }
            let mask = slots.count - 1
            var at = key.hash(seed) & mask
            lookups += 1
            let budget = IDText.InlineKey.probeBudget(lookups, slack: slack)
            while true {
                let e = Int(slots[at])
                if e < 0 {
                    slots[at] = Int32(truncatingIfNeeded: entries.count)
                    return add(text)
                }
                if entries[e].name.inlineKey == key { return e }
                probes += 1
                // This many probes: the ids were made to collide. Keyed by String from here on.
                if probes > budget { break }
                at = (at + 1) & mask
            }
        }
        if byString == nil {
            var all: [String: Int] = [:]
            for (k, entry) in entries.enumerated() { all[entry.name.string] = k }
            byString = all
        }
        let s = text.string
        if let found = byString![s] { return found }
        byString![s] = entries.count
        return add(text)
    }

    private mutating func add(_ text: IDText) -> Int {
        entries.append((text, initial))
        return entries.count - 1
    }

    private mutating func rehash(_ size: Int) {
        slots = [Int32](repeating: -1, count: size)
        // Every text is inline here: String keys, once they take over, never come back to the table.
        for e in entries.indices {
            guard let key = entries[e].name.inlineKey else { continue }
            var at = key.hash(seed) & (size - 1)
            while slots[at] >= 0 { at = (at + 1) & (size - 1) }
            slots[at] = Int32(truncatingIfNeeded: e)
        }
    }
}

extension IDInternTable where Value == Void {
    init(capacity: Int = 0, slack: Int = 256) { self.init(capacity: capacity, slack: slack, initial: ()) }
}

extension IDText: Equatable, Comparable {
    static func == (a: IDText, b: IDText) -> Bool {
        if let x = a.inlineKey, let y = b.inlineKey { return x == y }
        return a.string == b.string
    }

    /// The order of the UTF-8 bytes (a prefix first): String's order for NFC text, and a total
    /// order on all text (String's `<` is not one: a Kelvin sign equals "K" by `==` yet sorts after
    /// "K1" where "K" sorts before it). Ids equal by `==` but not byte for byte (a Kelvin sign and
    /// a K) are told apart here, so de-duplication never relies on this order.
    static func < (a: IDText, b: IDText) -> Bool {
        if let x = a.inlineKey, let y = b.inlineKey {
            // Most significant byte first, the count last: the first differing byte decides, and
            // where one text is a prefix of the other (the rest zero on both sides), the shorter.
            if x.w0 != y.w0 { return x.w0.byteSwapped < y.w0.byteSwapped }
            if x.w1 != y.w1 { return x.w1.byteSwapped < y.w1.byteSwapped }
            return x.w2.byteSwapped < y.w2.byteSwapped
        }
        return a.withUTF8 { x in b.withUTF8 { y in x.lexicographicallyPrecedes(y) } }
    }

    /// The id order (`idLess(utf8:_:)`).
    static func idLess(_ a: IDText, _ b: IDText) -> Bool {
        a.withUTF8 { x in b.withUTF8 { y in idLess(utf8: x, y) } }
    }

    /// The id order on UTF-8 bytes, the one rule every id comparison uses, and a total order:
    /// ids that are runs of digits (Apple's) first, in numeric order (by length, then bytes); any
    /// other text after them, byte by byte. (Ordering digits by length but mixed pairs by bytes
    /// was not transitive: "2" < "10" < "1a" < "2".)
    static func idLess(utf8 a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let digitsA = a.allSatisfy { $0 >= 48 && $0 <= 57 }, digitsB = b.allSatisfy { $0 >= 48 && $0 <= 57 }
        if digitsA != digitsB { return digitsA }
        if digitsA, a.count != b.count { return a.count < b.count }
        return a.lexicographicallyPrecedes(b)
    }

    /// The text's length in bytes.
    var utf8Count: Int {
        switch storage {
        case .inline(_, _, let w2): return Int(w2 >> 56)
        case .string(let s): return s.utf8.count
        }
    }
}
