// A piece of text as a byte range of the buffer it arrived in: a decoder notes where a field is
// instead of making a String, and the writer copies the bytes straight into the result.

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
