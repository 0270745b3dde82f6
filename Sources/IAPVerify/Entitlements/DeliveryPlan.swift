// What to deliver, what to take back, and which pending order each purchase pays.
// The library is stateless: the host passes what it already delivered and gets a plan back.

public struct DeliveryItem: Sendable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String?
    public var productID: String
    public var quantity: Int64
    public var purchaseDateMs: Int64?
}

public struct OrderMatch: Sendable, Equatable {
    public var orderID: String
    public var transactionID: String?
    public var matched: Bool { transactionID != nil }
}

public struct DeliveryPlan: Sendable, Equatable {
    public var toDeliver: [DeliveryItem] = []
    public var toRevoke: [DeliveryItem] = []
    public var orders: [OrderMatch] = []
}

enum DeliveryPlanner {
    /// A purchase may pay an order created up to this long after it (clock skew, slow clients).
    static let orderSlackMs: Int64 = 5 * 60 * 1000

    /// - Parameter keys: each transaction's numbers and its product's type (nil when unlisted).
    static func plan(_ transactions: [Transaction], _ keys: [PurchaseKeys], nowMs: Int64,
                     delivered: [String], orders: [PendingOrder]) -> DeliveryPlan {
        let deliveredSet = Set(delivered)
        func item(_ t: Transaction) -> DeliveryItem {
            DeliveryItem(transactionID: t.transactionID, originalTransactionID: t.originalTransactionID, productID: t.productID,
                         quantity: t.quantity, purchaseDateMs: t.purchaseDateMs)
        }
        var plan = DeliveryPlan()
        // `transactions` arrive de-duplicated and sorted by purchase date, then id.
        // Read by index, so no purchase is copied.
        for i in transactions.indices {
            let revoked = transactions[i].isRevoked(at: nowMs)
            if !deliveredSet.isEmpty, deliveredSet.contains(transactions[i].transactionID) {
                if revoked { plan.toRevoke.append(item(transactions[i])) }
                continue
            }
            guard !revoked, let type = keys[i].type, type == .consumable || type == .nonConsumable else { continue }
            plan.toDeliver.append(item(transactions[i]))
        }
        // Oldest order first; each takes the oldest qualifying purchase of the same product.
        var used = Set<String>()
        // Fewer than two orders are used as given, unsorted.
        let sortedOrders = orders.count < 2 ? orders : orders.sorted { ($0.createdMs, $0.orderID) < ($1.createdMs, $1.orderID) }
        for order in sortedOrders {
            let earliest = order.createdMs.subtractingReportingOverflow(orderSlackMs)
            let floor = earliest.overflow ? Int64.min : earliest.partialValue
            let match = transactions.indices.first { i in
                transactions[i].productID == order.productID && !used.contains(transactions[i].transactionID)
                    && !deliveredSet.contains(transactions[i].transactionID) && !transactions[i].isRevoked(at: nowMs)
                    && (transactions[i].purchaseDateMs.map { $0 >= floor } ?? false)
            }.map { transactions[$0].transactionID }
            if let match { used.insert(match) }
            plan.orders.append(OrderMatch(orderID: order.orderID, transactionID: match))
        }
        return plan
    }
}
