// Finding a fixed set of member names in an object by one walk over its members: each key is
// looked up, by its bytes, in a small open-addressed table built once from the names. A record
// reader then asks for its fields by number, in its own order, whatever order the object has.

import CJSONTape
import Glibc

/// A fixed set of member names, each mapped to a number (a slot of the reader that built it).
struct FieldNameIndex: Sendable {
    private let names: [StaticString]
    private let slots: [Int]
    /// -1 for an empty bucket, else the entry in `names`/`slots`.
    private let buckets: [Int16]
    private let mask: Int

    init(_ entries: [(name: StaticString, slot: Int)]) {
        var size = 16
        while size < entries.count * 4 { size *= 2 }
        var buckets = [Int16](repeating: -1, count: size)
        for (i, e) in entries.enumerated() {
            var b = Self.hash(e.name.utf8Start, e.name.utf8CodeUnitCount) & (size - 1)
            while buckets[b] >= 0 {
                precondition(!Self.same(entries[Int(buckets[b])].name, e.name.utf8Start, e.name.utf8CodeUnitCount), "\(e.name) listed twice")
                b = (b + 1) & (size - 1)
            }
            buckets[b] = Int16(i)
        }
        names = entries.map(\.name)
        slots = entries.map(\.slot)
        self.buckets = buckets
        mask = size - 1
    }

    /// The slot of the name spelled by `key`, or nil when it is not one of the names.
    @inline(__always) func slot(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let p = key.baseAddress, key.count > 0 else { return nil }
        var b = Self.hash(p, key.count) & mask
        while true {
            let e = Int(buckets[b])
            if e < 0 { return nil }
            if Self.same(names[e], p, key.count) { return slots[e] }
            b = (b + 1) & mask
        }
    }

    /// From the length and three bytes: member names differ there far more often than not.
    @inline(__always) private static func hash(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        guard n > 0 else { return 0 }
        return n &* 37 &+ Int(p[0]) &* 7 &+ Int(p[n - 1]) &* 31 &+ Int(p[n >> 1]) &* 131
    }

    /// Compared a word at a time (the last word overlapping the one before): member names are
    /// short, and a call into memcmp cost more than the compare.
    @inline(__always) private static func same(_ name: StaticString, _ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard name.utf8CodeUnitCount == n else { return false }
        let a = UnsafeRawPointer(name.utf8Start), b = UnsafeRawPointer(p)
        guard n >= 8 else {
            for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
            return true
        }
        var i = 0
        while i + 8 < n {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) { return false }
            i += 8
        }
        return a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
    }
}

extension JSONValue {
    /// Calls `body` with each member's key bytes and value, in document order (nothing for a
    /// value that is not an object). The bytes live as long as the document.
    @inline(__always) func forEachMember(_ body: (UnsafeBufferPointer<UInt8>, JSONValue) -> Void) {
        guard kind == .object else { return }
        let end = json_tape_end(view, at)
        var i = at + 1
        while i < end {
            var n: UInt32 = 0
            let p = json_tape_string(view, i, &n)
            body(UnsafeBufferPointer(start: p, count: Int(n)), JSONValue(view: view, at: i + 1))
            i = json_tape_after(view, i + 1)
        }
    }
}
