// The engine's inputs made ready: one record per transaction id in purchase order, each
// product's type as Apple signed it or as its purchases imply, and the catalog's conflicts.

extension EntitlementEngine {
    /// One record per transaction id, chosen without regard to input order.
    static func deduplicated(_ input: consuming [Transaction], nowMs: Int64) -> [Transaction] {
        // Worked in place: the list is the caller's to give up, so records are moved, never copied.
        var items = input
        // A few purchases (most receipts): compared pairwise; up to a few hundred: ordered by id
        // and neighbours compared; no table built either way. Ids are unique in nearly every
        // input, and then nothing below changes the list before it is ordered.
        if items.count <= 16 ? !hasRepeatedID(items) : items.count <= 256 && hasRepeatedIDSorting(items) == false {
            sortByPurchase(&items)
            return items
        }
        // Each id numbered in order of first sight (by its bytes: see IDInternTable); the record
        // kept for each number.
        var ids = IDInternTable(capacity: items.count)
        var chosen: [Int] = []
        chosen.reserveCapacity(items.count)
        var duplicates = false
        for i in items.indices {
            let k = ids.id(items[i].id)
            if k == chosen.count {
                chosen.append(i)
            } else {
                duplicates = true
                if Transaction.prefersSecond(items[chosen[k]], items[i], nowMs: nowMs) { chosen[k] = i }
            }
        }
        if duplicates {
            var keep = [Bool](repeating: false, count: items.count)
            for i in chosen { keep[i] = true }
            var kept = 0
            for i in items.indices where keep[i] {
                if kept != i { items.swapAt(kept, i) }
                kept += 1
            }
            items.removeLast(items.count - kept)
        }
        sortByPurchase(&items)
        return items
    }

    /// Many purchases with inline ids (nearly always): the ids' words ordered, without touching
    /// the records, and neighbours compared (equal words are equal ids). nil when some id is held
    /// as a String: there ids equal by `==` need not be equal bytes, so only a table can tell.
    private static func hasRepeatedIDSorting(_ items: [Transaction]) -> Bool? {
        var words: [IDText.InlineKey] = []
        words.reserveCapacity(items.count)
        for i in items.indices {
            guard let key = items[i].id.inlineKey else { return nil }
            words.append(key)
        }
        words.sort { a, b in (a.w0, a.w1, a.w2) < (b.w0, b.w1, b.w2) }
        for k in words.indices.dropFirst() where words[k - 1] == words[k] { return true }
        return false
    }

    /// Ids are unique when this is called, so the order is total and does not depend on the input's.
    private static func sortByPurchase(_ items: inout [Transaction]) {
        // Sorted as (date, index) pairs, ties broken by id, then the records moved into place
        // (sorting the records themselves moved each one about log n times).
        // Receipts list purchases mostly in order: nothing to do (and nothing allocated) when
        // they already are.
        func date(_ k: Int) -> Int64 { items[k].purchaseDateMs ?? Int64.min }
        if !items.indices.dropFirst().contains(where: { k in
            date(k - 1) > date(k) || (date(k - 1) == date(k) && !(items[k - 1].id < items[k].id))
        }) { return }
        var keys = items.indices.map { (date: date($0), index: $0) }
        keys.sort { a, b in a.date != b.date ? a.date < b.date : items[a.index].id < items[b.index].id }
        // Each record moved twice, as bytes (Swift values move bitwise): out in order to a
        // scratch block, then back. Nothing between the two moves can fail.
        items.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let scratch = UnsafeMutablePointer<Transaction>.allocate(capacity: buffer.count)
            defer { scratch.deallocate() }
            for (k, key) in keys.enumerated() { (scratch + k).moveInitialize(from: base + key.index, count: 1) }
            base.moveInitialize(from: scratch, count: buffer.count)
        }
    }

    private static func hasRepeatedID(_ items: [Transaction]) -> Bool {
        for i in items.indices {
            for j in items.indices where j > i && items[i].id == items[j].id { return true }
        }
        return false
    }

    /// True when renewal `b` wins over `a` for their chain (read by index, never copied).
    static func renewalPrefersSecond(_ all: [RenewalInfo], _ a: Int, _ b: Int, nowMs: Int64) -> Bool {
        // The later signed statement is Apple's current word; unsigned ones fail closed.
        if let x = SignedDates.orderable(all[a].commerce.signedDateMs, nowMs: nowMs),
           let y = SignedDates.orderable(all[b].commerce.signedDateMs, nowMs: nowMs), x != y { return !(x > y) }
        // Fail closed: billing retry and "will not renew" win over their opposites.
        if all[a].isInBillingRetryPeriod != all[b].isInBillingRetryPeriod { return all[a].isInBillingRetryPeriod != true }
        if all[a].autoRenewStatus != all[b].autoRenewStatus { return all[a].autoRenewStatus != false }
        return !((all[a].autoRenewProductID ?? "") <= (all[b].autoRenewProductID ?? ""))
    }

    /// Apple's signed `type` as a product type; nil for a type this library does not know.
    static func productType(signed: String) -> ProductType? {
        switch signed {
        case "Consumable": return .consumable
        case "Non-Consumable": return .nonConsumable
        case "Auto-Renewable Subscription": return .autoRenewable
        case "Non-Renewing Subscription": return .nonRenewing
        default: return nil
        }
    }

    /// What Apple signed about each product's type: the one type all its signed purchases agree
    /// on, `.some(nil)` when they disagree or name a type this library does not know, and no
    /// entry when none of its purchases carries a signed type (receipts, /verifyReceipt).
    private static func signedTypes(_ transactions: [Transaction], _ keys: [PurchaseKeys],
                                    _ products: InternTable) -> [Int: ProductType?] {
        var types: [Int: ProductType?] = [:]
        for i in transactions.indices {
            guard let signed = transactions[i].signedType else { continue }
            let type = productType(signed: signed)
            if let seen = types[keys[i].product] {
                if seen != type { types[keys[i].product] = .some(nil) }
            } else {
                types[keys[i].product] = .some(type)
            }
        }
        return types
    }

    /// Without a catalog, each product is its own entitlement, typed by what Apple signed
    /// (StoreKit 2 `type`): a consumable grants nothing and is delivered; a product whose signed
    /// purchases disagree, or name a type this library does not know, grants nothing (it is
    /// listed in `unknown_products`). A product without a signed type (receipts) is
    /// auto-renewable when any of its purchases has an expiry, else non-consumable. A
    /// non-renewing subscription needs the catalog's `duration_ms`, so without one it grants
    /// nothing.
    static func inferredRules(_ transactions: [Transaction], _ keys: [PurchaseKeys], _ products: InternTable) -> [RuleFacts?] {
        // Every product first as a purchase without expiry implies, then auto-renewable where
        // one of its purchases expires, in this one list. The entitlement each grants is named
        // after the product (`evaluate`).
        var rules: [RuleFacts?] = []
        rules.reserveCapacity(products.names.count)
        for _ in products.names.indices { rules.append(RuleFacts(type: .nonConsumable)) }
        for i in transactions.indices where transactions[i].expiresDateMs != nil {
            rules[keys[i].product] = RuleFacts(type: .autoRenewable)
        }
        // What Apple signed wins over what the dates imply.
        for (p, apple) in signedTypes(transactions, keys, products) {
            rules[p] = apple.map { RuleFacts(type: $0) }   // ambiguous or unknown: no rule, grants nothing
        }
        return rules
    }

    /// Catalog entries whose type contradicts the type Apple signed for the product.
    static func catalogConflicts(_ catalog: [String: ProductRule], _ transactions: [Transaction],
                                         _ keys: [PurchaseKeys], _ products: InternTable) -> [CatalogConflict] {
        var conflicts: [CatalogConflict] = []
        var reported = Set<Int>()
        for i in transactions.indices {
            let p = keys[i].product
            guard !reported.contains(p), let signed = transactions[i].signedType,
                  let rule = catalog[products.names[p]], productType(signed: signed) != rule.type else { continue }
            reported.insert(p)
            conflicts.append(CatalogConflict(productID: products.names[p], catalogType: rule.type, signedType: signed))
        }
        return conflicts.sorted { $0.productID < $1.productID }
    }
}
