// Finding a fixed set of member names in an object by one walk over its members: each key is
// looked up, by its bytes, in a small open-addressed table built once from the names. A record
// reader then asks for its fields by number, in its own order, whatever order the object has.

import CJSONTape
import Glibc

/// A fixed set of member names, each mapped to a number (a slot of the reader that built it).
/// Its entries live in one block that is never freed: every index belongs to a field table, and
/// the field tables are static (built once, kept for the life of the program). A plain pointer
/// costs no reference counting where the arrays it replaced were retained and released on every
/// record read (2,000 records in a 1,000-transaction body).
struct FieldNameIndex: @unchecked Sendable {
    private struct Entry {
        let name: UnsafePointer<UInt8>
        let count: Int
        let slot: Int
    }
    private let entries: UnsafePointer<Entry>
    /// -1 for an empty bucket, else the entry.
    private let buckets: UnsafePointer<Int16>
    private let mask: Int

    init(_ list: [(name: StaticString, slot: Int)]) {
        var size = 16
        while size < list.count * 4 { size *= 2 }
        let buckets = UnsafeMutablePointer<Int16>.allocate(capacity: size)
        buckets.initialize(repeating: -1, count: size)
        let entries = UnsafeMutablePointer<Entry>.allocate(capacity: max(1, list.count))
        for (i, e) in list.enumerated() {
            entries[i] = Entry(name: e.name.utf8Start, count: e.name.utf8CodeUnitCount, slot: e.slot)
            var b = Self.hash(e.name.utf8Start, e.name.utf8CodeUnitCount) & (size - 1)
            while buckets[b] >= 0 {
                let other = entries[Int(buckets[b])]
                precondition(!Self.same(other.name, other.count, e.name.utf8Start, e.name.utf8CodeUnitCount), "\(e.name) listed twice")
                b = (b + 1) & (size - 1)
            }
            buckets[b] = Int16(i)
        }
        self.entries = UnsafePointer(entries)
        self.buckets = UnsafePointer(buckets)
        mask = size - 1
    }

    /// The slot of the name spelled by `key`, or nil when it is not one of the names.
    @inline(__always) func slot(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let p = key.baseAddress, key.count > 0 else { return nil }
        var b = Self.hash(p, key.count) & mask
        while true {
            let e = Int(buckets[b])
            if e < 0 { return nil }
            if Self.same(entries[e].name, entries[e].count, p, key.count) { return entries[e].slot }
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
    @inline(__always) private static func same(_ name: UnsafePointer<UInt8>, _ count: Int, _ p: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard count == n else { return false }
        let a = UnsafeRawPointer(name), b = UnsafeRawPointer(p)
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
