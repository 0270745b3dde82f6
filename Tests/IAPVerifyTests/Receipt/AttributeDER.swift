// Receipt attributes as DER, for tests that build payloads and in-app records by hand.

enum AttributeDER {
    /// One TLV with a definite length (short form, or long form up to 0xFFFF bytes).
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        precondition(content.count < 0x10000)
        let length: [UInt8] = content.count < 0x80 ? [UInt8(content.count)]
            : content.count < 0x100 ? [0x81, UInt8(content.count)] : [0x82, UInt8(content.count >> 8), UInt8(content.count & 0xFF)]
        return [tag] + length + content
    }

    /// A minimal two's-complement INTEGER.
    static func integer(_ v: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: v.bigEndian, Array.init)
        while bytes.count > 1, (bytes[0] == 0 && bytes[1] < 0x80) || (bytes[0] == 0xFF && bytes[1] >= 0x80) { bytes.removeFirst() }
        return tlv(0x02, bytes)
    }

    /// `SEQUENCE { type, version 1, OCTET STRING value }`.
    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }

    /// DER sorts SET OF members by their encoding; the decoder does not insist, so order is free.
    static func set(_ members: [[UInt8]]) -> [UInt8] { tlv(0x31, members.flatMap { $0 }) }
}
