// Decoding the receipt payload's attributes: the whole set after the signature holds, only the
// header (receipt type and creation date) before it, and the readers of the receipt's own values.
// A purchase's record (attribute 17) is read by InAppRecordDecoder.swift.

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
    /// These values are tiny leaves (a string, a date, an INTEGER): they are read directly, and
    /// no node tree is built per attribute.
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
