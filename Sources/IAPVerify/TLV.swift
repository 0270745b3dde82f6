// Reading one TLV header of definite-length DER, for the two hot walks that skip building a
// swift-asn1 tree (the SignedData envelope and the attribute sets). Anything this declines
// (indefinite lengths, high tag numbers, lengths over 4 bytes) goes to swift-asn1 instead.

enum TLV {
    /// The tag, the content range and the end of the TLV starting at `i`, which must fit before `end`.
    static func header<C: Collection>(_ b: C, _ i: Int, end: Int) -> (tag: UInt8, start: Int, end: Int)?
        where C.Element == UInt8, C.Index == Int {
        guard i >= b.startIndex, i + 2 <= end, end <= b.endIndex else { return nil }
        let tag = b[i]
        guard tag & 0x1F != 0x1F else { return nil }
        let first = b[i + 1]
        var start = i + 2
        var length = 0
        if first >= 0x80 {
            let n = Int(first & 0x7F)
            guard n >= 1, n <= 4, start + n <= end else { return nil }
            for k in 0..<n { length = length << 8 | Int(b[start + k]) }
            start += n
        } else {
            length = Int(first)
        }
        guard length <= end - start else { return nil }
        return (tag, start, start + length)
    }
}
