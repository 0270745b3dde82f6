// A /verifyReceipt body's transactions: receipt.in_app ∪ latest_receipt_info by transaction id,
// in the order each id first appears, the record read last winning. Apple repeats most of
// in_app in latest_receipt_info, so most records are replaced: those are checked (a broken one
// still makes the body malformed, with the same message) but never built.

import Glibc

enum TransactionUnion {
    /// The union of `lists` (each absent, null or an array of transaction objects), read in order.
    /// Fails with the first problem in that order, as reading every record in turn would.
    static func of(_ lists: [(value: JSONValue?, path: String)]) throws(FieldProblem) -> [Transaction] {
        if let plan = Plan(lists) { return try plan.read(lists) }
        return try readingEvery(lists)
    }

    /// The same by the plain rule: every record read in turn, keyed by its decoded id.
    static func readingEvery(_ lists: [(value: JSONValue?, path: String)]) throws(FieldProblem) -> [Transaction] {
        var union = ByID()
        for list in lists { union.add(try TransactionJSON.transactions(list.value, path: list.path)) }
        return union.transactions
    }

    /// The general form: transactions already read, keyed by their decoded id. Used for iOS 6
    /// bodies and for any body the plan declines (an id that is not plain ASCII text, say).
    struct ByID {
        private var slot: [String: Int] = [:]
        private(set) var transactions: [Transaction] = []

        mutating func add(_ list: [Transaction]) {
            slot.reserveCapacity(slot.count + list.count)
            transactions.reserveCapacity(transactions.count + list.count)
            for t in list {
                if let i = slot[t.transactionID] {
                    transactions[i] = t
                } else {
                    slot[t.transactionID] = transactions.count
                    transactions.append(t)
                }
            }
        }
    }

    /// Which record each id ends with, worked out from the ids' bytes before any record is read.
    /// Only for lists whose every record is an object with a non-empty ASCII `transaction_id`
    /// string: there the bytes are the id `ByID` would key by (for other text, Swift compares
    /// strings by canonical equivalence, and numbers become text), so both give one answer.
    private struct Plan {
        /// Every record in reading order: its list, its index there, its value.
        private var records: [(list: Int, index: Int, value: JSONValue)] = []
        /// The union position of each record's id.
        private var position: [Int32] = []
        /// The record each union position ends with.
        private var last: [Int32] = []

        init?(_ lists: [(value: JSONValue?, path: String)]) {
            var ids: [UnsafeBufferPointer<UInt8>] = []
            for (l, list) in lists.enumerated() {
                guard let v = list.value, !v.isNull else { continue }
                guard v.kind == .array, let items = v.array else { return nil }
                records.reserveCapacity(records.count + items.count)
                ids.reserveCapacity(ids.count + items.count)
                for (i, item) in items.enumerated() {
                    guard item.kind == .object, let id = item[literal: "transaction_id"]?.utf8, id.count > 0,
                          id.allSatisfy({ $0 < 0x80 }) else { return nil }
                    records.append((l, i, item))
                    ids.append(id)
                }
            }
            guard records.count < Int(Int32.max) / 4 else { return nil }
            // Open addressing over the ids' bytes, hashed with the standard library's seeded
            // hasher so that crafted ids cannot make every lookup collide.
            var size = 16
            while size < 2 * ids.count { size *= 2 }
            var table = [Int32](repeating: -1, count: size)
            var firstID: [UnsafeBufferPointer<UInt8>] = []
            position.reserveCapacity(ids.count)
            for (k, id) in ids.enumerated() {
                var hasher = Hasher()
                hasher.combine(bytes: UnsafeRawBufferPointer(id))
                var at = hasher.finalize() & (size - 1)
                while true {
                    let p = Int(table[at])
                    if p < 0 {
                        table[at] = Int32(firstID.count)
                        position.append(Int32(firstID.count))
                        firstID.append(id)
                        last.append(Int32(k))
                        break
                    }
                    let other = firstID[p]
                    if other.count == id.count, memcmp(other.baseAddress!, id.baseAddress!, id.count) == 0 {
                        position.append(Int32(p))
                        last[p] = Int32(k)
                        break
                    }
                    at = (at + 1) & (size - 1)
                }
            }
        }

        /// Reads each union position's last record and checks every other one, in reading order.
        func read(_ lists: [(value: JSONValue?, path: String)]) throws(FieldProblem) -> [Transaction] {
            var union = [Transaction](repeating: Transaction(id: IDText(""), productID: ""), count: last.count)
            for (k, r) in records.enumerated() {
                let p = Int(position[k])
                if Int(last[p]) == k {
                    union[p] = try TransactionJSON.transaction(r.value, path: lists[r.list].path, index: r.index)
                } else {
                    try TransactionJSON.checkTransaction(r.value, path: lists[r.list].path, index: r.index)
                }
            }
            return union
        }
    }
}

/// The fuzz harness's oracle for the union: on any body, the union must equal reading every
/// record of both lists and keeping the last one per decoded id, the first error included.
@_spi(Testing) public enum TransactionUnionOracle {
    /// False when the two disagree; true when they agree or the body has no object at its top.
    public static func agrees(_ body: UnsafeRawBufferPointer) -> Bool {
        guard let doc = try? JSONDocument(bytes: body, what: "the body", status: .invalidArgument),
              doc.root.kind == .object else { return true }
        let lists: [(value: JSONValue?, path: String)] = [(doc.root["receipt"]?["in_app"], "receipt.in_app"),
                                                         (doc.root["latest_receipt_info"], "latest_receipt_info")]
        let fast: Result<[Transaction], FieldProblem>
        do throws(FieldProblem) { fast = .success(try TransactionUnion.of(lists)) } catch { fast = .failure(error) }
        let plain: Result<[Transaction], FieldProblem>
        do throws(FieldProblem) { plain = .success(try TransactionUnion.readingEvery(lists)) } catch { plain = .failure(error) }
        switch (fast, plain) {
        case (.success(let a), .success(let b)): return a == b
        case (.failure(let a), .failure(let b)): return a.message == b.message
        default: return false
        }
    }
}
