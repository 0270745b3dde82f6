// A /verifyReceipt body's transactions: receipt.in_app ∪ latest_receipt_info by transaction id,
// in the order each id first appears, the record read last winning. Apple repeats most of
// in_app in latest_receipt_info, so most records are replaced: those are checked (a broken one
// still makes the body malformed, with the same message) but never built.


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
        /// Every record in reading order: its list, its index there, the union position of its
        /// id, the id's words and the record. One list sized once (four lists, each grown as it
        /// was filled, cost an allocation a growth).
        private var records: [(list: Int32, index: Int32, position: Int32, key: IDText.InlineKey, value: JSONValue)] = []
        /// The record each union position ends with.
        private var last: [Int32] = []

        init?(_ lists: [(value: JSONValue?, path: String)]) {
            // Every list's kind checked and its records counted first (the parser's counts, exact
            // below 2^24 elements), so that both lists are sized once.
            var count = 0
            for list in lists {
                guard let v = list.value, !v.isNull else { continue }
                guard let items = v.elements else { return nil }
                count += items.countHint
            }
            guard count < Int(Int32.max) / 4 else { return nil }
            records.reserveCapacity(count)
            last.reserveCapacity(count)
            for (l, list) in lists.enumerated() {
                guard let v = list.value, !v.isNull, let items = v.elements else { continue }
                for (i, item) in items.enumerated() {
                    guard item.kind == .object, let id = item[literal: "transaction_id"]?.utf8, id.count > 0,
                          let key = IDText.inlineKey(utf8: id) else { return nil }
                    records.append((Int32(truncatingIfNeeded: l), Int32(truncatingIfNeeded: i), -1, key, item))
                }
            }
            guard records.count < Int(Int32.max) / 4 else { return nil }
            if records.count <= 16 {
                // A few records (most bodies): each id compared with the earlier ones, no table.
                for k in records.indices {
                    if let j = records[..<k].firstIndex(where: { $0.key == records[k].key }) {
                        let p = Int(records[j].position)
                        records[k].position = Int32(p)
                        last[p] = Int32(k)
                    } else {
                        records[k].position = Int32(last.count)
                        last.append(Int32(k))
                    }
                }
                return
            }
            // Open addressing over the ids' words. Probes past the budget mean crafted ids: the
            // plan is dropped and `ByID` (String keys, the standard library's hasher) decides.
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
                    let p = Int(table[at])
                    if p < 0 {
                        table[at] = Int32(last.count)
                        records[k].position = Int32(last.count)
                        last.append(Int32(k))
                        break
                    }
                    // `last[p]` is a record with this position's id (the first one's or a later
                    // equal one's).
                    if records[Int(last[p])].key == key {
                        records[k].position = Int32(p)
                        last[p] = Int32(k)
                        break
                    }
                    probes += 1
                    if probes > budget { return nil }
                    at = (at + 1) & mask
                }
            }
        }

        /// Reads each union position's last record and checks every other one, in reading order.
        /// Each position is built once, appended in the order its last record comes (an array
        /// made uninitialized and filled by position looked up its type at run time on every
        /// call), then moved to its place when that order is not already the positions' order.
        /// A replaced record that is the same JSON as the record replacing it (Apple repeats most
        /// of `in_app` in `latest_receipt_info` as it is) is not checked as it is reached: it
        /// fails exactly where its replacement fails, and if anything fails, such records before
        /// the failure are checked then, first, so the error is the one reading every record in
        /// turn gives.
        func read(_ lists: [(value: JSONValue?, path: String)], texts: inout RecentTexts) throws(FieldProblem) -> [Transaction] {
            var union: [Transaction] = []
            union.reserveCapacity(last.count)
            var inOrder = true
            // One record checked at a time, every replaced record into the same scratch model.
            var scratch = TransactionRecord.scratch
            func check(_ k: Int) throws(FieldProblem) {
                let r = records[k]
                try TransactionJSON.checkTransaction(r.value, path: lists[Int(r.list)].path, index: Int(r.index), scratch: &scratch)
            }
            /// A replaced record left to its replacement (above).
            func sameAsReplacement(_ k: Int) -> Bool {
                records[k].value.sameJSON(as: records[Int(last[Int(records[k].position)])].value)
            }
            for (k, r) in records.enumerated() {
                let p = Int(r.position)
                do throws(FieldProblem) {
                    if Int(last[p]) == k {
                        inOrder = inOrder && p == union.count
                        union.append(try TransactionJSON.transaction(r.value, path: lists[Int(r.list)].path, index: Int(r.index),
                                                                     texts: &texts))
                    } else if !sameAsReplacement(k) {
                        try check(k)
                    }
                } catch {
                    for j in 0..<k where Int(last[Int(records[j].position)]) != j && sameAsReplacement(j) { try check(j) }
                    throw error
                }
            }
            if !inOrder {
                // `target[j]`: the position of the j-th record built (positions by their last record).
                var target = Array(0..<last.count).sorted { last[$0] < last[$1] }
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
