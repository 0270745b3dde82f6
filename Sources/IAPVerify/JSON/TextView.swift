// A piece of text as a byte range of the buffer it arrived in: a decoder notes where a field is
// instead of making a String, and the writer copies the bytes straight into the result.

import Glibc

/// Where a text field sits in its source buffer (a receipt's in-app record).
struct TextView: Sendable, Equatable {
    /// The offset from the buffer's first byte; -1: the source has no such field.
    var start: Int32 = -1
    var count: Int32 = 0

    var isPresent: Bool { start >= 0 }

    /// The bytes in `buffer`; nil when absent or (never for a view its decoder made) outside it.
    func bytes(in buffer: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard isPresent, Int(start) + Int(count) <= buffer.count else { return nil }
        return UnsafeBufferPointer(rebasing: buffer[Int(start)..<(Int(start) + Int(count))])
    }
}

/// The last few distinct texts made from bytes, so that a repeated product id is one String
/// shared (a retain) instead of a new one per purchase. Texts short enough to live in a String
/// value (15 bytes) are made each time: that costs no allocation.
struct RecentTexts {
    private var texts = InlineArray<8, String>(repeating: "")
    private var count = 0
    private var next = 0

    mutating func text(_ view: UnsafeBufferPointer<UInt8>?) -> String? {
        view.map { text($0) }
    }

    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if bytes.count <= 15 { return String(decoding: bytes, as: UTF8.self) }
        // By index, read in place: no String is retained or released per candidate, and most
        // lookups compare several.
        for i in 0..<count where Self.same(texts[i], bytes) { return texts[i] }
        let s = String(decoding: bytes, as: UTF8.self)
        if count < texts.count {
            texts[count] = s
            count += 1
        } else {
            texts[next] = s
            next = (next + 1) % texts.count
        }
        return s
    }

    private static func same(_ s: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard s.utf8.count == bytes.count else { return false }
        if let equal = s.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) {
            return equal
        }
        return s.utf8.elementsEqual(bytes)
    }
}
