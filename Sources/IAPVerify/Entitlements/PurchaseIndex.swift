// The purchases of one evaluation by number: each product and chain id is hashed once, here, and
// the engine's walks index arrays by these small integers and by indices into the deduplicated
// transactions, so no purchase is copied while it is judged.

struct PurchaseIndex {
    var products = InternTable()
    /// Each chain's renewal info (an index into the renewals) and its latest unrevoked purchase;
    /// -1 for none. Keyed by chain number: the table joins ids as String equality does.
    var chains = IDInternTable(initial: (renewal: -1, head: -1))
    /// Each purchase's product and chain numbers and its product's type, by purchase index.
    var keys: [PurchaseKeys] = []
    /// Each product's rule, by product number: the catalog's, or the one its purchases imply.
    var ruleOfProduct: [RuleFacts?] = []
    /// Each product's purchases, in purchase order: `purchaseList[purchaseStart[p]..<purchaseStart[p + 1]]`;
    /// both empty with one product, whose purchases are all of them.
    private var purchaseList: [Int] = []
    private var purchaseStart: [Int] = []
    private let count: Int

    init(_ transactions: [Transaction], renewals: [RenewalInfo], catalog: [String: ProductRule]?, nowMs: Int64) {
        count = transactions.count
        numberPurchases(transactions)
        ruleOfProduct = catalog.map { c in products.names.map { c[$0].map(RuleFacts.init) } }
            ?? EntitlementEngine.inferredRules(transactions, keys, products)
        for i in keys.indices { keys[i].type = ruleOfProduct[keys[i].product]?.type }
        attachRenewals(renewals, nowMs: nowMs)
        groupByProduct()
        findChainHeads(transactions, nowMs: nowMs)
    }

    /// Product and chain numbers of every purchase, in one list read by index (a purchase is
    /// never handed to a closure, which would copy it).
    private mutating func numberPurchases(_ transactions: [Transaction]) {
        keys.reserveCapacity(transactions.count)
        for i in transactions.indices {
            keys.append(PurchaseKeys(product: products.id(transactions[i].productID),
                                     chain: chains.id(transactions[i].chain), type: nil))
        }
    }

    /// Each chain's preferred renewal info, read by index (no RenewalInfo is copied).
    private mutating func attachRenewals(_ renewals: [RenewalInfo], nowMs: Int64) {
        for k in renewals.indices {
            let chain = chains.id(IDText(renewals[k].originalTransactionID))
            let old = chains[value: chain].renewal
            if old < 0 || EntitlementEngine.renewalPrefersSecond(renewals, old, k, nowMs: nowMs) { chains[value: chain].renewal = k }
        }
    }

    /// `purchaseList` and `purchaseStart` by counting sort (one list for all products).
    private mutating func groupByProduct() {
        guard products.names.count > 1 else { return }
        purchaseList = Array(0..<count)
        purchaseStart = [Int](repeating: 0, count: products.names.count + 1)
        for i in 0..<count { purchaseStart[keys[i].product + 1] += 1 }
        for p in products.names.indices { purchaseStart[p + 1] += purchaseStart[p] }
        var next = purchaseStart
        for i in 0..<count {
            purchaseList[next[keys[i].product]] = i
            next[keys[i].product] += 1
        }
    }

    /// The latest unrevoked period of each whole chain (all its products): only that period can
    /// be in billing retry or grace, whatever entitlement is being evaluated.
    private mutating func findChainHeads(_ transactions: [Transaction], nowMs: Int64) {
        for i in transactions.indices where keys[i].type == .autoRenewable && !transactions[i].isRevoked(at: nowMs) {
            let h = chains[value: keys[i].chain].head
            if h >= 0, !EntitlementEngine.expiryOrder(transactions, h, i) { continue }
            chains[value: keys[i].chain].head = i
        }
    }

    func purchases(of p: Int) -> PurchaseRun {
        purchaseStart.isEmpty ? PurchaseRun(list: [], startIndex: 0, endIndex: count)
            : PurchaseRun(list: purchaseList, startIndex: purchaseStart[p], endIndex: purchaseStart[p + 1])
    }

    /// With a catalog: the products it does not name. Without one: the products whose type
    /// Apple's signatures leave unknown or ambiguous. Either way they grant nothing. Sorted.
    var unknownProducts: [String] {
        var unknown: [String] = []
        for p in products.names.indices where ruleOfProduct[p] == nil { unknown.append(products.names[p]) }
        if unknown.count > 1 { unknown.sort() }
        return unknown
    }
}

/// What the engine reads of a product's rule, as plain values: reading one out of an array
/// retains no text.
struct RuleFacts {
    var type: ProductType
    var level: Int64? = nil
    var durationMs: Int64? = nil

    init(type: ProductType) { self.type = type }
    init(_ rule: ProductRule) { (type, level, durationMs) = (rule.type, rule.level, rule.durationMs) }
}

/// One product's purchases by index, in purchase order: a run of `list`, or, with no list (one
/// product), the indices themselves.
struct PurchaseRun: RandomAccessCollection {
    let list: [Int]
    let startIndex: Int
    let endIndex: Int

    subscript(k: Int) -> Int { list.isEmpty ? k : list[k] }
}

/// What the engine knows of a purchase by number: its product's and its chain's (InternTable,
/// IDInternTable) and its product's type (nil when no rule types it).
struct PurchaseKeys {
    var product: Int
    var chain: Int
    var type: ProductType?
}

/// Small integer ids for strings, given in order of first sight.
struct InternTable {
    private(set) var names: [String] = []
    private var ids: [String: Int] = [:]
    /// The last few texts looked up, by the address of their bytes: a receipt's purchases share
    /// one String per product and chain (RecentTexts), so most lookups are answered by an address
    /// compare instead of hashing the text. Each entry holds its String, so the address cannot be
    /// reused for other text while it is here.
    private var recent: [(text: String, bytes: UnsafeRawPointer, count: Int, id: Int)] = []
    private var nextRecent = 0

    /// The id of `name`, given a new one when unseen (one hash either way; none for the first
    /// few names, which are compared in turn).
    mutating func id(_ name: String) -> Int {
        if ids.isEmpty {
            for e in names.indices where names[e] == name { return e }
            if names.count < Self.compared {
                names.append(name)
                return names.count - 1
            }
            for (e, n) in names.enumerated() { ids[n] = e }
        }
        let bytes = Self.heapBytes(name)
        if let bytes {
            let count = name.utf8.count
            for r in recent where r.bytes == bytes && r.count == count { return r.id }
        }
        let next = names.count
        let id = Self.settle(&ids[name, default: next])
        if id == next { names.append(name) }
        if let bytes {
            let entry = (text: name, bytes: bytes, count: name.utf8.count, id: id)
            if recent.count < 4 { recent.append(entry) } else { recent[nextRecent] = entry; nextRecent = (nextRecent + 1) & 3 }
        }
        return id
    }

    /// Where a String's bytes live when it keeps them on the heap (more than 15 bytes: shorter
    /// ones are stored in the value itself, and their bytes have no lasting address).
    private static func heapBytes(_ s: String) -> UnsafeRawPointer? {
        guard s.utf8.count > 15 else { return nil }
        return s.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
    }

    func existingID(_ name: String) -> Int? {
        if ids.isEmpty { return names.firstIndex(of: name) }
        return ids[name]
    }

    /// Up to this many names are compared in turn (most answers name a product or two).
    private static let compared = 4

    /// Reads through the defaulting subscript's in-place access, which inserts and reads in one lookup.
    static func settle(_ slot: inout Int) -> Int { slot }
}
