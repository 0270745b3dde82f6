// The entitlement engine's answer: entitlements with their evidence, the purchase records, the
// catalog's conflicts with what Apple signed, intro offer eligibility and the delivery plan.

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
public enum PeriodKind: String, Sendable, CaseIterable {
    case trial, intro, normal
}

/// Who holds the purchase that decided an entitlement.
public enum Ownership: String, Sendable, CaseIterable {
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
    /// The deciding transaction's `offerType`, as Apple signed it (see `OfferType`).
    public var offerType: Int64? = nil
}

/// Apple's `offerType`: which kind of offer a transaction was bought with. Apple adds kinds
/// (5, the retention offer of Retention Messaging, in 2026): a number not named here is kept as
/// the number, never refused.
public enum OfferType: Int64, Sendable, CaseIterable {
    case introductory = 1
    case promotional = 2
    case offerCode = 3
    case winBack = 4
    case retention = 5

    /// The name results write (`evidence.offer`).
    public var name: String {
        switch self {
        case .introductory: return "introductory"
        case .promotional: return "promotional"
        case .offerCode: return "offer_code"
        case .winBack: return "win_back"
        case .retention: return "retention"
        }
    }

    /// The name of Apple's number, or `unknown` for one not named yet.
    static func name(of number: Int64) -> String { OfferType(rawValue: number)?.name ?? "unknown" }
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
        guard c.billingPlanType != nil || c.commitmentTotalBillingPeriods != nil || c.advancedCommerce != nil || c.offerType != nil
        else { return self }
        var e = self
        e.evidence.offerType = c.offerType
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
    // No field has a default value: each init stores every field once.
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
