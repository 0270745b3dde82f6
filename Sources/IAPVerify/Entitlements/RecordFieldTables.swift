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
        F.int("quantity", "quantity", \.t.quantity),
        F.string("product_id", "productId", required: 2, \.t.productID),
        F.id("transaction_id", "transactionId", required: 1, \.t.id),
        F.id("original_transaction_id", "originalTransactionId", \.t.originalID),
        F.int("purchase_date_ms", "purchaseDate", as: .date(text: "purchase_date"), \.t.purchaseDateMs),
        F.int("original_purchase_date_ms", "originalPurchaseDate", as: .date(text: "original_purchase_date"), \.t.originalPurchaseDateMs),
        F.int("expires_date_ms", "expiresDate", as: .date(text: "expires_date"), \.t.expiresDateMs),
        F.int("cancellation_date_ms", "revocationDate", as: .date(text: "cancellation_date"), \.t.cancellationDateMs),
        F.string("cancellation_reason", "revocationReason", as: .code, \.t.cancellationReason),
        F.id("web_order_line_item_id", "webOrderLineItemId", \.t.webOrderLineItem),
        // Signed payloads say these with offerType and offerDiscountType: see `derive` below.
        F.bool("is_trial_period", nil, \.t.isTrialPeriod),
        F.bool("is_in_intro_offer_period", nil, \.t.isInIntroOfferPeriod),
        F.bool("is_upgraded", "isUpgraded", \.t.isUpgraded),
        F.string("promotional_offer_id", "offerIdentifier", \.t.promotionalOfferID),
        F.string("in_app_ownership_type", "inAppOwnershipType", \.t.ownershipType),
        F.string("subscription_group_identifier", "subscriptionGroupIdentifier", \.t.subscriptionGroupIdentifier),
    ], whenPresent: [
        F.int("signed_date_ms", "signedDate", \.c.signedDateMs),
        F.string("revocation_type", "revocationType", \.c.revocationType),
        F.int("revocation_percentage", "revocationPercentage", \.c.revocationPercentage),
        F.int("offer_type", "offerType", \.c.offerType),
        F.string("offer_discount_type", "offerDiscountType", \.c.offerDiscountType),
        F.string("offer_period", "offerPeriod", \.c.offerPeriod),
        F.int("price", "price", \.c.price),
        F.string("currency", "currency", \.c.currency),
        F.string("storefront", "storefront", \.c.storefront),
        F.string("storefront_id", "storefrontId", \.c.storefrontID),
        F.string("app_account_token", "appAccountToken", \.c.appAccountToken),
        F.string("app_transaction_id", "appTransactionId", \.c.appTransactionID),
        F.string("transaction_reason", "transactionReason", \.c.transactionReason),
        F.string("type", "type", \.c.type),
        F.string("environment", "environment", \.c.environment),
        F.string("bundle_id", "bundleId", \.c.bundleID),
        F.string("billing_plan_type", "billingPlanType", \.c.billingPlanType),
    ], nested: ("commitment", "commitmentInfo", [
        F.int("billing_period_number", "billingPeriodNumber", \.c.commitmentBillingPeriodNumber),
        F.int("total_billing_periods", "totalBillingPeriods", \.c.commitmentTotalBillingPeriods),
        F.int("commitment_expires_date_ms", "commitmentExpiresDate", \.c.commitmentExpiresDateMs),
        F.int("commitment_price", "commitmentPrice", \.c.commitmentPrice),
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
        F.string("original_transaction_id", "originalTransactionId", required: 1, \.originalTransactionID),
        F.string("product_id", "productId", \.productID),
        F.string("auto_renew_product_id", "autoRenewProductId", \.autoRenewProductID),
        F.bool("auto_renew_status", "autoRenewStatus", as: .flag, \.autoRenewStatus),
        F.int("expiration_intent", "expirationIntent", \.expirationIntent),
        F.bool("is_in_billing_retry_period", "isInBillingRetryPeriod", \.isInBillingRetryPeriod),
        F.int("grace_period_expires_date_ms", "gracePeriodExpiresDate", as: .date(text: "grace_period_expires_date"), \.gracePeriodExpiresDateMs),
        F.string("price_consent_status", nil, \.priceConsentStatus),
    ], whenPresent: [
        F.int("price_increase_status", "priceIncreaseStatus", \.priceIncreaseStatus),
        F.int("signed_date_ms", "signedDate", \.commerce.signedDateMs),
        F.int("renewal_price", "renewalPrice", \.commerce.renewalPrice),
        F.string("currency", "currency", \.commerce.currency),
        F.int("offer_type", "offerType", \.commerce.offerType),
        F.string("offer_identifier", "offerIdentifier", \.commerce.offerIdentifier),
        F.string("offer_discount_type", "offerDiscountType", \.commerce.offerDiscountType),
        F.string("offer_period", "offerPeriod", \.commerce.offerPeriod),
        F.int("renewal_date_ms", "renewalDate", \.commerce.renewalDateMs),
        F.int("recent_subscription_start_date_ms", "recentSubscriptionStartDate", \.commerce.recentSubscriptionStartDateMs),
        F.strings("eligible_win_back_offer_ids", "eligibleWinBackOfferIds", \.commerce.eligibleWinBackOfferIDs),
        F.string("app_account_token", "appAccountToken", \.commerce.appAccountToken),
        F.string("app_transaction_id", "appTransactionId", \.commerce.appTransactionID),
        F.string("environment", "environment", \.commerce.environment),
        F.string("renewal_billing_plan_type", "renewalBillingPlanType", \.commerce.renewalBillingPlanType),
    ], nested: ("commitment", "commitmentInfo", [
        F.string("auto_renew_product_id", "commitmentAutoRenewProductId", \.commerce.commitmentAutoRenewProductID),
        F.bool("auto_renew_status", "commitmentAutoRenewStatus", as: .flag, \.commerce.commitmentAutoRenewStatus),
        F.string("renewal_billing_plan_type", "commitmentRenewalBillingPlanType", \.commerce.commitmentRenewalBillingPlanType),
        F.int("renewal_date_ms", "commitmentRenewalDate", \.commerce.commitmentRenewalDateMs),
        F.int("renewal_price", "commitmentRenewalPrice", \.commerce.commitmentRenewalPrice),
    ]))
}
