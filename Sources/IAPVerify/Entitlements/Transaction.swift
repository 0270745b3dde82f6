// The normalised transaction and renewal-info model. Receipts, /verifyReceipt responses and
// the entitlements input all become these, so one engine decides for every source.

/// One purchase, whatever it came from.
public struct Transaction: Sendable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String?
    public var productID: String
    public var quantity: Int64 = 1
    public var purchaseDateMs: Int64?
    public var originalPurchaseDateMs: Int64?
    public var expiresDateMs: Int64?
    public var cancellationDateMs: Int64?
    /// Apple's `cancellation_reason`: "1" an issue in the app, "0" other.
    public var cancellationReason: String?
    public var isUpgraded = false
    public var isTrialPeriod = false
    public var isInIntroOfferPeriod = false
    /// `PURCHASED` or `FAMILY_SHARED` when known.
    public var ownershipType: String?
    public var webOrderLineItemID: String?
    public var promotionalOfferID: String?
    public var subscriptionGroupIdentifier: String?

    public init(transactionID: String, productID: String) {
        self.transactionID = transactionID
        self.productID = productID
    }

    /// The renewal chain this transaction belongs to.
    var chainID: String { originalTransactionID ?? transactionID }

    func isRevoked(at nowMs: Int64) -> Bool {
        guard let c = cancellationDateMs else { return false }
        return c <= nowMs
    }
}

/// Apple's pending renewal info for one subscription chain.
public struct RenewalInfo: Sendable, Equatable {
    public var originalTransactionID: String
    public var productID: String?
    public var autoRenewProductID: String?
    public var autoRenewStatus: Bool?
    public var expirationIntent: Int64?
    public var isInBillingRetryPeriod: Bool?
    public var gracePeriodExpiresDateMs: Int64?
    public var priceConsentStatus: String?

    public init(originalTransactionID: String) { self.originalTransactionID = originalTransactionID }
}

extension Transaction {
    /// A decoded receipt purchase; nil when it lacks the ids the engine needs.
    init?(_ p: InAppPurchase) {
        guard let id = p.transactionID, let product = p.productID else { return nil }
        self.init(transactionID: id, productID: product)
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

    /// When two records share a transaction id, the one that revokes or reaches further wins,
    /// so the choice never depends on input order and never grants more than either record.
    static func preferred(_ a: Transaction, _ b: Transaction) -> Transaction {
        switch (a.cancellationDateMs, b.cancellationDateMs) {
        case (let x?, let y?): if x != y { return x < y ? a : b }
        case (.some, nil): return a
        case (nil, .some): return b
        case (nil, nil): break
        }
        if a.isUpgraded != b.isUpgraded { return a.isUpgraded ? a : b }
        switch (a.expiresDateMs, b.expiresDateMs) {
        case (let x?, let y?): if x != y { return x > y ? a : b }
        case (.some, nil): return a
        case (nil, .some): return b
        case (nil, nil): break
        }
        return a.ownershipType ?? "" >= b.ownershipType ?? "" ? a : b
    }
}

/// Orders transaction ids numerically when both are digits (Apple's are), else as text.
func transactionIDLess(_ a: String, _ b: String) -> Bool {
    if a.utf8.count != b.utf8.count, a.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), b.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
        return a.utf8.count < b.utf8.count
    }
    return a < b
}
