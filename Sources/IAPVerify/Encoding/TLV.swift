// Reading one TLV header of definite-length DER, for the two hot walks that skip building a
// BERTree (the SignedData envelope and the attribute sets). Anything this declines
// (indefinite lengths, high tag numbers, lengths over 4 bytes) goes to BERTree instead.

enum TLV {
    /// The tag, the content range and the end of the TLV starting at `i`, which must fit before `end`.
    /// Indices are the collection's own; the bytes must be contiguous (arrays and their slices).
    static func header<C: Collection>(_ b: C, _ i: Int, end: Int) -> (tag: UInt8, start: Int, end: Int)?
        where C.Element == UInt8, C.Index == Int {
        guard i >= b.startIndex, end <= b.endIndex else { return nil }
        let base = b.startIndex
        let found = b.withContiguousStorageIfAvailable { RawTLV.header($0, i - base, end: end - base) }
        guard let h = found ?? nil else { return nil }
        return (h.tag, h.start + base, h.end + base)
    }
}

/// The header reader over raw memory, for walks whose cost an attacker chooses (the payload walk
/// before the signature check): indices are offsets from the buffer's start.
enum RawTLV {
    @inline(__always)
    static func header(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, end: Int) -> (tag: UInt8, start: Int, end: Int)? {
        guard i >= 0, i + 2 <= end, end <= b.count else { return nil }
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

    /// A two's-complement INTEGER's content that fits in 64 bits (as ReceiptPayloadDecoder.int64).
    @inline(__always)
    static func int64(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int64? {
        let n = end - start
        guard n >= 1 else { return nil }
        if n == 9 {
            guard b[start] == 0, b[start + 1] & 0x80 != 0 else { return nil }
            var v: UInt64 = 0
            for k in (start + 1)..<end { v = v << 8 | UInt64(b[k]) }
            return v <= UInt64(Int64.max) ? Int64(v) : nil
        }
        guard n <= 8 else { return nil }
        var v: Int64 = b[start] & 0x80 != 0 ? -1 : 0
        for k in start..<end { v = v << 8 | Int64(b[k]) }
        return v
    }
}
