// The receipt payload: a SET of (type, version, value) attributes (see docs/receipts.md).
// Decoding is strict about shape (a malformed payload is never half-read) and keeps what it
// does not know under `unknownAttributes`.

/// An attribute the decoder does not interpret, kept verbatim.
public struct UnknownAttribute: Sendable, Equatable {
    public var type: Int64
    public var version: Int64
    /// A slice of the payload bytes (no copy per attribute).
    public var value: ArraySlice<UInt8>
}

/// One in-app purchase record (attribute 17), as views of the signed bytes: ids and product ids
/// stay byte ranges of the payload from decoding to the result JSON, and a `String` is made only
/// when a Swift caller asks for one.
public struct InAppPurchase: Sendable, Equatable {
    public var quantity: Int64?
    public var productID: String? { text(productIDText) }
    public var transactionID: String? { text(transactionIDText) }
    public var originalTransactionID: String? { text(originalTransactionIDText) }
    public var purchaseDateMs: Int64?
    public var originalPurchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    public var cancellationDateMs: Int64?
    /// Apple signs it as an INTEGER; given as its decimal text, like every other source's.
    public var webOrderLineItemID: String? { webOrderLineItem.map { String($0) } }
    public var isTrialPeriod: Bool?
    public var isInIntroOfferPeriod: Bool?
    public var promotionalOfferID: String? { text(promotionalOfferIDText) }
    /// Undocumented attribute 1707.
    public var productType: Int64?

    var productIDText = TextView()
    var transactionIDText = TextView()
    var originalTransactionIDText = TextView()
    var promotionalOfferIDText = TextView()
    var webOrderLineItem: Int64?
    /// The record as signed: the views above point into it, and the attributes the decoder does
    /// not read are taken from it when asked for.
    var record: ArraySlice<UInt8> = []
    /// The record is plain DER (every receipt Apple signs), so a walk in place reads it whole.
    var isPlainDER = false

    /// A view's text (valid UTF-8: the decoder checked it).
    func text(_ view: TextView) -> String? {
        withText(view) { String(decoding: $0, as: UTF8.self) }
    }

    /// A view's bytes, without a copy; nil when the record has no such attribute.
    func withText<R>(_ view: TextView, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard view.isPresent, Int(view.start) + Int(view.count) <= record.count else { return nil }
        return record.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[Int(view.start)..<(Int(view.start) + Int(view.count))]))
        }
    }

    /// The attributes the decoder does not read into fields, in payload order.
    public var unknownAttributes: [UnknownAttribute] {
        var list: [UnknownAttribute] = []
        forEachUnknownAttribute { list.append($0) }
        return list
    }

    /// The same, one at a time and without building a list.
    func forEachUnknownAttribute(_ body: (UnknownAttribute) -> Void) {
        let record = record
        // The record was decoded once already, so neither reading can fail here. Plain DER is
        // walked in place; BER goes through the tree, as it was decoded.
        if isPlainDER {
            _ = record.withUnsafeBufferPointer { raw in
                AttributeSet.walkRaw(raw) { type, version, start, end in
                    if !ReceiptPayloadDecoder.readsInApp(type) {
                        let base = record.startIndex
                        body(UnknownAttribute(type: type, version: version, value: record[(base + start)..<(base + end)]))
                    }
                    return true
                }
            }
            return
        }
        try? AttributeSet.viaTree(record, what: "an in-app record") { (type, version, value) throws(PayloadProblem) in
            if !ReceiptPayloadDecoder.readsInApp(type) { body(UnknownAttribute(type: type, version: version, value: value)) }
        }
    }
}

/// The decoded app receipt payload.
public struct ReceiptPayload: Sendable, Equatable {
    public var receiptType: String?
    public var appItemID: String?
    public var bundleID: String?
    /// The UTF8String content bytes of attribute 2, compared exactly with the config.
    public var bundleIDBytes: [UInt8]?
    /// The whole DER value of attribute 2 (tag, length, content): it feeds the device hash.
    public var bundleIDValue: [UInt8]?
    public var appVersion: String?
    public var opaqueValue: [UInt8]?
    public var sha1Hash: [UInt8]?
    /// Undocumented attribute 8; never the creation date.
    public var attribute8DateMs: Int64?
    public var creationDateMs: Int64?
    public var downloadID: String?
    public var versionExternalIdentifier: String?
    public var originalPurchaseDateMs: Int64?
    public var originalAppVersion: String?
    public var expirationDateMs: Int64?
    public var inApp: [InAppPurchase] = []
    public var unknownAttributes: [UnknownAttribute] = []

    public init() {}
}

/// Limits that keep hostile payloads bounded.
package enum PayloadLimits {
    /// At most this many in-app records; real receipts stay far below.
    public static let maxInAppCount = 100_000
}

enum PayloadProblem: Error {
    case malformed(String)
}

enum ReceiptPayloadDecoder {
    /// Decodes the payload bytes (the signed content).
    static func decode(_ bytes: ArraySlice<UInt8>) throws(PayloadProblem) -> ReceiptPayload {
        // Room for every purchase at once (one header walk): the list is the largest per call.
        let records = min(AttributeSet.count(17, in: bytes) ?? 0, PayloadLimits.maxInAppCount)
        let start = { () -> (receipt: ReceiptPayload, seen: SeenTypes) in
            var receipt = ReceiptPayload()
            receipt.inApp.reserveCapacity(records)
            return (receipt, SeenTypes())
        }
        return try AttributeSet.fold(bytes, what: "the payload", from: start) { (state, type, version, value) throws(PayloadProblem) in
            try apply(type, version, value, to: &state.receipt, seen: &state.seen)
        }.receipt
    }

    /// What an untrusted payload may be read for before checks 5–7 pass: the
    /// receipt type (which picks the anchors) and the creation date (the validation time).
    /// Walks the top-level attributes without decoding in-app records, so a forged payload of
    /// many purchases costs a header walk, not a decode.
    static func header(_ bytes: ArraySlice<UInt8>) throws(PayloadProblem) -> ReceiptPayload {
        var receipt = ReceiptPayload()
        var seenType = false, seenCreation = false
        let visit = { (type: Int64, value: ArraySlice<UInt8>) throws(PayloadProblem) in
            switch type {
            case 0:
                guard !seenType else { throw .malformed("attribute 0 appears more than once") }
                seenType = true
                receipt.receiptType = try string(value, type)
            case 12:
                guard !seenCreation else { throw .malformed("attribute 12 appears more than once") }
                seenCreation = true
                receipt.creationDateMs = try date(value, type)
            default:
                break
            }
        }
        if let found = AttributeSet.find(0, 12, in: bytes) {
            for a in found { try visit(a.type, a.value) }
            return receipt
        }
        try AttributeSet.viaTree(bytes, what: "the payload") { (type, _, value) throws(PayloadProblem) in
            try visit(type, value)
        }
        return receipt
    }

    private static func apply(_ type: Int64, _ version: Int64, _ value: ArraySlice<UInt8>, to receipt: inout ReceiptPayload,
                              seen: inout SeenTypes) throws(PayloadProblem) {
            if type != 17 {
                guard seen.insert(type) else {
                    throw .malformed("attribute \(type) appears more than once")
                }
            }
            switch type {
            case 0: receipt.receiptType = try string(value, type)
            case 1: receipt.appItemID = try integerString(value, type)
            case 2:
                let (text, content) = try utf8Strict(value, type)
                receipt.bundleID = text
                receipt.bundleIDBytes = content
                receipt.bundleIDValue = Array(value)
            case 3: receipt.appVersion = try string(value, type)
            case 4: receipt.opaqueValue = Array(value)
            case 5: receipt.sha1Hash = Array(value)
            case 8: receipt.attribute8DateMs = try date(value, type)
            case 12: receipt.creationDateMs = try date(value, type)
            case 15: receipt.downloadID = try integerString(value, type)
            case 16: receipt.versionExternalIdentifier = try integerString(value, type)
            case 17:
                guard receipt.inApp.count < PayloadLimits.maxInAppCount else {
                    throw .malformed("the payload holds more than \(PayloadLimits.maxInAppCount) in-app records")
                }
                receipt.inApp.append(try inAppPurchase(value))
            case 18: receipt.originalPurchaseDateMs = try date(value, type)
            case 19: receipt.originalAppVersion = try string(value, type)
            case 21: receipt.expirationDateMs = try date(value, type)
            default:
                receipt.unknownAttributes.append(UnknownAttribute(type: type, version: version, value: value))
            }
    }

    private static func inAppPurchase(_ bytes: ArraySlice<UInt8>) throws(PayloadProblem) -> InAppPurchase {
        var purchase = InAppPurchase()
        purchase.record = bytes
        // Plain DER, read in place: no slice, no closure state per attribute. As in
        // AttributeSet.fold, a value refused is thrown only once the whole shape is known good.
        var failure: PayloadProblem?
        var seen = SeenTypes()
        let plain = bytes.withUnsafeBufferPointer { raw in
            AttributeSet.walkRaw(raw) { type, version, start, end in
                if failure == nil {
                    do throws(PayloadProblem) {
                        try noteInApp(type, in: &seen)
                        try applyInApp(type, version, raw, start, end, to: &purchase)
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

    /// The in-app attribute types `applyInApp` reads into fields; the others are unknown
    /// attributes (a test checks the two agree for every type around Apple's range).
    static func readsInApp(_ type: Int64) -> Bool {
        switch type {
        case 1701...1708, 1711, 1712, 1713, 1719, 1721: return true
        default: return false
        }
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
            try applyInApp(type, version, raw, start, end, to: &p)
        }
    }

    /// Reads one attribute, the bytes `record[start..<end]`, into the record's fields: numbers and
    /// dates as values, text as views of the record.
    static func applyInApp(_ type: Int64, _ version: Int64, _ record: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int,
                           to p: inout InAppPurchase) throws(PayloadProblem) {
        switch type {
        case 1701: p.quantity = try integer(record, start, end, type)
        case 1702: p.productIDText = try text(record, start, end, type)
        case 1703: p.transactionIDText = try text(record, start, end, type)
        case 1704: p.purchaseDateMs = try date(record, start, end, type)
        case 1705: p.originalTransactionIDText = try text(record, start, end, type)
        case 1706: p.originalPurchaseDateMs = try date(record, start, end, type)
        case 1707: p.productType = try integer(record, start, end, type)
        case 1708: p.expiresDateMs = try date(record, start, end, type)
        case 1711: p.webOrderLineItem = try integer(record, start, end, type)
        case 1712: p.cancellationDateMs = try date(record, start, end, type)
        case 1713: p.isTrialPeriod = try integer(record, start, end, type) != 0
        case 1719: p.isInIntroOfferPeriod = try integer(record, start, end, type) != 0
        case 1721: p.promotionalOfferIDText = try text(record, start, end, type)
        default: break  // kept in `record`, listed by `unknownAttributes`
        }
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

    /// A two's-complement INTEGER that fits in 64 bits.
    static func int64(_ node: BERNode) -> Int64? {
        guard node.identifier == .integer, case .primitive(let bytes) = node.content else { return nil }
        return int64(bytes)
    }

    static func int64(_ bytes: ArraySlice<UInt8>) -> Int64? {
        guard let first = bytes.first else { return nil }
        var body = bytes
        // A leading 0x00 before a byte with the top bit set is part of a positive 8-byte value.
        if body.count == 9, first == 0, let second = body.dropFirst().first, second & 0x80 != 0 {
            body = body.dropFirst()
            var v: UInt64 = 0
            for b in body { v = v << 8 | UInt64(b) }
            return v <= UInt64(Int64.max) ? Int64(v) : nil
        }
        guard body.count <= 8 else { return nil }
        var v: Int64 = first & 0x80 != 0 ? -1 : 0
        for b in body { v = v << 8 | Int64(b) }
        return v
    }

    /// The inner value: exactly one primitive, definite-length TLV with one of the expected tags.
    /// These values are tiny leaves (a string, a date, an INTEGER), so they are read directly
    /// instead of building a node tree per attribute, which dominated decoding time.
    private static func inner(_ value: ArraySlice<UInt8>, _ tags: UInt8..., type: Int64, _ what: String)
        throws(PayloadProblem) -> ArraySlice<UInt8> {
        guard let (tag, content) = primitiveTLV(value), tags.contains(tag) else {
            throw .malformed("attribute \(type) does not hold \(what)")
        }
        return content
    }

    /// Splits one universal, primitive TLV with a definite length that covers the rest exactly.
    static func primitiveTLV(_ bytes: ArraySlice<UInt8>) -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        var i = bytes.startIndex
        guard i < bytes.endIndex else { return nil }
        let tag = bytes[i]
        guard tag & 0xE0 == 0, tag & 0x1F != 0x1F else { return nil }  // universal, primitive, short tag
        i += 1
        guard i < bytes.endIndex else { return nil }
        let first = bytes[i]
        i += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let n = Int(first & 0x7F)
            guard n >= 1, n <= 4, bytes.endIndex - i >= n else { return nil }  // no indefinite form here
            for _ in 0..<n {
                length = length << 8 | Int(bytes[i])
                i += 1
            }
        }
        guard bytes.endIndex - i == length else { return nil }
        return (tag, bytes[i...])
    }

    private static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { p in
            // ASCII (every id and date Apple writes) is valid as it is; the generic validating
            // initialiser costs more than the string itself for these short values.
            if !p.contains(where: { $0 >= 0x80 }) { return String(decoding: p, as: UTF8.self) }
            return String(validating: p, as: UTF8.self)
        }
    }

    /// Attribute 2 must be a UTF8String (check 9).
    private static func utf8Strict(_ value: ArraySlice<UInt8>, _ type: Int64) throws(PayloadProblem) -> (String, [UInt8]) {
        let content = try inner(value, 0x0C, type: type, "a UTF8String")
        guard let s = validUTF8(content) else { throw .malformed("attribute \(type) is not valid UTF-8") }
        return (s, Array(content))
    }

    private static func string(_ value: ArraySlice<UInt8>, _ type: Int64) throws(PayloadProblem) -> String {
        let content = try inner(value, 0x0C, 0x16, 0x13, type: type, "a string")
        guard let s = validUTF8(content) else { throw .malformed("attribute \(type) is not valid UTF-8") }
        return s
    }

    private static func integer(_ value: ArraySlice<UInt8>, _ type: Int64) throws(PayloadProblem) -> Int64 {
        let content = try inner(value, 0x02, type: type, "an INTEGER")
        guard let n = int64(content) else { throw .malformed("attribute \(type) does not fit in 64 bits") }
        return n
    }

    private static func integerString(_ value: ArraySlice<UInt8>, _ type: Int64) throws(PayloadProblem) -> String {
        String(try integer(value, type))
    }

    private static func flag(_ value: ArraySlice<UInt8>, _ type: Int64) throws(PayloadProblem) -> Bool {
        try integer(value, type) != 0
    }

    /// An RFC 3339 IA5String; an empty string means absent.
    private static func date(_ value: ArraySlice<UInt8>, _ type: Int64) throws(PayloadProblem) -> Int64? {
        let content = try inner(value, 0x16, 0x0C, type: type, "an IA5String date")
        if content.isEmpty { return nil }
        guard let ms = RFC3339.milliseconds(content) else {
            throw .malformed("attribute \(type) is not an RFC 3339 date")
        }
        return ms
    }
}

/// Walks a `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
///
/// Receipts hold thousands of these small attributes, and building a node tree for
/// each in-app record dominated verification time (about 120k instructions per record). So the
/// common case, definite-length encoding, is read by a direct walk over TLV headers; anything
/// else (BER indefinite lengths from Xcode, or malformed input) goes through BERTree's BER
/// parser, which gives the same attributes or the precise error. A test decodes every fixture
/// both ways and compares.
enum AttributeSet {
    /// Folds `body` over the attributes in order, from the state `initial` makes. One walk reads
    /// the common encoding; when the bytes turn out not to be plain DER halfway, whatever the walk
    /// applied is dropped and BERTree's reading starts again from a fresh state, so a state
    /// is never half-applied. A value `body` refuses is thrown only once the whole shape is known
    /// good. (A maker, not a value: a state held twice would be copied on its first change.)
    static func fold<State>(_ bytes: ArraySlice<UInt8>, what: String, from initial: () -> State,
                            _ body: (inout State, Int64, Int64, ArraySlice<UInt8>) throws(PayloadProblem) -> Void)
        throws(PayloadProblem) -> State {
        var state = initial()
        var failure: PayloadProblem?
        let plain = walk(bytes) { type, version, value in
            if failure == nil {
                do throws(PayloadProblem) { try body(&state, type, version, value) } catch { failure = error }
            }
            return true
        }
        if plain {
            if let failure { throw failure }
            return state
        }
        state = initial()
        try viaTree(bytes, what: what) { (type, version, value) throws(PayloadProblem) in
            try body(&state, type, version, value)
        }
        return state
    }

    struct Attribute {
        var type: Int64
        var version: Int64
        var value: ArraySlice<UInt8>
    }

    /// Every attribute, by the direct walk; nil when the bytes are not plain definite-length TLVs
    /// of that shape.
    static func direct(_ bytes: ArraySlice<UInt8>) -> [Attribute]? {
        var out: [Attribute] = []
        out.reserveCapacity(bytes.count / 12)  // an attribute takes at least 11 bytes
        guard walk(bytes, { out.append(Attribute(type: $0, version: $1, value: $2)); return true }) else { return nil }
        return out
    }

    /// The attributes of two types only, values left undecoded. This is the only payload work
    /// done before the signature is checked, so it must cost little per attribute whatever an
    /// attacker puts there: nothing is kept of the others.
    static func find(_ first: Int64, _ second: Int64, in bytes: ArraySlice<UInt8>) -> [Attribute]? {
        var out: [Attribute] = []
        // In place: a slice is made only for the two types asked for.
        let base = bytes.startIndex
        let whole = bytes.withUnsafeBufferPointer { p in
            walkRaw(p) { type, version, start, end in
                if type == first || type == second {
                    out.append(Attribute(type: type, version: version, value: bytes[(base + start)..<(base + end)]))
                }
                return true
            }
        }
        return whole ? out : nil
    }

    /// How many attributes of `type` there are; nil when the walk declines the bytes.
    static func count(_ type: Int64, in bytes: ArraySlice<UInt8>) -> Int? {
        var n = 0
        let whole = bytes.withUnsafeBufferPointer { p in walkRaw(p) { t, _, _, _ in if t == type { n += 1 }; return true } }
        return whole ? n : nil
    }

    /// One walk over raw memory: `visit` sees each attribute in order and returns false to stop.
    /// False when the bytes are not a SET of plain definite-length attribute TLVs (or `visit`
    /// stopped the walk).
    @inline(__always)
    private static func walk(_ bytes: ArraySlice<UInt8>, _ visit: (Int64, Int64, ArraySlice<UInt8>) -> Bool) -> Bool {
        bytes.withUnsafeBufferPointer { p -> Bool in
            let base = bytes.startIndex
            return walkRaw(p) { type, version, start, end in visit(type, version, bytes[(base + start)..<(base + end)]) }
        }
    }

    /// The same walk, giving each value as offsets into `p` (no slice, so no reference counting
    /// per attribute: the in-app records are read this way).
    @inline(__always)
    static func walkRaw(_ p: UnsafeBufferPointer<UInt8>, _ visit: (Int64, Int64, Int, Int) -> Bool) -> Bool {
        guard let set = RawTLV.header(p, 0, end: p.count), set.tag == 0x31, set.end == p.count else { return false }
        var i = set.start
        while i < set.end {
            if let a = shortFormAttribute(p, i, set.end) {
                guard visit(a.type, a.version, a.start, a.end) else { return false }
                i = a.next
                continue
            }
            guard let seq = RawTLV.header(p, i, end: set.end), seq.tag == 0x30,
                  let t = RawTLV.header(p, seq.start, end: seq.end), t.tag == 0x02,
                  let v = RawTLV.header(p, t.end, end: seq.end), v.tag == 0x02,
                  let o = RawTLV.header(p, v.end, end: seq.end), o.tag == 0x04, o.end == seq.end,
                  let type = RawTLV.int64(p, t.start, t.end), let version = RawTLV.int64(p, v.start, v.end) else { return false }
            guard visit(type, version, o.start, o.end) else { return false }
            i = seq.end
        }
        return true
    }

    /// The attribute at `i` when every length in it is in short form and its type and version
    /// take one or two bytes (every attribute Apple signs): read with fewer checks than the
    /// general walk needs, to the same values. nil sends the attribute to the general walk,
    /// which reads it or refuses the set.
    @inline(__always)
    private static func shortFormAttribute(_ p: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int)
        -> (type: Int64, version: Int64, start: Int, end: Int, next: Int)? {
        // 30 L | 02 n t.. | 02 m v.. | 04 l value
        guard i + 10 <= end, p[i] == 0x30, p[i + 1] < 0x80, p[i + 2] == 0x02 else { return nil }
        let next = i + 2 + Int(p[i + 1])
        let n = Int(p[i + 3])
        guard next <= end, n == 1 || n == 2 else { return nil }
        let v = i + 4 + n
        guard v + 3 <= next, p[v] == 0x02 else { return nil }
        let m = Int(p[v + 1])
        guard m == 1 || m == 2 else { return nil }
        let o = v + 2 + m
        guard o + 2 <= next, p[o] == 0x04, p[o + 1] < 0x80, o + 2 + Int(p[o + 1]) == next else { return nil }
        @inline(__always) func integer(_ at: Int, _ count: Int) -> Int64 {
            count == 1 ? Int64(Int8(bitPattern: p[at])) : Int64(Int16(bitPattern: UInt16(p[at]) << 8 | UInt16(p[at + 1])))
        }
        return (integer(i + 4, n), integer(v + 2, m), o + 2, next, next)
    }

    /// The reference decoding as a BER tree, used for everything the walk declines.
    static func viaTree(_ bytes: ArraySlice<UInt8>, what: String,
                             _ body: (Int64, Int64, ArraySlice<UInt8>) throws(PayloadProblem) -> Void) throws(PayloadProblem) {
        let root: BERNode
        do {
            root = try BERTree.parse(bytes)
        } catch {
            throw .malformed("\(what) is not a valid DER/BER structure")
        }
        guard root.identifier == .set, case .constructed(let attributes) = root.content else {
            throw .malformed("\(what) is not a SET of receipt attributes")
        }
        for node in attributes {
            guard node.identifier == .sequence, case .constructed(let fields) = node.content else {
                throw .malformed("a receipt attribute is not a SEQUENCE")
            }
            var it = fields.makeIterator()
            guard let t = it.next(), let v = it.next(), let o = it.next(), it.next() == nil else {
                throw .malformed("a receipt attribute does not have exactly 3 fields")
            }
            guard let type = ReceiptPayloadDecoder.int64(t), let version = ReceiptPayloadDecoder.int64(v) else {
                throw .malformed("a receipt attribute type or version is not a 64-bit INTEGER")
            }
            guard o.identifier == .octetString, case .primitive(let value) = o.content else {
                throw .malformed("attribute \(type) value is not a primitive OCTET STRING")
            }
            try body(type, version, value)
        }
    }
}
