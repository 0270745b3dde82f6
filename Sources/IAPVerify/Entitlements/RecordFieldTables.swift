// The field tables of the normalised records: for each field of a Transaction and a RenewalInfo,
// its snake_case name (the result JSON, /verifyReceipt, the entitlement input), its camelCase
// name (StoreKit 2 signed payloads), its JSON type, when it is written and the model property.
// Rows are in the order the result JSON writes them (docs/results.md). The only place that knows
// these names: TransactionJSON, JWSPayloadDecoder and every result writer read and write through
// the tables (RecordFields.swift).

/// A transaction with its commerce fields beside it: a Transaction keeps them out of line, so the
/// table reads them here and the Transaction stores them once.
struct TransactionRecord {
    var t: Transaction
    var c: CommerceFields

    init(_ transaction: Transaction) {
        t = transaction
        c = transaction.commerce
    }

    private init() {
        t = Transaction(transactionID: "", productID: "")
        c = CommerceFields()
    }

    /// Reads one transaction (see RecordTable.read).
    static func read(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                     index: Int? = nil) throws(FieldProblem) -> Transaction {
        var r = TransactionRecord()
        try fields.read(v, into: &r, casing, flavour, path: path, index: index)
        r.t.commerce = r.c
        return r.t
    }

    private typealias F = RecordField<TransactionRecord>

    static let fields = RecordTable<TransactionRecord>(always: [
        F.int("quantity", "quantity", { $0.t.quantity }, { $0.t.quantity = $1 }),
        F.string("product_id", "productId", required: 2, { $0.t.productID }, { $0.t.productID = $1 }),
        F.string("transaction_id", "transactionId", required: 1, { $0.t.transactionID }, { $0.t.transactionID = $1 }),
        F.string("original_transaction_id", "originalTransactionId", { $0.t.originalTransactionID }, { $0.t.originalTransactionID = $1 }),
        F.int("purchase_date_ms", "purchaseDate", as: .date(text: "purchase_date"), { $0.t.purchaseDateMs }, { $0.t.purchaseDateMs = $1 }),
        F.int("original_purchase_date_ms", "originalPurchaseDate", as: .date(text: "original_purchase_date"),
              { $0.t.originalPurchaseDateMs }, { $0.t.originalPurchaseDateMs = $1 }),
        F.int("expires_date_ms", "expiresDate", as: .date(text: "expires_date"), { $0.t.expiresDateMs }, { $0.t.expiresDateMs = $1 }),
        F.int("cancellation_date_ms", "revocationDate", as: .date(text: "cancellation_date"), { $0.t.cancellationDateMs }, { $0.t.cancellationDateMs = $1 }),
        F.string("cancellation_reason", "revocationReason", as: .code, { $0.t.cancellationReason }, { $0.t.cancellationReason = $1 }),
        F.string("web_order_line_item_id", "webOrderLineItemId", { $0.t.webOrderLineItemID }, { $0.t.webOrderLineItemID = $1 }),
        // Signed payloads say these with offerType and offerDiscountType: see `derive` below.
        F.bool("is_trial_period", nil, { $0.t.isTrialPeriod }, { $0.t.isTrialPeriod = $1 }),
        F.bool("is_in_intro_offer_period", nil, { $0.t.isInIntroOfferPeriod }, { $0.t.isInIntroOfferPeriod = $1 }),
        F.bool("is_upgraded", "isUpgraded", { $0.t.isUpgraded }, { $0.t.isUpgraded = $1 }),
        F.string("promotional_offer_id", "offerIdentifier", { $0.t.promotionalOfferID }, { $0.t.promotionalOfferID = $1 }),
        F.string("in_app_ownership_type", "inAppOwnershipType", { $0.t.ownershipType }, { $0.t.ownershipType = $1 }),
        F.string("subscription_group_identifier", "subscriptionGroupIdentifier", { $0.t.subscriptionGroupIdentifier }, { $0.t.subscriptionGroupIdentifier = $1 }),
    ], whenPresent: [
        F.int("signed_date_ms", "signedDate", { $0.c.signedDateMs }, { $0.c.signedDateMs = $1 }),
        F.string("revocation_type", "revocationType", { $0.c.revocationType }, { $0.c.revocationType = $1 }),
        F.int("revocation_percentage", "revocationPercentage", { $0.c.revocationPercentage }, { $0.c.revocationPercentage = $1 }),
        F.int("offer_type", "offerType", { $0.c.offerType }, { $0.c.offerType = $1 }),
        F.string("offer_discount_type", "offerDiscountType", { $0.c.offerDiscountType }, { $0.c.offerDiscountType = $1 }),
        F.string("offer_period", "offerPeriod", { $0.c.offerPeriod }, { $0.c.offerPeriod = $1 }),
        F.int("price", "price", { $0.c.price }, { $0.c.price = $1 }),
        F.string("currency", "currency", { $0.c.currency }, { $0.c.currency = $1 }),
        F.string("storefront", "storefront", { $0.c.storefront }, { $0.c.storefront = $1 }),
        F.string("storefront_id", "storefrontId", { $0.c.storefrontID }, { $0.c.storefrontID = $1 }),
        F.string("app_account_token", "appAccountToken", { $0.c.appAccountToken }, { $0.c.appAccountToken = $1 }),
        F.string("app_transaction_id", "appTransactionId", { $0.c.appTransactionID }, { $0.c.appTransactionID = $1 }),
        F.string("transaction_reason", "transactionReason", { $0.c.transactionReason }, { $0.c.transactionReason = $1 }),
        F.string("type", "type", { $0.c.type }, { $0.c.type = $1 }),
        F.string("environment", "environment", { $0.c.environment }, { $0.c.environment = $1 }),
        F.string("billing_plan_type", "billingPlanType", { $0.c.billingPlanType }, { $0.c.billingPlanType = $1 }),
    ], nested: ("commitment", "commitmentInfo", [
        F.int("billing_period_number", "billingPeriodNumber", { $0.c.commitmentBillingPeriodNumber }, { $0.c.commitmentBillingPeriodNumber = $1 }),
        F.int("total_billing_periods", "totalBillingPeriods", { $0.c.commitmentTotalBillingPeriods }, { $0.c.commitmentTotalBillingPeriods = $1 }),
        F.int("commitment_expires_date_ms", "commitmentExpiresDate", { $0.c.commitmentExpiresDateMs }, { $0.c.commitmentExpiresDateMs = $1 }),
        F.int("commitment_price", "commitmentPrice", { $0.c.commitmentPrice }, { $0.c.commitmentPrice = $1 }),
    ]), derive: { r, casing in
        // A signed transaction has no trial flags: a free trial is an offer with that discount.
        guard casing == .camel else { return }
        let free = r.c.offerDiscountType == "FREE_TRIAL"
        r.t.isTrialPeriod = free
        r.t.isInIntroOfferPeriod = r.c.offerType == 1 && !free
    })
}

extension RenewalInfo {
    /// Reads one renewal info (see RecordTable.read).
    static func read(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                     index: Int? = nil) throws(FieldProblem) -> RenewalInfo {
        var r = RenewalInfo(originalTransactionID: "")
        try fields.read(v, into: &r, casing, flavour, path: path, index: index)
        return r
    }

    private typealias F = RecordField<RenewalInfo>

    static let fields = RecordTable<RenewalInfo>(always: [
        F.string("original_transaction_id", "originalTransactionId", required: 1, { $0.originalTransactionID }, { $0.originalTransactionID = $1 }),
        F.string("product_id", "productId", { $0.productID }, { $0.productID = $1 }),
        F.string("auto_renew_product_id", "autoRenewProductId", { $0.autoRenewProductID }, { $0.autoRenewProductID = $1 }),
        F.bool("auto_renew_status", "autoRenewStatus", as: .flag, { $0.autoRenewStatus }, { $0.autoRenewStatus = $1 }),
        F.int("expiration_intent", "expirationIntent", { $0.expirationIntent }, { $0.expirationIntent = $1 }),
        F.bool("is_in_billing_retry_period", "isInBillingRetryPeriod", { $0.isInBillingRetryPeriod }, { $0.isInBillingRetryPeriod = $1 }),
        F.int("grace_period_expires_date_ms", "gracePeriodExpiresDate", as: .date(text: "grace_period_expires_date"),
              { $0.gracePeriodExpiresDateMs }, { $0.gracePeriodExpiresDateMs = $1 }),
        F.string("price_consent_status", nil, { $0.priceConsentStatus }, { $0.priceConsentStatus = $1 }),
    ], whenPresent: [
        F.int("price_increase_status", "priceIncreaseStatus", { $0.priceIncreaseStatus }, { $0.priceIncreaseStatus = $1 }),
        F.int("signed_date_ms", "signedDate", { $0.commerce.signedDateMs }, { $0.commerce.signedDateMs = $1 }),
        F.int("renewal_price", "renewalPrice", { $0.commerce.renewalPrice }, { $0.commerce.renewalPrice = $1 }),
        F.string("currency", "currency", { $0.commerce.currency }, { $0.commerce.currency = $1 }),
        F.int("offer_type", "offerType", { $0.commerce.offerType }, { $0.commerce.offerType = $1 }),
        F.string("offer_identifier", "offerIdentifier", { $0.commerce.offerIdentifier }, { $0.commerce.offerIdentifier = $1 }),
        F.string("offer_discount_type", "offerDiscountType", { $0.commerce.offerDiscountType }, { $0.commerce.offerDiscountType = $1 }),
        F.string("offer_period", "offerPeriod", { $0.commerce.offerPeriod }, { $0.commerce.offerPeriod = $1 }),
        F.int("renewal_date_ms", "renewalDate", { $0.commerce.renewalDateMs }, { $0.commerce.renewalDateMs = $1 }),
        F.int("recent_subscription_start_date_ms", "recentSubscriptionStartDate",
              { $0.commerce.recentSubscriptionStartDateMs }, { $0.commerce.recentSubscriptionStartDateMs = $1 }),
        F.strings("eligible_win_back_offer_ids", "eligibleWinBackOfferIds",
                  { $0.commerce.eligibleWinBackOfferIDs }, { $0.commerce.eligibleWinBackOfferIDs = $1 }),
        F.string("app_account_token", "appAccountToken", { $0.commerce.appAccountToken }, { $0.commerce.appAccountToken = $1 }),
        F.string("app_transaction_id", "appTransactionId", { $0.commerce.appTransactionID }, { $0.commerce.appTransactionID = $1 }),
        F.string("environment", "environment", { $0.commerce.environment }, { $0.commerce.environment = $1 }),
        F.string("renewal_billing_plan_type", "renewalBillingPlanType", { $0.commerce.renewalBillingPlanType }, { $0.commerce.renewalBillingPlanType = $1 }),
    ], nested: ("commitment", "commitmentInfo", [
        F.string("auto_renew_product_id", "commitmentAutoRenewProductId",
                 { $0.commerce.commitmentAutoRenewProductID }, { $0.commerce.commitmentAutoRenewProductID = $1 }),
        F.bool("auto_renew_status", "commitmentAutoRenewStatus", as: .flag,
               { $0.commerce.commitmentAutoRenewStatus }, { $0.commerce.commitmentAutoRenewStatus = $1 }),
        F.string("renewal_billing_plan_type", "commitmentRenewalBillingPlanType",
                 { $0.commerce.commitmentRenewalBillingPlanType }, { $0.commerce.commitmentRenewalBillingPlanType = $1 }),
        F.int("renewal_date_ms", "commitmentRenewalDate", { $0.commerce.commitmentRenewalDateMs }, { $0.commerce.commitmentRenewalDateMs = $1 }),
        F.int("renewal_price", "commitmentRenewalPrice", { $0.commerce.commitmentRenewalPrice }, { $0.commerce.commitmentRenewalPrice = $1 }),
    ]))
}
