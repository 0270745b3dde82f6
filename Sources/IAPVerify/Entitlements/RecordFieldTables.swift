// The field tables of the normalised records: for each field of a Transaction and a RenewalInfo,
// its snake_case name (the result JSON, /verifyReceipt, the entitlement input), its camelCase
// name (StoreKit 2 signed payloads), its JSON type, when it is written and the model property.
// Rows are in the order the result JSON writes them (docs/results.md). The only place that knows
// these names: TransactionJSON, JWSPayloadDecoder and every result writer read and write through
// the tables (RecordFields.swift).

/// The member a transaction's and a renewal info's writer add after the table's rows when the
/// record has Advanced Commerce items (`iapverify fields` lists it with the rows).
let advancedCommerceMember: StaticString = "advanced_commerce"

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
        t = Transaction(id: .empty, productID: "")
        c = CommerceFields()
    }

    /// An empty record for `check` to read into.
    static var scratch: TransactionRecord { TransactionRecord() }

    /// Reads one transaction (see RecordTable.read).
    static func read(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                     index: Int? = nil) throws(FieldProblem) -> Transaction {
        var texts = RecentTexts()
        return try read(v, casing, flavour, path: path, index: index, texts: &texts)
    }

    /// The same, sharing repeated texts with the other records of a list (`texts`).
    static func read(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                     index: Int? = nil, texts: inout RecentTexts) throws(FieldProblem) -> Transaction {
        var r = TransactionRecord()
        let commerce = try fields.read(v, into: &r, casing, flavour, path: path, index: index, texts: &texts)
        // Moved out, not copied.
        var t = Transaction(id: .empty, productID: "")
        swap(&t, &r.t)
        if commerce { t.commerce = r.c }   // else every commerce field is still empty
        return t
    }

    /// Writes a transaction without commerce fields (its other rows would write nothing) straight
    /// from where it is: the rows written always are all of `t`, the record's first member, so
    /// their offsets are the transaction's own. Anything else is written through a record copy.
    static func write(_ t: UnsafePointer<Transaction>, into w: inout JSONWriter) {
        if !t.pointee.hasCommerce, transactionIsFirst {
            fields.writeAlways(at: UnsafeRawPointer(t), into: &w)
        } else {
            var record = TransactionRecord(t.pointee)
            w.beginObject()
            fields.writeMembers(&record, into: &w)
            if let info = record.c.advancedCommerce {
                w.key(advancedCommerceMember)
                info.write(into: &w)
            }
            w.endObject()
        }
    }

    private static let transactionIsFirst = MemoryLayout<TransactionRecord>.offset(of: \TransactionRecord.t) == 0

    /// Checks one transaction as `read` does (the same errors), keeping nothing: a record that a
    /// later one with the same id replaces.
    /// `scratch` takes the numbers and flags a check sets (no text): a caller checking many
    /// records passes one record for all of them.
    static func check(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                      index: Int? = nil, scratch: inout TransactionRecord) throws(FieldProblem) {
        try fields.read(v, into: &scratch, casing, flavour, path: path, index: index, checkOnly: true)
    }

    private typealias F = RecordField<TransactionRecord>

    static let fields = RecordTable<TransactionRecord>(always: [
        F.int("quantity", "quantity", \.t.quantity, "how many were bought; 1 unless the store sold several"),
        F.string("product_id", "productId", required: 2, \.t.productID, "the product bought"),
        F.id("transaction_id", "transactionId", required: 1, \.t.id, "the transaction: deliver exactly once per id"),
        F.id("original_transaction_id", "originalTransactionId", \.t.originalID, "the first transaction of the subscription chain (or the purchase itself)"),
        F.int("purchase_date_ms", "purchaseDate", as: .date(text: "purchase_date"), \.t.purchaseDateMs, "when this transaction was bought (a renewal: when it renewed)"),
        F.int("original_purchase_date_ms", "originalPurchaseDate", as: .date(text: "original_purchase_date"), \.t.originalPurchaseDateMs, "when the original transaction was bought"),
        F.int("expires_date_ms", "expiresDate", as: .date(text: "expires_date"), \.t.expiresDateMs, "end of the paid period (subscriptions)"),
        F.int("cancellation_date_ms", "revocationDate", as: .date(text: "cancellation_date"), \.t.cancellationDateMs, "when Apple refunded or revoked it (revocationDate)"),
        F.string("cancellation_reason", "revocationReason", as: .code, \.t.cancellationReason, "why: \"1\" a problem in the app, \"0\" another reason (revocationReason)"),
        F.id("web_order_line_item_id", "webOrderLineItemId", \.t.webOrderLineItem, "the subscription period's purchase id across devices"),
        // Signed payloads say these with offerType and offerDiscountType: see `derive` below.
        F.bool("is_trial_period", nil, \.t.isTrialPeriod, "a free trial period (signed payloads: offerDiscountType FREE_TRIAL)"),
        F.bool("is_in_intro_offer_period", nil, \.t.isInIntroOfferPeriod, "an introductory offer period other than a free trial"),
        F.bool("is_upgraded", "isUpgraded", \.t.isUpgraded, "replaced by an upgrade to a higher-level product"),
        F.string("promotional_offer_id", "offerIdentifier", \.t.promotionalOfferID, "the offer identifier (promotional offer, offer code or win-back)"),
        F.string("in_app_ownership_type", "inAppOwnershipType", \.t.ownershipType, "PURCHASED or FAMILY_SHARED"),
        F.string("subscription_group_identifier", "subscriptionGroupIdentifier", \.t.subscriptionGroupIdentifier, "the subscription group"),
    ], whenPresent: [
        F.int("signed_date_ms", "signedDate", \.c.signedDateMs, "when Apple signed this statement: a later statement about the same record wins"),
        F.string("revocation_type", "revocationType", \.c.revocationType, "REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE, ASSIGNMENT_REVOKE; newer values kept as given"),
        F.int("revocation_percentage", "revocationPercentage", \.c.revocationPercentage, "the refunded share, in milliunits of a percent"),
        F.int("offer_type", "offerType", \.c.offerType, "1 introductory, 2 promotional, 3 offer code, 4 win-back, 5 retention; other numbers pass as given"),
        F.string("offer_discount_type", "offerDiscountType", \.c.offerDiscountType, "FREE_TRIAL, PAY_AS_YOU_GO or PAY_UP_FRONT"),
        F.string("offer_period", "offerPeriod", \.c.offerPeriod, "the offer's duration, ISO 8601"),
        F.int("price", "price", \.c.price, "the price, in milliunits of currency"),
        F.string("currency", "currency", \.c.currency, "ISO 4217 currency code"),
        F.string("storefront", "storefront", \.c.storefront, "the storefront's country code (ISO 3166-1 alpha-3)"),
        F.string("storefront_id", "storefrontId", \.c.storefrontID, "Apple's storefront id"),
        F.string("app_account_token", "appAccountToken", \.c.appAccountToken, "the UUID the app set at purchase (compare as lower-case UUIDs)"),
        F.string("app_transaction_id", "appTransactionId", \.c.appTransactionID, "the app download's transaction id"),
        F.string("transaction_reason", "transactionReason", \.c.transactionReason, "PURCHASE or RENEWAL"),
        F.string("type", "type", \.c.type, "Apple's product type (Auto-Renewable Subscription, Non-Consumable, Consumable, Non-Renewing Subscription)"),
        F.string("environment", "environment", \.c.environment, "the environment Apple named in the payload"),
        F.string("bundle_id", "bundleId", \.c.bundleID, "the app the purchase belongs to"),
        F.string("billing_plan_type", "billingPlanType", \.c.billingPlanType, "BILLED_UPFRONT or MONTHLY"),
    ], nested: ("commitment", "commitmentInfo", [
        F.int("billing_period_number", "billingPeriodNumber", \.c.commitmentBillingPeriodNumber, "which month of the commitment this is"),
        F.int("total_billing_periods", "totalBillingPeriods", \.c.commitmentTotalBillingPeriods, "how many months the commitment has"),
        F.int("commitment_expires_date_ms", "commitmentExpiresDate", \.c.commitmentExpiresDateMs, "when the commitment ends"),
        F.int("commitment_price", "commitmentPrice", \.c.commitmentPrice, "the commitment's total price, in milliunits"),
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
        var texts = RecentTexts()
        return try read(v, casing, flavour, path: path, index: index, texts: &texts)
    }

    /// The same, sharing repeated texts with the other records of a list (`texts`).
    static func read(_ v: JSONValue, _ casing: FieldCasing, _ flavour: FieldFlavour, path: String,
                     index: Int? = nil, texts: inout RecentTexts) throws(FieldProblem) -> RenewalInfo {
        var r = RenewalInfo(originalTransactionID: "")
        try fields.read(v, into: &r, casing, flavour, path: path, index: index, texts: &texts)
        return r
    }

    private typealias F = RecordField<RenewalInfo>

    static let fields = RecordTable<RenewalInfo>(always: [
        F.string("original_transaction_id", "originalTransactionId", required: 1, \.originalTransactionID, "the subscription chain this renewal info is about"),
        F.string("product_id", "productId", \.productID, "the product the subscription is on now"),
        F.string("auto_renew_product_id", "autoRenewProductId", \.autoRenewProductID, "the product it renews to"),
        F.bool("auto_renew_status", "autoRenewStatus", as: .flag, \.autoRenewStatus, "whether it renews; false does not end the paid period"),
        F.int("expiration_intent", "expirationIntent", \.expirationIntent, "1 cancelled, 2 billing error, 3 price increase declined, 4 product unavailable, 5 other"),
        F.bool("is_in_billing_retry_period", "isInBillingRetryPeriod", \.isInBillingRetryPeriod, "Apple is still trying to bill"),
        F.int("grace_period_expires_date_ms", "gracePeriodExpiresDate", as: .date(text: "grace_period_expires_date"), \.gracePeriodExpiresDateMs, "end of the billing grace period"),
        F.string("price_consent_status", nil, \.priceConsentStatus, "/verifyReceipt's price consent: \"0\" not yet, \"1\" consented"),
    ], whenPresent: [
        F.int("price_increase_status", "priceIncreaseStatus", \.priceIncreaseStatus, "0 the user has not answered a price increase, 1 accepted"),
        F.int("signed_date_ms", "signedDate", \.commerce.signedDateMs, "when Apple signed it: the later of two renewal infos is used"),
        F.int("renewal_price", "renewalPrice", \.commerce.renewalPrice, "the next renewal's price, in milliunits of currency"),
        F.string("currency", "currency", \.commerce.currency, "ISO 4217 currency code"),
        F.int("offer_type", "offerType", \.commerce.offerType, "the next renewal's offer: 1 introductory, 2 promotional, 3 offer code, 4 win-back, 5 retention"),
        F.string("offer_identifier", "offerIdentifier", \.commerce.offerIdentifier, "the next renewal's offer identifier"),
        F.string("offer_discount_type", "offerDiscountType", \.commerce.offerDiscountType, "FREE_TRIAL, PAY_AS_YOU_GO or PAY_UP_FRONT"),
        F.string("offer_period", "offerPeriod", \.commerce.offerPeriod, "the offer's duration, ISO 8601"),
        F.int("renewal_date_ms", "renewalDate", \.commerce.renewalDateMs, "when it renews next"),
        F.int("recent_subscription_start_date_ms", "recentSubscriptionStartDate", \.commerce.recentSubscriptionStartDateMs, "start of the latest run of continuous subscription"),
        F.strings("eligible_win_back_offer_ids", "eligibleWinBackOfferIds", \.commerce.eligibleWinBackOfferIDs, "win-back offers the customer may redeem"),
        F.string("app_account_token", "appAccountToken", \.commerce.appAccountToken, "the UUID the app set at purchase (compare as lower-case UUIDs)"),
        F.string("app_transaction_id", "appTransactionId", \.commerce.appTransactionID, "the app download's transaction id"),
        F.string("environment", "environment", \.commerce.environment, "the environment Apple named in the payload"),
        F.string("renewal_billing_plan_type", "renewalBillingPlanType", \.commerce.renewalBillingPlanType, "the billing plan of the next renewal"),
    ], nested: ("commitment", "commitmentInfo", [
        F.string("auto_renew_product_id", "commitmentAutoRenewProductId", \.commerce.commitmentAutoRenewProductID, "the product the commitment renews to"),
        F.bool("auto_renew_status", "commitmentAutoRenewStatus", as: .flag, \.commerce.commitmentAutoRenewStatus, "whether the commitment renews"),
        F.string("renewal_billing_plan_type", "commitmentRenewalBillingPlanType", \.commerce.commitmentRenewalBillingPlanType, "the billing plan of the commitment's renewal"),
        F.int("renewal_date_ms", "commitmentRenewalDate", \.commerce.commitmentRenewalDateMs, "when the commitment renews"),
        F.int("renewal_price", "commitmentRenewalPrice", \.commerce.commitmentRenewalPrice, "the commitment's renewal price, in milliunits"),
    ]))
}
