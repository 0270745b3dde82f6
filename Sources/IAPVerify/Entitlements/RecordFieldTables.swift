// The field tables of the normalised records: for each field of a Transaction and a RenewalInfo,
// its snake_case name (the result JSON, /verifyReceipt, the entitlement input), its camelCase
// name (StoreKit 2 signed payloads), its JSON type, when it is written and the model property.
// Rows are in the order the result JSON writes them (docs/results.md). The only place that knows
// these names: TransactionJSON, JWSPayloadDecoder and every result writer read and write through
// the tables (RecordFields.swift).

/// A transaction with its commerce fields beside it: a Transaction keeps them out of line, so the
/// table reads them here and the Transaction stores them once.
struct TransactionRecord {
    var transaction: Transaction
    var commerce: CommerceFields

    init(_ transaction: Transaction) {
        self.transaction = transaction
        commerce = transaction.commerce
    }

    private init() {
        transaction = Transaction(transactionID: "", productID: "")
        commerce = CommerceFields()
    }

    /// Reads one transaction (see RecordTable.read).
    static func read(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                     index: Int? = nil) throws(FieldProblem) -> Transaction {
        var r = TransactionRecord()
        try fields.read(v, into: &r, casing, flavour, path: path, index: index)
        r.transaction.commerce = r.commerce
        return r.transaction
    }

    private typealias F = RecordField<TransactionRecord>

    static let fields = RecordTable<TransactionRecord>([
        F.int("quantity", "quantity", { $0.transaction.quantity }, { $0.transaction.quantity = $1 }),
        F.string("product_id", "productId", required: 2, { $0.transaction.productID }, { $0.transaction.productID = $1 }),
        F.string("transaction_id", "transactionId", required: 1, { $0.transaction.transactionID }, { $0.transaction.transactionID = $1 }),
        F.string("original_transaction_id", "originalTransactionId",
                { $0.transaction.originalTransactionID }, { $0.transaction.originalTransactionID = $1 }),
        F.date("purchase_date_ms", text: "purchase_date", "purchaseDate",
              { $0.transaction.purchaseDateMs }, { $0.transaction.purchaseDateMs = $1 }),
        F.date("original_purchase_date_ms", text: "original_purchase_date", "originalPurchaseDate",
              { $0.transaction.originalPurchaseDateMs }, { $0.transaction.originalPurchaseDateMs = $1 }),
        F.date("expires_date_ms", text: "expires_date", "expiresDate",
              { $0.transaction.expiresDateMs }, { $0.transaction.expiresDateMs = $1 }),
        F.date("cancellation_date_ms", text: "cancellation_date", "revocationDate",
              { $0.transaction.cancellationDateMs }, { $0.transaction.cancellationDateMs = $1 }),
        F.code("cancellation_reason", "revocationReason", { $0.transaction.cancellationReason }, { $0.transaction.cancellationReason = $1 }),
        F.string("web_order_line_item_id", "webOrderLineItemId", { $0.transaction.webOrderLineItemID }, { $0.transaction.webOrderLineItemID = $1 }),
        // Signed payloads say these with offerType and offerDiscountType: see `derive` below.
        F.bool("is_trial_period", nil, { $0.transaction.isTrialPeriod }, { $0.transaction.isTrialPeriod = $1 }),
        F.bool("is_in_intro_offer_period", nil, { $0.transaction.isInIntroOfferPeriod }, { $0.transaction.isInIntroOfferPeriod = $1 }),
        F.bool("is_upgraded", "isUpgraded", { $0.transaction.isUpgraded }, { $0.transaction.isUpgraded = $1 }),
        F.string("promotional_offer_id", "offerIdentifier", { $0.transaction.promotionalOfferID }, { $0.transaction.promotionalOfferID = $1 }),
        F.string("in_app_ownership_type", "inAppOwnershipType", { $0.transaction.ownershipType }, { $0.transaction.ownershipType = $1 }),
        F.string("subscription_group_identifier", "subscriptionGroupIdentifier",
                { $0.transaction.subscriptionGroupIdentifier }, { $0.transaction.subscriptionGroupIdentifier = $1 }),
        // StoreKit 2 and App Store Server API fields: written only when Apple sent them.
        F.int("signed_date_ms", "signedDate", written: .whenPresent, { $0.commerce.signedDateMs }, { $0.commerce.signedDateMs = $1 }),
        F.string("revocation_type", "revocationType", written: .whenPresent, { $0.commerce.revocationType }, { $0.commerce.revocationType = $1 }),
        F.int("revocation_percentage", "revocationPercentage", written: .whenPresent,
             { $0.commerce.revocationPercentage }, { $0.commerce.revocationPercentage = $1 }),
        F.int("offer_type", "offerType", written: .whenPresent, { $0.commerce.offerType }, { $0.commerce.offerType = $1 }),
        F.string("offer_discount_type", "offerDiscountType", written: .whenPresent, { $0.commerce.offerDiscountType }, { $0.commerce.offerDiscountType = $1 }),
        F.string("offer_period", "offerPeriod", written: .whenPresent, { $0.commerce.offerPeriod }, { $0.commerce.offerPeriod = $1 }),
        F.int("price", "price", written: .whenPresent, { $0.commerce.price }, { $0.commerce.price = $1 }),
        F.string("currency", "currency", written: .whenPresent, { $0.commerce.currency }, { $0.commerce.currency = $1 }),
        F.string("storefront", "storefront", written: .whenPresent, { $0.commerce.storefront }, { $0.commerce.storefront = $1 }),
        F.string("storefront_id", "storefrontId", written: .whenPresent, { $0.commerce.storefrontID }, { $0.commerce.storefrontID = $1 }),
        F.string("app_account_token", "appAccountToken", written: .whenPresent, { $0.commerce.appAccountToken }, { $0.commerce.appAccountToken = $1 }),
        F.string("app_transaction_id", "appTransactionId", written: .whenPresent, { $0.commerce.appTransactionID }, { $0.commerce.appTransactionID = $1 }),
        F.string("transaction_reason", "transactionReason", written: .whenPresent, { $0.commerce.transactionReason }, { $0.commerce.transactionReason = $1 }),
        F.string("type", "type", written: .whenPresent, { $0.commerce.type }, { $0.commerce.type = $1 }),
        F.string("environment", "environment", written: .whenPresent, { $0.commerce.environment }, { $0.commerce.environment = $1 }),
        F.string("billing_plan_type", "billingPlanType", written: .whenPresent, { $0.commerce.billingPlanType }, { $0.commerce.billingPlanType = $1 }),
        // In `commitment` (signed: `commitmentInfo`).
        F.int("billing_period_number", "billingPeriodNumber", written: .whenPresent, nested: true,
             { $0.commerce.commitmentBillingPeriodNumber }, { $0.commerce.commitmentBillingPeriodNumber = $1 }),
        F.int("total_billing_periods", "totalBillingPeriods", written: .whenPresent, nested: true,
             { $0.commerce.commitmentTotalBillingPeriods }, { $0.commerce.commitmentTotalBillingPeriods = $1 }),
        F.int("commitment_expires_date_ms", "commitmentExpiresDate", written: .whenPresent, nested: true,
             { $0.commerce.commitmentExpiresDateMs }, { $0.commerce.commitmentExpiresDateMs = $1 }),
        F.int("commitment_price", "commitmentPrice", written: .whenPresent, nested: true,
             { $0.commerce.commitmentPrice }, { $0.commerce.commitmentPrice = $1 }),
    ], nested: ("commitment", "commitmentInfo"), derive: { r, casing in
        // A signed transaction has no trial flags: a free trial is an offer with that discount.
        guard casing == .camel else { return }
        let free = r.commerce.offerDiscountType == "FREE_TRIAL"
        r.transaction.isTrialPeriod = free
        r.transaction.isInIntroOfferPeriod = r.commerce.offerType == 1 && !free
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

    static let fields = RecordTable<RenewalInfo>([
        F.string("original_transaction_id", "originalTransactionId", required: 1,
                { $0.originalTransactionID }, { $0.originalTransactionID = $1 }),
        F.string("product_id", "productId", { $0.productID }, { $0.productID = $1 }),
        F.string("auto_renew_product_id", "autoRenewProductId", { $0.autoRenewProductID }, { $0.autoRenewProductID = $1 }),
        F.flag("auto_renew_status", "autoRenewStatus", { $0.autoRenewStatus }, { $0.autoRenewStatus = $1 }),
        F.int("expiration_intent", "expirationIntent", { $0.expirationIntent }, { $0.expirationIntent = $1 }),
        F.bool("is_in_billing_retry_period", "isInBillingRetryPeriod", { $0.isInBillingRetryPeriod }, { $0.isInBillingRetryPeriod = $1 }),
        F.date("grace_period_expires_date_ms", text: "grace_period_expires_date", "gracePeriodExpiresDate",
              { $0.gracePeriodExpiresDateMs }, { $0.gracePeriodExpiresDateMs = $1 }),
        F.string("price_consent_status", nil, { $0.priceConsentStatus }, { $0.priceConsentStatus = $1 }),
        // StoreKit 2 fields: written only when Apple sent them.
        F.int("price_increase_status", "priceIncreaseStatus", written: .whenPresent, { $0.priceIncreaseStatus }, { $0.priceIncreaseStatus = $1 }),
        F.int("signed_date_ms", "signedDate", written: .whenPresent, { $0.commerce.signedDateMs }, { $0.commerce.signedDateMs = $1 }),
        F.int("renewal_price", "renewalPrice", written: .whenPresent, { $0.commerce.renewalPrice }, { $0.commerce.renewalPrice = $1 }),
        F.string("currency", "currency", written: .whenPresent, { $0.commerce.currency }, { $0.commerce.currency = $1 }),
        F.int("offer_type", "offerType", written: .whenPresent, { $0.commerce.offerType }, { $0.commerce.offerType = $1 }),
        F.string("offer_identifier", "offerIdentifier", written: .whenPresent, { $0.commerce.offerIdentifier }, { $0.commerce.offerIdentifier = $1 }),
        F.string("offer_discount_type", "offerDiscountType", written: .whenPresent, { $0.commerce.offerDiscountType }, { $0.commerce.offerDiscountType = $1 }),
        F.string("offer_period", "offerPeriod", written: .whenPresent, { $0.commerce.offerPeriod }, { $0.commerce.offerPeriod = $1 }),
        F.int("renewal_date_ms", "renewalDate", written: .whenPresent, { $0.commerce.renewalDateMs }, { $0.commerce.renewalDateMs = $1 }),
        F.int("recent_subscription_start_date_ms", "recentSubscriptionStartDate", written: .whenPresent,
             { $0.commerce.recentSubscriptionStartDateMs }, { $0.commerce.recentSubscriptionStartDateMs = $1 }),
        F.strings("eligible_win_back_offer_ids", "eligibleWinBackOfferIds", written: .whenPresent,
                 { $0.commerce.eligibleWinBackOfferIDs }, { $0.commerce.eligibleWinBackOfferIDs = $1 }),
        F.string("app_account_token", "appAccountToken", written: .whenPresent, { $0.commerce.appAccountToken }, { $0.commerce.appAccountToken = $1 }),
        F.string("app_transaction_id", "appTransactionId", written: .whenPresent, { $0.commerce.appTransactionID }, { $0.commerce.appTransactionID = $1 }),
        F.string("environment", "environment", written: .whenPresent, { $0.commerce.environment }, { $0.commerce.environment = $1 }),
        F.string("renewal_billing_plan_type", "renewalBillingPlanType", written: .whenPresent,
                { $0.commerce.renewalBillingPlanType }, { $0.commerce.renewalBillingPlanType = $1 }),
        // In `commitment` (signed: `commitmentInfo`).
        F.string("auto_renew_product_id", "commitmentAutoRenewProductId", written: .whenPresent, nested: true,
                { $0.commerce.commitmentAutoRenewProductID }, { $0.commerce.commitmentAutoRenewProductID = $1 }),
        F.flag("auto_renew_status", "commitmentAutoRenewStatus", written: .whenPresent, nested: true,
              { $0.commerce.commitmentAutoRenewStatus }, { $0.commerce.commitmentAutoRenewStatus = $1 }),
        F.string("renewal_billing_plan_type", "commitmentRenewalBillingPlanType", written: .whenPresent, nested: true,
                { $0.commerce.commitmentRenewalBillingPlanType }, { $0.commerce.commitmentRenewalBillingPlanType = $1 }),
        F.int("renewal_date_ms", "commitmentRenewalDate", written: .whenPresent, nested: true,
             { $0.commerce.commitmentRenewalDateMs }, { $0.commerce.commitmentRenewalDateMs = $1 }),
        F.int("renewal_price", "commitmentRenewalPrice", written: .whenPresent, nested: true,
             { $0.commerce.commitmentRenewalPrice }, { $0.commerce.commitmentRenewalPrice = $1 }),
    ], nested: ("commitment", "commitmentInfo"))
}
