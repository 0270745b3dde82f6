// Decoding one in-app purchase record (attribute 17): plain DER read in place, into views of the
// record's bytes; BER or malformed records through the tree reading, which gives the same fields
// or the precise error. Which attributes are read, and into what, is the record's table
// (ReceiptRecordTable.swift).

extension ReceiptPayloadDecoder {
    static func inAppPurchase(_ bytes: ArraySlice<UInt8>) throws(PayloadProblem) -> InAppPurchase {
        var purchase = InAppPurchase()
        purchase.record = bytes
        // Plain DER, read in place: no slice, no closure state per attribute. As in
        // AttributeSet.fold, a value refused is thrown only once the whole shape is known good.
        var failure: PayloadProblem?
        var seen = SeenTypes()
        let lookup = InAppAttributes.lookup
        let plain = bytes.withUnsafeBufferPointer { raw in
            AttributeSet.walkRaw(raw) { type, version, start, end in
                if failure == nil {
                    do throws(PayloadProblem) {
                        try noteInApp(type, in: &seen)
                        try applyInApp(type, version, raw, start, end, lookup, to: &purchase)
                    } catch { failure = error }
                }
                return true
            }
        }
        if plain {
            if let failure { throw failure }
            purchase.isPlainDER = true
            return purchase
        }
        // BER (Xcode's receipts) or malformed: the reference reading, from a fresh record.
        purchase = InAppPurchase()
        purchase.record = bytes
        seen = SeenTypes()
        try AttributeSet.viaTree(bytes, what: "an in-app record") { (type, version, value) throws(PayloadProblem) in
            try noteInApp(type, in: &seen)
            try applyInApp(type, version, value, to: &purchase)
        }
        return purchase
    }

    /// Each in-app type may appear once in a record.
    private static func noteInApp(_ type: Int64, in seen: inout SeenTypes) throws(PayloadProblem) {
        guard seen.insert(type) else { throw .malformed("in-app attribute \(type) appears more than once") }
    }

    /// The attribute types a set has carried so far. Apple's types are 0...63 (the receipt's)
    /// and 1700...1763 (a purchase's): one bit each, so the common case hashes nothing.
    struct SeenTypes {
        private var low: UInt64 = 0
        private var inApp: UInt64 = 0
        private var others: Set<Int64> = []

        /// False when `type` was seen before.
        @inline(__always) mutating func insert(_ type: Int64) -> Bool {
            if type >= 1700, type < 1764 {   // a purchase's: the most frequent, tested first
                let bit = UInt64(1) << UInt64(type - 1700)
                defer { inApp |= bit }
                return inApp & bit == 0
            }
            return insertOther(type)
        }

        private mutating func insertOther(_ type: Int64) -> Bool {
            if type >= 0, type < 64 {
                let bit = UInt64(1) << UInt64(type)
                defer { low |= bit }
                return low & bit == 0
            }
            return others.insert(type).inserted
        }
    }

    /// The in-app attribute types the table (ReceiptRecordTable.swift) lists, which `applyInApp`
    /// reads into fields; the others are unknown attributes.
    @inline(__always) static func readsInApp(_ type: Int64) -> Bool {
        InAppAttributes.row(type) != nil
    }

    /// Reads one attribute given as a slice (the tree path, and tests) into the record's fields.
    /// The slice is normally part of `p.record`; one that is not becomes the record.
    static func applyInApp(_ type: Int64, _ version: Int64, _ value: ArraySlice<UInt8>,
                           to p: inout InAppPurchase) throws(PayloadProblem) {
        guard readsInApp(type) else { return }  // kept in `record`, as below
        if value.startIndex < p.record.startIndex || value.endIndex > p.record.endIndex { p.record = value }
        let record = p.record
        let start = value.startIndex - record.startIndex, end = value.endIndex - record.startIndex
        try record.withUnsafeBufferPointer { (raw) throws(PayloadProblem) in
            try applyInApp(type, version, raw, start, end, InAppAttributes.lookup, to: &p)
        }
    }

    /// Reads one attribute, the bytes `record[start..<end]`, into the field its table row names:
    /// numbers and dates as values, text as views of the record. A type the table does not list
    /// is left in `record` (listed by `unknownAttributes`).
    @inline(__always)
    static func applyInApp(_ type: Int64, _ version: Int64, _ record: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int,
                           _ lookup: InAppAttributes.Lookup, to p: inout InAppPurchase) throws(PayloadProblem) {
        guard let row = lookup.row(type) else { return }
        let a = lookup.rows[row]
        switch a.value {
        case .integer, .decimal: store(Optional(try integer(record, start, end, type)), at: a.offset, in: &p)
        case .flag: store(Optional(try integer(record, start, end, type) != 0), at: a.offset, in: &p)
        case .text: store(try text(record, start, end, type) as TextView, at: a.offset, in: &p)
        case .date: store(try date(record, start, end, type) as Int64?, at: a.offset, in: &p)
        }
    }

    /// Sets the stored property at `offset`, whose type the table row's key path fixed as T.
    @inline(__always) private static func store<T>(_ value: T, at offset: Int, in p: inout InAppPurchase) {
        withUnsafeMutableBytes(of: &p) { ($0.baseAddress! + offset).assumingMemoryBound(to: T.self).pointee = value }
    }

    /// The inner value of `record[start..<end]`: exactly one primitive, definite-length TLV with one
    /// of the expected tags (the same rule as `inner`, on raw memory). Returns the content's range.
    @inline(__always)
    private static func inner(_ record: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ first: UInt8, _ second: UInt8,
                              _ third: UInt8, type: Int64, _ what: String) throws(PayloadProblem) -> (start: Int, end: Int) {
        guard let h = RawTLV.header(record, start, end: end), h.end == end, h.tag & 0xE0 == 0,
              h.tag == first || h.tag == second || h.tag == third else {
            throw .malformed("attribute \(type) does not hold \(what)")
        }
        return (h.start, h.end)
    }

    /// A string attribute as a view (UTF8String, IA5String or PrintableString, valid UTF-8).
    private static func text(_ record: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ type: Int64) throws(PayloadProblem) -> TextView {
        let c = try inner(record, start, end, 0x0C, 0x16, 0x13, type: type, "a string")
        let bytes = UnsafeBufferPointer(rebasing: record[c.start..<c.end])
        guard isValidUTF8(bytes) else { throw .malformed("attribute \(type) is not valid UTF-8") }
        // A view holds 32-bit offsets; a record that large is refused rather than trapped on (the
        // config's input limit keeps every receipt far below it).
        guard c.end <= Int(Int32.max) else { throw .malformed("attribute \(type) lies more than 2 GiB into its record") }
        return TextView(start: Int32(c.start), count: Int32(c.end - c.start))
    }

    private static func integer(_ record: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ type: Int64) throws(PayloadProblem) -> Int64 {
        let c = try inner(record, start, end, 0x02, 0x02, 0x02, type: type, "an INTEGER")
        guard let n = RawTLV.int64(record, c.start, c.end) else { throw .malformed("attribute \(type) does not fit in 64 bits") }
        return n
    }

    /// An RFC 3339 IA5String; an empty string means absent.
    private static func date(_ record: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ type: Int64) throws(PayloadProblem) -> Int64? {
        let c = try inner(record, start, end, 0x16, 0x0C, 0x16, type: type, "an IA5String date")
        if c.start == c.end { return nil }
        guard let ms = RFC3339.milliseconds(UnsafeBufferPointer(rebasing: record[c.start..<c.end])) else {
            throw .malformed("attribute \(type) is not an RFC 3339 date")
        }
        return ms
    }

    private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // ASCII (every id Apple writes) needs no more; the validating initialiser only otherwise.
        !bytes.contains(where: { $0 >= 0x80 }) || String(validating: bytes, as: UTF8.self) != nil
    }
}
