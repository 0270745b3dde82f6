// A /verifyReceipt body's transactions: receipt.in_app ∪ latest_receipt_info by transaction id,
// in the order each id first appears, the record read last winning. Apple repeats most of
// in_app in latest_receipt_info, so most records are replaced: those are checked (a broken one
// still makes the body malformed, with the same message) but never built, and one that repeats
// its replacement byte for byte is left to it (checked only if something fails, before the
// failure: see `Plan.read`).


enum TransactionUnion {
    /// The union of `lists` (each absent, null or an array of transaction objects), read in order.
    /// Fails with the first problem in that order, as reading every record in turn would.
    static func of(_ lists: [(value: JSONValue?, path: String)]) throws(FieldProblem) -> [Transaction] {
        var texts = RecentTexts()
        return try of(lists, texts: &texts)
    }

    /// The same, sharing repeated texts (product ids) with what is read afterwards (`texts`).
    static func of(_ lists: [(value: JSONValue?, path: String)], texts: inout RecentTexts) throws(FieldProblem) -> [Transaction] {
        if let plan = Plan(lists) { return try plan.read(lists, texts: &texts) }
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
    /// Only for lists whose every record is an object with a non-empty `transaction_id` string of
    /// ASCII text held inline (IDText: at most 23 bytes; Apple's are 16 to 19 digits): there the
    /// bytes are the id `ByID` would key by (for other text, Swift compares strings by canonical
    /// equivalence, and numbers become text), so both give one answer.
    private struct Plan {
        /// Every record in reading order: its list, its index there, the first record with its id
        /// (itself, for a first sight), for a first sight the last record with its id, the id's
        /// words and the record. One list sized once (lists grown as they were filled cost an
        /// allocation a growth); the union holds one transaction per first sight, in their order.
        private var records: [(list: Int32, index: Int32, first: Int32, last: Int32, key: IDText.InlineKey, value: JSONValue)] = []
        /// How many distinct ids (union positions).
        private var positions = 0

        init?(_ lists: [(value: JSONValue?, path: String)]) {
            // Every list's kind checked and its records counted first (the parser's counts, exact
            // below 2^24 elements), so that the list is sized once.
            var count = 0
            for list in lists {
                guard let v = list.value, !v.isNull else { continue }
                guard let items = v.elements else { return nil }
                count += items.countHint
            }
            guard count < Int(Int32.max) / 4 else { return nil }
            records.reserveCapacity(count)
            for (l, list) in lists.enumerated() {
                guard let v = list.value, !v.isNull, let items = v.elements else { continue }
                for (i, item) in items.enumerated() {
                    guard item.kind == .object, let id = item[literal: "transaction_id"]?.utf8, id.count > 0,
                          let key = IDText.inlineKey(utf8: id) else { return nil }
                    guard records.count < Int(Int32.max) / 4 else { return nil }
                    let k = Int32(truncatingIfNeeded: records.count)
                    records.append((Int32(truncatingIfNeeded: l), Int32(truncatingIfNeeded: i), k, k, key, item))
                }
            }
            /// Record `k` has the id first seen at record `f`.
            func repeats(_ k: Int, _ f: Int) {
                records[k].first = Int32(f)
                records[f].last = Int32(k)
            }
            if records.count <= 16 {
                // A few records (most bodies): each id compared with the earlier ones, no table.
                for k in records.indices {
                    if let f = records[..<k].firstIndex(where: { $0.key == records[k].key }) { repeats(k, f) } else { positions += 1 }
                }
                return
            }
            // Open addressing over the ids' words, each slot the record of a first sight. Probes
            // past the budget mean crafted ids: the plan is dropped and `ByID` (String keys, the
            // standard library's hasher) decides.
            var size = 16
            while size < 2 * records.count { size *= 2 }
            let mask = size - 1, seed = IDText.InlineKey.seed
            var table = [Int32](repeating: -1, count: size)
            let budget = IDText.InlineKey.probeBudget(records.count)
            var probes = 0
            for k in records.indices {
                let key = records[k].key
                var at = key.hash(seed) & mask
                while true {
                    let f = Int(table[at])
                    if f < 0 {
                        table[at] = Int32(k)
                        positions += 1
                        break
                    }
                    if records[f].key == key {
                        repeats(k, f)
                        break
                    }
                    probes += 1
                    if probes > budget { return nil }
                    at = (at + 1) & mask
                }
            }
        }

        /// The last record with record `k`'s id: the one that is built.
        private func replacement(_ k: Int) -> Int { Int(records[Int(records[k].first)].last) }

        /// Reads each id's last record and checks every other one, in reading order. Each id's
        /// transaction is built once, appended in the order its last record comes, then moved to
        /// its place (the order of first sight) when that order is not already it.
        /// A replaced record that is the same JSON as the record replacing it (Apple repeats most
        /// of `in_app` in `latest_receipt_info` as it is) is not checked as it is reached: it
        /// fails exactly where its replacement fails, and if anything fails, such records before
        /// the failure are checked then, first, so the error is the one reading every record in
        /// turn gives.
        func read(_ lists: [(value: JSONValue?, path: String)], texts: inout RecentTexts) throws(FieldProblem) -> [Transaction] {
            var union: [Transaction] = []
            union.reserveCapacity(positions)
            // In order while each record built has the next first sight not yet built.
            var inOrder = true, nextFirst = 0
            // One record checked at a time, every replaced record into the same scratch model.
            var scratch = TransactionRecord.scratch
            func check(_ k: Int) throws(FieldProblem) {
                let r = records[k]
                try TransactionJSON.checkTransaction(r.value, path: lists[Int(r.list)].path, index: Int(r.index), scratch: &scratch)
            }
            /// A replaced record left to its replacement (above).
            func sameAsReplacement(_ k: Int) -> Bool { records[k].value.sameJSON(as: records[replacement(k)].value) }
            for (k, r) in records.enumerated() {
                do throws(FieldProblem) {
                    if replacement(k) == k {
                        if inOrder {
                            inOrder = Int(r.first) == nextFirst
                            repeat { nextFirst += 1 } while nextFirst < records.count && Int(records[nextFirst].first) != nextFirst
                        }
                        union.append(try TransactionJSON.transaction(r.value, path: lists[Int(r.list)].path, index: Int(r.index),
                                                                     texts: &texts))
                    } else if !sameAsReplacement(k) {
                        try check(k)
                    }
                } catch {
                    for j in 0..<k where replacement(j) != j && sameAsReplacement(j) { try check(j) }
                    throw error
                }
            }
            if !inOrder {
                // `target[j]`: the place of the j-th transaction built, its first sight's rank.
                var rank = [Int](repeating: 0, count: records.count), seen = 0
                for k in records.indices where Int(records[k].first) == k {
                    rank[k] = seen
                    seen += 1
                }
                var target: [Int] = []
                target.reserveCapacity(union.count)
                for k in records.indices where replacement(k) == k { target.append(rank[Int(records[k].first)]) }
                for i in target.indices {
                    while target[i] != i {
                        let t = target[i]
                        union.swapAt(i, t)
                        target.swapAt(i, t)
                    }
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
