// What a user is entitled to at `nowMs`, from normalised transactions, renewal infos
// and the product catalog. One pure, deterministic function serves receipts, /verifyReceipt
// responses and direct input alike. Input order never matters: every choice has a total order.

public enum EntitlementState: String, Sendable, CaseIterable {
    case active
    case gracePeriod = "grace_period"
    case billingRetry = "billing_retry"
    case expired
    case refunded
    case upgraded
    case owned
    case notPurchased = "not_purchased"
}

/// The rule of the engine that decided an entitlement (`evidence.rule` in the result).
public enum EntitlementRule: String, Sendable, CaseIterable {
    case noTransaction = "no_transaction"
    case autoRenewableLatestExpiryCoversNow = "auto_renewable.latest_expiry_covers_now"
    case autoRenewableRevokedCoversNow = "auto_renewable.revoked_covers_now"
    case autoRenewableAllRevoked = "auto_renewable.all_revoked"
    case autoRenewableBillingGracePeriod = "auto_renewable.billing_grace_period"
    case autoRenewableBillingRetry = "auto_renewable.billing_retry"
    case autoRenewableExpired = "auto_renewable.expired"
    case nonConsumableOwned = "non_consumable.owned"
    case nonConsumableReboughtAfterRefund = "non_consumable.rebought_after_refund"
    case nonConsumableRevoked = "non_consumable.revoked"
    case nonRenewingWindowCoversNow = "non_renewing.window_covers_now"
    case nonRenewingRevokedCoversNow = "non_renewing.revoked_covers_now"
    case nonRenewingExpired = "non_renewing.expired"
}

/// Which kind of period the deciding transaction of a subscription is.
public enum PeriodKind: String, Sendable {
    case trial, intro, normal
}

/// Who holds the purchase that decided an entitlement.
public enum Ownership: String, Sendable {
    case purchased
    case familyShared = "family_shared"
    case assigned
}

/// Which transaction decided an entitlement, and by which rule.
public struct Evidence: Sendable, Equatable {
    public var rule: EntitlementRule
    public var transactionID: String? {
        get { transaction?.string }
        set { transaction = newValue.map(IDText.init) }
    }
    /// The id as the deciding transaction holds it (no String until one is asked for).
    var transaction: IDText?
    /// How many candidates (chains or products) competed for this entitlement.
    public var candidates: Int
    /// The deciding transaction's billing plan (monthly billing with a commitment), when signed.
    public var billing: BillingEvidence? = nil
}

/// A billing plan as the deciding transaction states it: monthly payments toward a commitment
/// (say twelve months) still grant access one paid month at a time, so `expires_date_ms` stays the
/// paid period's end; these facts say where in the commitment the customer is.
public struct BillingEvidence: Sendable, Equatable {
    public var planType: String?
    public var billingPeriodNumber: Int64?
    public var totalBillingPeriods: Int64?
    public var commitmentExpiresDateMs: Int64?
}

/// One Advanced Commerce item of the deciding purchase: active while the entitlement is and the
/// item itself was not revoked.
public struct EntitlementItem: Sendable, Equatable {
    public var sku: String
    public var active: Bool
    public var revocationDateMs: Int64?
}

public struct Entitlement: Sendable, Equatable {
    public var id: String
    public var active: Bool
    public var state: EntitlementState
    public var productID: String?
    public var originalTransactionID: String? {
        get { originalTransaction?.string }
        set { originalTransaction = newValue.map(IDText.init) }
    }
    public var transactionID: String? {
        get { transaction?.string }
        set { transaction = newValue.map(IDText.init) }
    }
    /// The ids as the deciding transaction holds them (no String until one is asked for).
    var originalTransaction: IDText?
    var transaction: IDText?
    public var expiresDateMs: Int64?
    public var willRenew: Bool?
    public var renewsTo: String?
    public var period: PeriodKind?
    public var ownership: Ownership?
    public var expirationReason: String?
    /// For a refund: Apple's cancellation_reason ("1" an issue in the app, "0" other).
    public var cancellationReason: String?
    public var reason: String
    public var evidence: Evidence
    /// Tier of the deciding product (1 is highest); used only to pick between candidates.
    var level: Int64?
    /// A price increase on the subscription's next renewal: "pending" (no answer yet) or
    /// "accepted"; nil when there is none.
    public var priceIncrease: String? = nil
    /// For a revoked purchase, Apple's revocationType (REFUND_FULL, REFUND_PRORATED,
    /// FAMILY_REVOKE, ASSIGNMENT_REVOKE); access ends at the revocation date for each.
    public var revocationType: String? = nil
    /// Advanced Commerce: each item of the deciding purchase and whether it grants now.
    public var items: [EntitlementItem]? = nil

    /// The same entitlement with what the deciding transaction's commerce fields add: its billing
    /// plan in the evidence, its Advanced Commerce items. Called only for signed transactions.
    func withCommerce(of t: Transaction, nowMs: Int64) -> Entitlement {
        let c = t.commerce
        guard c.billingPlanType != nil || c.commitmentTotalBillingPeriods != nil || c.advancedCommerce != nil else { return self }
        var e = self
        if c.billingPlanType != nil || c.commitmentTotalBillingPeriods != nil {
            e.evidence.billing = BillingEvidence(planType: c.billingPlanType, billingPeriodNumber: c.commitmentBillingPeriodNumber,
                                                 totalBillingPeriods: c.commitmentTotalBillingPeriods,
                                                 commitmentExpiresDateMs: c.commitmentExpiresDateMs)
        }
        if let info = c.advancedCommerce {
            e.items = info.items.map { EntitlementItem(sku: $0.sku, active: active && !$0.isRevoked(at: nowMs), revocationDateMs: $0.revocationDateMs) }
        }
        return e
    }
}

public struct PurchaseRecord: Sendable, Equatable {
    public var transactionID: String {
        get { id.string }
        set { id = IDText(newValue) }
    }
    public var originalTransactionID: String? {
        get { originalID?.string }
        set { originalID = newValue.map(IDText.init) }
    }
    /// The ids as the transaction holds them (written to the result without a String).
    var id: IDText
    var originalID: IDText?
    public var productID: String
    /// nil for a product the catalog does not list (printed as "unknown").
    public var type: ProductType?
    public var quantity: Int64
    public var purchaseDateMs: Int64?
    public var revoked: Bool
}

/// A catalog entry whose type contradicts the type Apple signed for the product's purchases.
/// The catalog's rule is used (it is the developer's decision), and the result says so.
public struct CatalogConflict: Sendable, Equatable {
    public var productID: String
    public var catalogType: ProductType
    /// As Apple wrote it, e.g. "Consumable".
    public var signedType: String
}

public struct EntitlementReport: Sendable {
    // No field has a default value: an init that stores defaults and then the real values kept
    // `self` in memory and copied it on the way out (every list retained and released).
    public internal(set) var entitlements: [Entitlement]
    public internal(set) var purchases: [PurchaseRecord]
    public internal(set) var unknownProducts: [String]
    public internal(set) var catalogConflicts: [CatalogConflict]
    /// Group → still eligible for an introductory offer, sorted by group.
    public internal(set) var introEligible: [(group: String, eligible: Bool)]
    public internal(set) var delivery: DeliveryPlan

    public init() {
        self.init(entitlements: [], purchases: [], unknownProducts: [], catalogConflicts: [], introEligible: [],
                  delivery: DeliveryPlan())
    }

    init(entitlements: [Entitlement], purchases: [PurchaseRecord], unknownProducts: [String], catalogConflicts: [CatalogConflict],
         introEligible: [(group: String, eligible: Bool)], delivery: DeliveryPlan) {
        self.entitlements = entitlements
        self.purchases = purchases
        self.unknownProducts = unknownProducts
        self.catalogConflicts = catalogConflicts
        self.introEligible = introEligible
        self.delivery = delivery
    }

    public func entitlement(_ id: String) -> Entitlement? { entitlements.first { $0.id == id } }
}

package enum EntitlementEngine {
    /// Evaluates everything at `nowMs`. `catalog` nil means "no products section": each product
    /// is its own entitlement, typed by whether it has an expiry.
    /// Hosts call `Verifier.computeEntitlements`, which also plans deliveries and orders.
    package static func evaluate(transactions input: consuming [Transaction], renewals: [RenewalInfo],
                                catalog: [String: ProductRule]?, grace: GracePeriodPolicy, nowMs: Int64,
                                delivered: [String] = [], orders: [PendingOrder] = []) -> EntitlementReport {
        let transactions = deduplicated(consume input)
        // Each product and chain id is hashed once, here; the walks below index arrays by these
        // small integers, and use indices into `transactions`, so no purchase is copied while
        // it is being judged.
        // Each chain keeps, by its number, its renewal info and its latest unrevoked purchase (-1:
        // none yet).
        var products = InternTable(), chains = IDInternTable(initial: (renewal: -1, head: -1))
        // Each purchase's product and chain numbers (and, below, its product's type), in one list
        // (three lists were three allocations). By index: `map` handed each purchase to its
        // closure as a copy (every text field retained).
        var keys: [PurchaseKeys] = []
        keys.reserveCapacity(transactions.count)
        for i in transactions.indices {
            keys.append(PurchaseKeys(product: products.id(transactions[i].productID),
                                     chain: chains.id(transactions[i].chain), type: nil))
        }
        // Each product's rule, by product number: the catalog's, or the one its purchases imply.
        let ruleOfProduct: [RuleFacts?] = catalog.map { c in products.names.map { c[$0].map(RuleFacts.init) } }
            ?? inferredRules(transactions, keys, products)
        // Each purchase's product type (a rule copied per purchase retained its texts).
        for i in keys.indices { keys[i].type = ruleOfProduct[keys[i].product]?.type }
        // Each chain's renewal info. By index: a RenewalInfo copy retains each of its twenty-odd
        // text fields. Keyed by chain number (the chains table joins ids as String equality does):
        // no String per chain.
        for k in renewals.indices {
            let chain = chains.id(IDText(renewals[k].originalTransactionID))
            let old = chains[value: chain].renewal
            if old < 0 || renewalPrefersSecond(renewals, old, k) { chains[value: chain].renewal = k }
        }

        // The report's parts as locals, put together once at the end: a report built in place and
        // returned was copied on its way out (every list retained and released).
        var purchaseRecords: [PurchaseRecord] = []
        purchaseRecords.reserveCapacity(transactions.count)
        for i in transactions.indices {
            purchaseRecords.append(PurchaseRecord(
                id: transactions[i].id, originalID: transactions[i].originalID,
                productID: transactions[i].productID, type: keys[i].type, quantity: transactions[i].quantity,
                purchaseDateMs: transactions[i].purchaseDateMs, revoked: transactions[i].isRevoked(at: nowMs)))
        }
        // With a catalog: the products it does not name. Without one: the products whose type
        // Apple's signatures leave unknown or ambiguous. Either way they grant nothing.
        var unknownProducts: [String] = []
        for p in products.names.indices where ruleOfProduct[p] == nil { unknownProducts.append(products.names[p]) }
        if unknownProducts.count > 1 { unknownProducts.sort() }
        let conflicts = catalog.map { catalogConflicts($0, transactions, keys, products) } ?? []

        // Each product's purchases, in purchase order: `purchaseList[purchaseStart[p]..<purchaseStart[p + 1]]`
        // (one list for all products; with one product, the purchases themselves, and no list).
        var purchaseList: [Int] = []
        var purchaseStart: [Int] = []
        if products.names.count > 1 {
            purchaseList = Array(transactions.indices)
            purchaseStart = [Int](repeating: 0, count: products.names.count + 1)
            for i in transactions.indices { purchaseStart[keys[i].product + 1] += 1 }
            for p in products.names.indices { purchaseStart[p + 1] += purchaseStart[p] }
            var next = purchaseStart
            for i in transactions.indices {
                purchaseList[next[keys[i].product]] = i
                next[keys[i].product] += 1
            }
        }
        func purchases(of p: Int) -> PurchaseRun {
            purchaseStart.isEmpty ? PurchaseRun(list: [], startIndex: 0, endIndex: transactions.count)
                : PurchaseRun(list: purchaseList, startIndex: purchaseStart[p], endIndex: purchaseStart[p + 1])
        }
        // The latest unrevoked period of each whole chain (all its products): only that period
        // can be in billing retry or grace, whatever entitlement is being evaluated.
        for i in transactions.indices where keys[i].type == .autoRenewable && !transactions[i].isRevoked(at: nowMs) {
            let h = chains[value: keys[i].chain].head
            if h >= 0, !expiryOrder(transactions, h, i) { continue }
            chains[value: keys[i].chain].head = i
        }

        // One entitlement at a time: each granting product's purchases are judged (`judge`), then
        // the candidates they give compete (`decide`). The candidates are appended to
        // `entitlements` itself, past the decided ones, and all but the winner dropped (a list of
        // their own was one more allocation).
        var entitlements: [Entitlement] = []
        // The auto-renewable purchases, judged by chain in `decide`: the first granting product's
        // run as it is, while it is the only one (most entitlements: no list made), else a list.
        var subscribedRun: PurchaseRun? = nil
        var subscribed: [Int] = []
        // By the rule's type and duration: a rule passed whole was copied (its texts retained).
        func judge(_ id: String, _ product: String, _ type: ProductType, _ durationMs: Int64?, _ p: Int?) {
            guard let p else { return }   // a catalog product nobody bought
            switch type {
            case .autoRenewable:
                if subscribedRun == nil, subscribed.isEmpty {
                    subscribedRun = purchases(of: p)
                } else {
                    if let first = subscribedRun { subscribed.append(contentsOf: first) }
                    subscribedRun = nil
                    subscribed.append(contentsOf: purchases(of: p))
                }
            case .nonConsumable:
                if let c = nonConsumable(id, product, transactions, purchases(of: p), nowMs) { entitlements.append(c) }
            case .nonRenewing:
                if let c = nonRenewing(id, product, durationMs, transactions, purchases(of: p), nowMs) { entitlements.append(c) }
            case .consumable:
                break
            }
        }
        /// One chain's purchases `indices` judged as one subscription: its candidate, if any.
        func judgeChain(_ id: String, _ chain: Int, _ indices: some Collection<Int>) {
            let facts = chains[value: chain]
            let head = facts.head >= 0 ? transactions[facts.head].id : nil
            if let c = subscriptionChain(id, chains.name(chain), transactions, indices,
                                         renewals, facts.renewal, head, keys, ruleOfProduct, grace, nowMs) {
                entitlements.append(c)
            }
        }
        /// - Parameter candidates: where this entitlement's candidates start in `entitlements`.
        func decide(_ id: String, candidates: Int) {
            // One product's run, all of one chain (most subscriptions): judged as it is.
            if let run = subscribedRun {
                subscribedRun = nil
                if let first = run.first, run.allSatisfy({ keys[$0].chain == keys[first].chain }) {
                    judgeChain(id, keys[first].chain, run)
                } else {
                    subscribed.append(contentsOf: run)
                }
            }
            // The subscribed purchases by chain (one candidate per chain): grouped in chain order
            // unless they all share one chain.
            if !subscribed.isEmpty {
                let first = keys[subscribed[0]].chain
                if !subscribed.allSatisfy({ keys[$0].chain == first }) {
                    subscribed.sort { keys[$0].chain != keys[$1].chain ? keys[$0].chain < keys[$1].chain : $0 < $1 }
                }
                var start = 0
                while start < subscribed.count {
                    let chain = keys[subscribed[start]].chain
                    var end = start + 1
                    while end < subscribed.count, keys[subscribed[end]].chain == chain { end += 1 }
                    judgeChain(id, chain, subscribed[start..<end])
                    start = end
                }
            }
            if let k = pick(entitlements[candidates...]) {
                // Changed where it is, moved to the first candidate's place, the others dropped
                // (a local changed and appended was copied).
                entitlements[k].evidence.candidates = entitlements.count - candidates
                entitlements.swapAt(k, candidates)
                entitlements.removeSubrange((candidates + 1)...)
            } else {
                entitlements.append(Entitlement(id: id, active: false, state: .notPurchased, reason: "no transaction grants \(id)",
                                                evidence: Evidence(rule: .noTransaction, transaction: nil, candidates: 0)))
            }
            subscribed.removeAll(keepingCapacity: true)
        }
        if let catalog {
            // Every entitlement id the catalog names, with the products that grant it.
            var grantors: [String: [String]] = [:]
            for (product, rule) in catalog {
                for e in rule.entitlements { grantors[e, default: []].append(product) }
            }
            for (id, grantingProducts) in grantors {
                let candidates = entitlements.count
                for product in grantingProducts {
                    guard let rule = catalog[product] else { continue }
                    judge(id, product, rule.type, rule.durationMs, products.existingID(product))
                }
                decide(id, candidates: candidates)
            }
        } else {
            // Each product with a rule grants the entitlement named after it (a consumable grants
            // nothing); product names are distinct, so no two products share one.
            for p in products.names.indices {
                guard let type = ruleOfProduct[p]?.type, type != .consumable else { continue }
                let candidates = entitlements.count
                judge(products.names[p], products.names[p], type, ruleOfProduct[p]?.durationMs, p)
                decide(products.names[p], candidates: candidates)
            }
        }
        entitlements.sort { $0.id < $1.id }
        return EntitlementReport(entitlements: entitlements, purchases: purchaseRecords, unknownProducts: unknownProducts,
                                 catalogConflicts: conflicts,
                                 introEligible: introEligibility(transactions, keys, products, catalog: catalog),
                                 delivery: DeliveryPlanner.plan(transactions, keys, nowMs: nowMs, delivered: delivered, orders: orders))
    }

    // MARK: - Inputs

    /// One record per transaction id, chosen without regard to input order.
    static func deduplicated(_ input: consuming [Transaction]) -> [Transaction] {
        // Worked in place: the list is the caller's to give up, so dropping and ordering records
        // moves them and copies none (a copy retains every text field of a purchase).
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
                if Transaction.prefersSecond(items[chosen[k]], items[i]) { chosen[k] = i }
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
        // scratch block, then back. (Swapping in place went through the type's value witnesses,
        // three moves a swap.) Nothing between the two moves can fail.
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

    /// True when renewal `b` wins over `a` for their chain (by index: read in place, not copied).
    private static func renewalPrefersSecond(_ all: [RenewalInfo], _ a: Int, _ b: Int) -> Bool {
        // The later signed statement is Apple's current word; unsigned ones fail closed.
        if let x = all[a].commerce.signedDateMs, let y = all[b].commerce.signedDateMs, x != y { return !(x > y) }
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
    private static func inferredRules(_ transactions: [Transaction], _ keys: [PurchaseKeys], _ products: InternTable) -> [RuleFacts?] {
        // Every product first as a purchase without expiry implies, then auto-renewable where
        // one of its purchases expires (one list: a list of flags beside it was an allocation).
        // The entitlement each grants is named after the product (`evaluate`). Appended, not
        // `Array(repeating:count:)`, which looked up the array's type metadata on every call.
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
    private static func catalogConflicts(_ catalog: [String: ProductRule], _ transactions: [Transaction],
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

    // MARK: - Auto-renewable subscriptions (§7.1)

    /// - Parameter head: the chain's latest unrevoked transaction across all its products.
    private static func subscriptionChain(_ id: String, _ chainID: IDText, _ all: [Transaction], _ indices: some Collection<Int>,
                                          _ renewals: [RenewalInfo], _ r: Int, _ head: IDText?, _ keys: [PurchaseKeys], _ ruleOfProduct: [RuleFacts?],
                                          _ grace: GracePeriodPolicy, _ now: Int64) -> Entitlement? {
        // The chain's renewal info read in place (passed as a value it was copied, every text
        // retained and released): only the fields the rules use.
        let renewed = r >= 0
        let willRenew = renewed ? renewals[r].autoRenewStatus : nil
        let renewsTo = renewed ? renewals[r].autoRenewProductID : nil
        let inBillingRetry = renewed && renewals[r].isInBillingRetryPeriod == true
        let graceEnd = renewed ? renewals[r].gracePeriodExpiresDateMs : nil
        let intent = renewed ? renewals[r].expirationIntent : nil
        let increase = renewed ? priceIncrease(renewals, r) : nil
        // The latest unrevoked purchase, the latest revoked one and the latest revoked one that
        // would cover now (by the total expiry order), in one pass.
        var current = -1, revoked = -1, covering = -1
        for i in indices {
            if all[i].isRevoked(at: now) {
                if revoked < 0 || expiryOrder(all, revoked, i) { revoked = i }
                if let e = all[i].expiresDateMs, (all[i].purchaseDateMs ?? Int64.min) <= now, now < e,
                   covering < 0 || expiryOrder(all, covering, i) { covering = i }
            } else if current < 0 || expiryOrder(all, current, i) {
                current = i
            }
        }
        // Every field given at once: an entitlement made and then changed was copied on its way out
        // (every text retained and released).
        func make(_ i: Int, _ state: EntitlementState, active: Bool, expires: Int64?, rule: EntitlementRule,
                  reason: String, ended: Bool = false, expirationReason: String? = nil) -> Entitlement {
            let refund = ended && !all[i].isUpgraded
            let e = Entitlement(
                id: id, active: active, state: state, productID: all[i].productID, originalTransaction: all[i].originalID ?? chainID,
                transaction: all[i].id, expiresDateMs: expires, willRenew: willRenew,
                renewsTo: renewsTo.flatMap { $0 == all[i].productID ? nil : $0 },
                period: all[i].isTrialPeriod ? .trial : all[i].isInIntroOfferPeriod ? .intro : .normal,
                ownership: ownership(all[i]), expirationReason: expirationReason,
                cancellationReason: refund ? all[i].cancellationReason : nil, reason: reason,
                evidence: Evidence(rule: rule, transaction: all[i].id, candidates: 1), level: ruleOfProduct[keys[i].product]?.level,
                priceIncrease: ended ? nil : increase, revocationType: refund ? all[i].revocationType : nil)
            return all[i].hasCommerce ? e.withCommerce(of: all[i], nowMs: now) : e
        }
        if current >= 0, let expires = all[current].expiresDateMs, (all[current].purchaseDateMs ?? Int64.min) <= now, now < expires {
            return make(current, .active, active: true, expires: expires, rule: .autoRenewableLatestExpiryCoversNow,
                        reason: RFC3339.sentence(all[current].productID, " is paid until ", expires)
                            + (willRenew == false ? "; auto-renew is off, which does not end the paid period" : ""))
        }
        // A revoked transaction that would cover now: the chain ended by refund or upgrade.
        let ended = covering >= 0 ? covering : current < 0 ? revoked : -1
        if ended >= 0 {
            let r = all[ended]
            return make(ended, r.isUpgraded ? .upgraded : .refunded, active: false, expires: r.expiresDateMs,
                        rule: covering >= 0 ? .autoRenewableRevokedCoversNow : .autoRenewableAllRevoked,
                        reason: r.isUpgraded
                            ? RFC3339.sentence(r.productID, " was upgraded at ", r.cancellationDateMs ?? 0)
                            : RFC3339.sentence(r.productID, " was refunded at ", r.cancellationDateMs ?? 0)
                                + (r.cancellationReason.map { " (cancellation_reason \($0))" } ?? ""),
                        ended: true)
        }
        guard current >= 0 else { return nil }
        if inBillingRetry, all[current].id == head {
            if grace == .honor, let g = graceEnd, g > now {
                return make(current, .gracePeriod, active: true, expires: g, rule: .autoRenewableBillingGracePeriod,
                            reason: "billing failed; access continues in the grace period until \(RFC3339.format(g))")
            }
            return make(current, .billingRetry, active: false, expires: all[current].expiresDateMs, rule: .autoRenewableBillingRetry,
                        reason: "billing failed and Apple is retrying; no access without a grace period")
        }
        return make(current, .expired, active: false, expires: all[current].expiresDateMs, rule: .autoRenewableExpired,
                    reason: all[current].expiresDateMs.map { RFC3339.sentence(all[current].productID, " expired at ", $0) }
                        ?? "\(all[current].productID) expired at (no expiry)",
                    expirationReason: intent.map(expirationReason))
    }

    static func ownership(_ t: Transaction) -> Ownership {
        switch t.ownershipType {
        case "FAMILY_SHARED": return .familyShared
        case "ASSIGNED": return .assigned
        default: return .purchased
        }
    }

    /// StoreKit 2's priceIncreaseStatus, else /verifyReceipt's price_consent_status.
    static func priceIncrease(_ renewals: [RenewalInfo], _ r: Int) -> String? {
        guard renewals[r].autoRenewStatus != false else { return nil }
        if let s = renewals[r].priceIncreaseStatus { return s == 0 ? "pending" : s == 1 ? "accepted" : nil }
        switch renewals[r].priceConsentStatus {
        case "0": return "pending"
        case "1": return "accepted"
        default: return nil
        }
    }

    static func expirationReason(_ intent: Int64) -> String {
        switch intent {
        case 1: return "voluntary"
        case 2: return "billing_error"
        case 3: return "price_increase_declined"
        case 4: return "product_unavailable"
        default: return "unknown"
        }
    }

    /// Orders by expiry, then purchase date, then transaction id: a total order.
    /// (By index: a Transaction passed by value was copied, every text field retained, per compare.)
    private static func expiryOrder(_ all: [Transaction], _ a: Int, _ b: Int) -> Bool {
        let ae = all[a].expiresDateMs ?? Int64.min, be = all[b].expiresDateMs ?? Int64.min
        if ae != be { return ae < be }
        let ap = all[a].purchaseDateMs ?? Int64.min, bp = all[b].purchaseDateMs ?? Int64.min
        if ap != bp { return ap < bp }
        return IDText.idLess(all[a].id, all[b].id)
    }

    // MARK: - Other product types (§7.2)

    private static func plain(_ id: String, _ t: Transaction, _ state: EntitlementState, active: Bool, expires: Int64?,
                              rule: EntitlementRule, reason: String, now: Int64) -> Entitlement {
        let e = Entitlement(id: id, active: active, state: state, productID: t.productID, originalTransaction: t.originalID,
                    transaction: t.id, expiresDateMs: expires, willRenew: nil, renewsTo: nil, period: nil,
                    ownership: ownership(t), expirationReason: nil,
                    cancellationReason: t.isRevoked(at: Int64.max) ? t.cancellationReason : nil, reason: reason,
                    evidence: Evidence(rule: rule, transaction: t.id, candidates: 1),
                    revocationType: t.isRevoked(at: Int64.max) ? t.revocationType : nil)
        return t.hasCommerce ? e.withCommerce(of: t, nowMs: now) : e
    }

    private static func nonConsumable(_ id: String, _ product: String, _ all: [Transaction],
                                      _ indices: PurchaseRun, _ now: Int64) -> Entitlement? {
        let byPurchase = { (a: Int, b: Int) in purchaseOrder(all[a], all[b]) }
        let owned = indices.filter { !all[$0].isRevoked(at: now) && (all[$0].purchaseDateMs ?? Int64.min) <= now }
        if let t = owned.max(by: byPurchase).map({ all[$0] }) {
            let rebought = indices.contains { all[$0].isRevoked(at: now) }
            return plain(id, t, .owned, active: true, expires: nil, rule: rebought ? .nonConsumableReboughtAfterRefund : .nonConsumableOwned,
                         reason: rebought ? "\(product) was refunded once and bought again" : "\(product) is owned", now: now)
        }
        if let t = indices.filter({ all[$0].isRevoked(at: now) }).max(by: byPurchase).map({ all[$0] }) {
            return plain(id, t, .refunded, active: false, expires: nil, rule: .nonConsumableRevoked,
                         reason: RFC3339.sentence(product, " was refunded at ", t.cancellationDateMs ?? 0), now: now)
        }
        return nil
    }

    private static func nonRenewing(_ id: String, _ product: String, _ durationMs: Int64?, _ all: [Transaction],
                                    _ indices: PurchaseRun, _ now: Int64) -> Entitlement? {
        guard let duration = durationMs else { return nil }
        let txns = indices.map { all[$0] }  // a window product has few purchases
        func end(_ t: Transaction) -> Int64? {
            guard let p = t.purchaseDateMs else { return nil }
            let (e, overflow) = p.addingReportingOverflow(duration)
            return overflow ? Int64.max : e
        }
        func covers(_ t: Transaction) -> Bool {
            guard let p = t.purchaseDateMs, let e = end(t) else { return false }
            return p <= now && now < e
        }
        let valid = txns.filter { !$0.isRevoked(at: now) && $0.purchaseDateMs != nil }
        let latestEnd = valid.compactMap(end).max()
        if let t = valid.filter(covers).max(by: purchaseOrder) {
            return plain(id, t, .active, active: true, expires: latestEnd, rule: .nonRenewingWindowCoversNow,
                         reason: "\(product) covers now; the latest purchased window ends \(RFC3339.format(latestEnd ?? 0))", now: now)
        }
        if let t = txns.filter({ $0.isRevoked(at: now) && covers($0) }).max(by: purchaseOrder) {
            return plain(id, t, .refunded, active: false, expires: end(t), rule: .nonRenewingRevokedCoversNow,
                         reason: RFC3339.sentence(product, " was refunded at ", t.cancellationDateMs ?? 0), now: now)
        }
        if let t = valid.max(by: purchaseOrder) {
            return plain(id, t, .expired, active: false, expires: latestEnd, rule: .nonRenewingExpired,
                         reason: RFC3339.sentence(product, " ended at ", latestEnd ?? 0), now: now)
        }
        return nil
    }

    private static func purchaseOrder(_ a: Transaction, _ b: Transaction) -> Bool {
        let ap = a.purchaseDateMs ?? Int64.min, bp = b.purchaseDateMs ?? Int64.min
        if ap != bp { return ap < bp }
        return IDText.idLess(a.id, b.id)
    }

    // MARK: - Choosing between candidates

    /// The candidate that wins: active beats inactive; among active: permanent ownership, then the
    /// highest tier (lowest level), then the latest expiry. Among inactive: the latest expiry.
    /// Ties: transaction id. (Fields read in place: a candidate copied retained every text.)
    static func pick(_ candidates: ArraySlice<Entitlement>) -> Int? {
        candidates.indices.min { a, b in
            if candidates[a].active != candidates[b].active { return candidates[a].active }
            if candidates[a].active {
                let ap = candidates[a].state == .owned, bp = candidates[b].state == .owned
                if ap != bp { return ap }
                let al = candidates[a].level ?? Int64.max, bl = candidates[b].level ?? Int64.max
                if al != bl { return al < bl }
            }
            let ae = candidates[a].expiresDateMs ?? Int64.min, be = candidates[b].expiresDateMs ?? Int64.min
            if ae != be { return ae > be }
            return IDText.idLess(candidates[a].transaction ?? .empty, candidates[b].transaction ?? .empty)
        }
    }

    // MARK: - Introductory offers

    private static func introEligibility(_ txns: [Transaction], _ keys: [PurchaseKeys], _ products: InternTable,
                                         catalog: [String: ProductRule]?) -> [(group: String, eligible: Bool)] {
        var groups: [String: Bool] = [:]
        if let catalog {
            for (_, rule) in catalog where rule.type == .autoRenewable {
                if let g = rule.group { groups[g] = true }
            }
        }
        // By index: a purchase read in place, not copied (a copy retains every text field).
        for i in txns.indices {
            let group = catalog.map { $0[products.names[keys[i].product]]?.group } ?? txns[i].subscriptionGroupIdentifier
            guard let g = group else { continue }
            if groups[g] == nil { groups[g] = true }
            if txns[i].isTrialPeriod || txns[i].isInIntroOfferPeriod { groups[g] = false }
        }
        if groups.isEmpty { return [] }   // (sorting no keys still made a list)
        return groups.keys.sorted().map { ($0, groups[$0] ?? true) }
    }
}

/// Small integer ids for strings, given in order of first sight.
/// What the engine knows of a purchase by number: its product's and its chain's (InternTable,
/// IDInternTable) and its product's type (nil when no rule types it).
/// What the engine reads of a product's rule, all plain values (a ProductRule read out of an
/// array was copied, its texts retained and released, at every use).
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

struct PurchaseKeys {
    var product: Int
    var chain: Int
    var type: ProductType?
}

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
