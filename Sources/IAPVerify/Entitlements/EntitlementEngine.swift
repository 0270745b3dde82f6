// What a user is entitled to at `nowMs`, from normalised transactions, renewal infos
// and the product catalog. One pure, deterministic function serves receipts, /verifyReceipt
// responses and direct input alike. Input order never matters: every choice has a total order.
// The model is in EntitlementModel.swift, the inputs' preparation in EngineInputs.swift and the
// numbering of purchases in PurchaseIndex.swift.

package enum EntitlementEngine {
    /// Evaluates everything at `nowMs`. `catalog` nil means "no products section": each product
    /// is its own entitlement, typed by whether it has an expiry.
    /// Hosts call `Verifier.computeEntitlements`, which also plans deliveries and orders.
    package static func evaluate(transactions input: consuming [Transaction], renewals: [RenewalInfo],
                                catalog: [String: ProductRule]?, grace: GracePeriodPolicy, nowMs: Int64,
                                delivered: [String] = [], orders: [PendingOrder] = []) -> EntitlementReport {
        let transactions = deduplicated(consume input, nowMs: nowMs)
        let index = PurchaseIndex(transactions, renewals: renewals, catalog: catalog, nowMs: nowMs)
        // The report's parts are locals put together once at the end, so no list is shared with a
        // report under construction.
        let purchases = purchaseRecords(transactions, index, nowMs: nowMs)
        let unknown = index.unknownProducts
        let conflicts = catalog.map { catalogConflicts($0, transactions, index.keys, index.products) } ?? []
        let entitlements = decideAll(transactions, index, renewals: renewals, catalog: catalog, grace: grace, nowMs: nowMs)
        return EntitlementReport(entitlements: entitlements, purchases: purchases, unknownProducts: unknown,
                                 catalogConflicts: conflicts,
                                 introEligible: introEligibility(transactions, index.keys, index.products, catalog: catalog),
                                 delivery: DeliveryPlanner.plan(transactions, index.keys, nowMs: nowMs, delivered: delivered, orders: orders))
    }

    /// One record per purchase, in the deduplicated order.
    private static func purchaseRecords(_ transactions: [Transaction], _ index: PurchaseIndex, nowMs: Int64) -> [PurchaseRecord] {
        var records: [PurchaseRecord] = []
        records.reserveCapacity(transactions.count)
        for i in transactions.indices {
            records.append(PurchaseRecord(
                id: transactions[i].id, originalID: transactions[i].originalID,
                productID: transactions[i].productID, type: index.keys[i].type, quantity: transactions[i].quantity,
                purchaseDateMs: transactions[i].purchaseDateMs, revoked: transactions[i].isRevoked(at: nowMs)))
        }
        return records
    }

    /// Every entitlement, sorted by id: with a catalog, each id it names; without one, each typed
    /// product that is not a consumable.
    private static func decideAll(_ transactions: [Transaction], _ index: PurchaseIndex, renewals: [RenewalInfo],
                                  catalog: [String: ProductRule]?, grace: GracePeriodPolicy, nowMs: Int64) -> [Entitlement] {
        var decider = EntitlementDecider(transactions: transactions, index: index, renewals: renewals, grace: grace, nowMs: nowMs)
        if let catalog {
            // Every entitlement id the catalog names, with the products that grant it.
            var grantors: [String: [String]] = [:]
            for (product, rule) in catalog {
                for e in rule.entitlements { grantors[e, default: []].append(product) }
            }
            for (id, grantingProducts) in grantors {
                let candidates = decider.entitlements.count
                for product in grantingProducts {
                    guard let rule = catalog[product] else { continue }
                    decider.judge(id, product, rule.type, rule.durationMs, index.products.existingID(product))
                }
                decider.decide(id, candidates: candidates)
            }
        } else {
            // Each product with a rule grants the entitlement named after it (a consumable grants
            // nothing); product names are distinct, so no two products share one.
            let names = index.products.names
            for p in names.indices {
                guard let type = index.ruleOfProduct[p]?.type, type != .consumable else { continue }
                let candidates = decider.entitlements.count
                decider.judge(names[p], names[p], type, index.ruleOfProduct[p]?.durationMs, p)
                decider.decide(names[p], candidates: candidates)
            }
        }
        decider.entitlements.sort { $0.id < $1.id }
        return decider.entitlements
    }

    // MARK: - Auto-renewable subscriptions (§7.1)

    /// - Parameter head: the chain's latest unrevoked transaction across all its products.
    static func subscriptionChain(_ id: String, _ chainID: IDText, _ all: [Transaction], _ indices: some Collection<Int>,
                                          _ renewals: [RenewalInfo], _ r: Int, _ head: IDText?, _ keys: [PurchaseKeys], _ ruleOfProduct: [RuleFacts?],
                                          _ grace: GracePeriodPolicy, _ now: Int64) -> Entitlement? {
        // The chain's renewal info read in place, never copied: only the fields the rules use.
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
        // Every field given at once: an entitlement is never changed after it is made.
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
    /// By index, so no Transaction is copied per compare.
    static func expiryOrder(_ all: [Transaction], _ a: Int, _ b: Int) -> Bool {
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

    static func nonConsumable(_ id: String, _ product: String, _ all: [Transaction],
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

    static func nonRenewing(_ id: String, _ product: String, _ durationMs: Int64?, _ all: [Transaction],
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
    /// Ties: transaction id. Fields are read in place; no candidate is copied.
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
        // Read by index, so no purchase is copied.
        for i in txns.indices {
            let group = catalog.map { $0[products.names[keys[i].product]]?.group } ?? txns[i].subscriptionGroupIdentifier
            guard let g = group else { continue }
            if groups[g] == nil { groups[g] = true }
            if txns[i].isTrialPeriod || txns[i].isInIntroOfferPeriod { groups[g] = false }
        }
        if groups.isEmpty { return [] }
        return groups.keys.sorted().map { ($0, groups[$0] ?? true) }
    }
}

/// One entitlement at a time: each granting product's purchases are judged (`judge`), then the
/// candidates they give compete (`decide`). Candidates are appended to `entitlements` past the
/// decided ones, and all but the winner dropped, so the decided list is the only list.
struct EntitlementDecider {
    let transactions: [Transaction]
    let index: PurchaseIndex
    let renewals: [RenewalInfo]
    let grace: GracePeriodPolicy
    let nowMs: Int64
    var entitlements: [Entitlement] = []
    /// The auto-renewable purchases, judged by chain in `decide`: the first granting product's run
    /// as it is while it is the only one (most entitlements), else the list `subscribed`.
    private var subscribedRun: PurchaseRun? = nil
    private var subscribed: [Int] = []

    init(transactions: [Transaction], index: PurchaseIndex, renewals: [RenewalInfo], grace: GracePeriodPolicy, nowMs: Int64) {
        (self.transactions, self.index, self.renewals, self.grace, self.nowMs) = (transactions, index, renewals, grace, nowMs)
    }

    /// Judges product `p` for entitlement `id`, by its rule's type and duration (plain values: a
    /// rule is never held).
    mutating func judge(_ id: String, _ product: String, _ type: ProductType, _ durationMs: Int64?, _ p: Int?) {
        guard let p else { return }   // a catalog product nobody bought
        switch type {
        case .autoRenewable:
            if subscribedRun == nil, subscribed.isEmpty {
                subscribedRun = index.purchases(of: p)
            } else {
                if let first = subscribedRun { subscribed.append(contentsOf: first) }
                subscribedRun = nil
                subscribed.append(contentsOf: index.purchases(of: p))
            }
        case .nonConsumable:
            if let c = EntitlementEngine.nonConsumable(id, product, transactions, index.purchases(of: p), nowMs) { entitlements.append(c) }
        case .nonRenewing:
            if let c = EntitlementEngine.nonRenewing(id, product, durationMs, transactions, index.purchases(of: p), nowMs) {
                entitlements.append(c)
            }
        case .consumable:
            break
        }
    }

    /// One chain's purchases `indices` judged as one subscription: its candidate, if any.
    private mutating func judgeChain(_ id: String, _ chain: Int, _ indices: some Collection<Int>) {
        let facts = index.chains[value: chain]
        let head = facts.head >= 0 ? transactions[facts.head].id : nil
        if let c = EntitlementEngine.subscriptionChain(id, index.chains.name(chain), transactions, indices, renewals, facts.renewal,
                                                      head, index.keys, index.ruleOfProduct, grace, nowMs) {
            entitlements.append(c)
        }
    }

    /// Judges the subscribed purchases chain by chain, then keeps the winning candidate.
    /// - Parameter candidates: where this entitlement's candidates start in `entitlements`.
    mutating func decide(_ id: String, candidates: Int) {
        judgeSubscriptions(id)
        if let k = EntitlementEngine.pick(entitlements[candidates...]) {
            // The winner is changed in place and moved to the first candidate's slot, so no
            // candidate is held outside the list.
            entitlements[k].evidence.candidates = entitlements.count - candidates
            entitlements.swapAt(k, candidates)
            entitlements.removeSubrange((candidates + 1)...)
        } else {
            entitlements.append(Entitlement(id: id, active: false, state: .notPurchased, reason: "no transaction grants \(id)",
                                            evidence: Evidence(rule: .noTransaction, transaction: nil, candidates: 0)))
        }
        subscribed.removeAll(keepingCapacity: true)
    }

    /// One candidate per chain of the subscribed purchases.
    private mutating func judgeSubscriptions(_ id: String) {
        let keys = index.keys
        // One product's run, all of one chain (most subscriptions): judged as it is.
        if let run = subscribedRun {
            subscribedRun = nil
            if let first = run.first, run.allSatisfy({ keys[$0].chain == keys[first].chain }) {
                judgeChain(id, keys[first].chain, run)
            } else {
                subscribed.append(contentsOf: run)
            }
        }
        // Grouped in chain order unless they all share one chain.
        guard !subscribed.isEmpty else { return }
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
}
