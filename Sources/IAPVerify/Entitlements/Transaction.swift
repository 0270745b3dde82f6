// The normalised transaction and renewal-info model. Receipts, /verifyReceipt responses and
// the entitlements input all become these, so one engine decides for every source.

/// One purchase, whatever it came from.
public struct Transaction: Sendable, Equatable {
    public var transactionID: String {
        get { id.string }
        set { id = IDText(newValue) }
    }
    public var originalTransactionID: String? {
        get { originalID?.string }
        set { originalID = newValue.map(IDText.init) }
    }
    /// The ids as the engine reads them (IDText.swift): no String until one is asked for.
    var id: IDText
    var originalID: IDText?
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
    public var webOrderLineItemID: String? {
        get { webOrderLineItem?.string }
        set { webOrderLineItem = newValue.map(IDText.init) }
    }
    var webOrderLineItem: IDText?
    public var promotionalOfferID: String?
    public var subscriptionGroupIdentifier: String?
    /// StoreKit 2 and App Store Server API fields (empty for receipts and /verifyReceipt).
    public var commerce: CommerceFields {
        get { commerceBox?.fields ?? CommerceFields() }
        set { commerceBox = newValue.isEmpty ? nil : CommerceBox(newValue) }
    }
    /// Kept out of line: most purchases (receipts, /verifyReceipt) carry none, and a small
    /// Transaction is cheap to move through arrays.
    private var commerceBox: CommerceBox?

    /// When Apple signed this statement (StoreKit 2), read without copying the commerce fields.
    var signedDateMs: Int64? { commerceBox?.fields.signedDateMs }
    var revocationType: String? { commerceBox?.fields.revocationType }
    /// Apple's signed product type (StoreKit 2 `type`: "Consumable", "Non-Consumable",
    /// "Auto-Renewable Subscription", "Non-Renewing Subscription").
    var signedType: String? { commerceBox?.fields.type }
    var hasCommerce: Bool { commerceBox != nil }

    public init(transactionID: String, productID: String) {
        self.init(id: IDText(transactionID), productID: productID)
    }

    init(id: IDText, productID: String) {
        self.id = id
        self.productID = productID
    }

    /// The renewal chain this transaction belongs to.
    var chainID: String { chain.string }
    var chain: IDText { originalID ?? id }

    func isRevoked(at nowMs: Int64) -> Bool {
        guard let c = cancellationDateMs else { return false }
        return c <= nowMs
    }
}

/// Immutable, shared by copies of a Transaction (replaced whole on every change).
private final class CommerceBox: Equatable, Sendable {
    let fields: CommerceFields
    init(_ fields: CommerceFields) { self.fields = fields }
    static func == (a: CommerceBox, b: CommerceBox) -> Bool { a.fields == b.fields }
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
    /// StoreKit 2: 0 the customer has not answered a price increase that needs consent, 1 it
    /// was accepted (or needed none).
    public var priceIncreaseStatus: Int64?
    /// StoreKit 2 renewal fields (nil for /verifyReceipt).
    public var commerce = RenewalCommerceFields()

    public init(originalTransactionID: String) { self.originalTransactionID = originalTransactionID }
}

/// The commerce facts StoreKit 2 signs with a transaction. Prices are in milliunits of
/// `currency`; percentages in milliunits of a percent (40% is 40000), as Apple sends them.
public struct CommerceFields: Sendable, Equatable {
    /// When Apple signed this statement: a later statement about the same transaction wins.
    public var signedDateMs: Int64?
    /// REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE, ASSIGNMENT_REVOKE (or a newer value, kept as is).
    public var revocationType: String?
    public var revocationPercentage: Int64?
    /// 1 introductory, 2 promotional, 3 offer code, 4 win-back, 5 retention (`OfferType`); a newer number is kept.
    public var offerType: Int64?
    public var offerDiscountType: String?
    /// ISO 8601 duration, e.g. P1M.
    public var offerPeriod: String?
    public var price: Int64?
    public var currency: String?
    public var storefront: String?
    public var storefrontID: String?
    public var appAccountToken: String?
    public var appTransactionID: String?
    /// PURCHASE or RENEWAL.
    public var transactionReason: String?
    /// Apple's product type text (Auto-Renewable Subscription, Consumable, ...).
    public var type: String?
    public var environment: String?
    /// The app the signed transaction is for (StoreKit 2; receipts name it once, not per purchase).
    public var bundleID: String?
    /// BILLED_UPFRONT or MONTHLY (a monthly plan with a commitment).
    public var billingPlanType: String?
    public var commitmentBillingPeriodNumber: Int64?
    public var commitmentTotalBillingPeriods: Int64?
    public var commitmentExpiresDateMs: Int64?
    public var commitmentPrice: Int64?
    /// Advanced Commerce: the items of the purchase (signed payloads only).
    public var advancedCommerce: AdvancedCommerceInfo?

    public init() {}
    public var isEmpty: Bool { self == CommerceFields() }
}

public struct RenewalCommerceFields: Sendable, Equatable {
    public var signedDateMs: Int64?
    public var renewalPrice: Int64?
    public var currency: String?
    public var offerType: Int64?
    public var offerIdentifier: String?
    public var offerDiscountType: String?
    public var offerPeriod: String?
    public var renewalDateMs: Int64?
    public var recentSubscriptionStartDateMs: Int64?
    public var eligibleWinBackOfferIDs: [String]?
    public var appAccountToken: String?
    public var appTransactionID: String?
    public var environment: String?
    public var renewalBillingPlanType: String?
    public var commitmentAutoRenewProductID: String?
    public var commitmentAutoRenewStatus: Bool?
    public var commitmentRenewalBillingPlanType: String?
    public var commitmentRenewalDateMs: Int64?
    public var commitmentRenewalPrice: Int64?
    /// Advanced Commerce: the items that renew (signed payloads only).
    public var advancedCommerce: AdvancedCommerceInfo?

    public init() {}
    public var isEmpty: Bool { self == RenewalCommerceFields() }
}

extension Transaction {
    /// When two records share a transaction id, the one that revokes or reaches further wins,
    /// so the choice never depends on input order and never grants more than either record.
    /// True when `b` wins over `a`.
    static func prefersSecond(_ a: Transaction, _ b: Transaction, nowMs: Int64) -> Bool {
        // Two statements Apple signed at different times: the later one is Apple's current word
        // (a refund reversed, a renewal date extended). Unsigned records fall to the rules below.
        // A date after now (a clock fault) orders nothing (SignedDates).
        if let x = SignedDates.orderable(a.signedDateMs, nowMs: nowMs), let y = SignedDates.orderable(b.signedDateMs, nowMs: nowMs),
           x != y { return y > x }
        switch (a.cancellationDateMs, b.cancellationDateMs) {
        case (let x?, let y?): if x != y { return y < x }
        case (.some, nil): return false
        case (nil, .some): return true
        case (nil, nil): break
        }
        if a.isUpgraded != b.isUpgraded { return b.isUpgraded }
        switch (a.expiresDateMs, b.expiresDateMs) {
        case (let x?, let y?): if x != y { return y > x }
        case (.some, nil): return false
        case (nil, .some): return true
        case (nil, nil): break
        }
        return !((a.ownershipType ?? "") >= (b.ownershipType ?? ""))
    }
}

/// The one rule for a signed date after now, for every kind of token: Apple's clock or the host's
/// is wrong, so the date orders nothing. It never makes a later genuine statement stale, never
/// wins over one, and a host's stored "last applied" date beyond it is ignored.
enum SignedDates {
    /// How far after `now_ms` a signed date may be (clocks differ) and still order statements.
    static let futureSkewMs: Int64 = 300_000

    /// The date, when it may order statements at `nowMs`; nil when it is later than now plus the skew.
    @inline(__always) static func orderable(_ ms: Int64?, nowMs: Int64) -> Int64? {
        guard let ms, ms <= nowMs &+ futureSkewMs else { return nil }
        return ms
    }
}
