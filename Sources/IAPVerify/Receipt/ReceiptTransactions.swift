// A receipt's purchases as the engine's transactions: the receipt knows its own fields, the
// engine knows only `Transaction`.

extension Transaction {
    /// A decoded receipt purchase; nil when it lacks the ids the engine needs.
    init?(_ p: InAppPurchase) {
        guard p.transactionID != nil, p.productID != nil else { return nil }
        self.init(receiptRecord: p)
    }

    /// A decoded receipt purchase as it is, for the result's `in_app`: an id the record lacks is
    /// empty (and written as null).
    init(receiptRecord p: InAppPurchase) {
        self.init(transactionID: p.transactionID ?? "", productID: p.productID ?? "")
        originalTransactionID = p.originalTransactionID
        quantity = p.quantity ?? 1
        purchaseDateMs = p.purchaseDateMs
        originalPurchaseDateMs = p.originalPurchaseDateMs
        expiresDateMs = p.expiresDateMs
        cancellationDateMs = p.cancellationDateMs
        isTrialPeriod = p.isTrialPeriod ?? false
        isInIntroOfferPeriod = p.isInIntroOfferPeriod ?? false
        webOrderLineItemID = p.webOrderLineItemID
        promotionalOfferID = p.promotionalOfferID
    }

    /// The receipt's purchases that carry the ids the engine needs, in one allocation.
    static func all(_ purchases: [InAppPurchase]) -> [Transaction] {
        var out: [Transaction] = []
        out.reserveCapacity(purchases.count)
        for p in purchases { if let t = Transaction(p) { out.append(t) } }
        return out
    }
}
