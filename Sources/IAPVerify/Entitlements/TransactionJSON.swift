// Transactions and renewal infos read from JSON objects: /verifyReceipt items, the
// entitlements input and per-call `renewal_info`. Field names follow Apple's, which
// are also the normalised names of the result JSON.

enum TransactionJSON {
    static func transaction(_ v: JSONValue, path: String, index: Int? = nil) throws(FieldProblem) -> Transaction {
        let f = try FieldReader(v, path: path, index: index, .tolerant)
        guard let id = try f.string("transaction_id") else { throw FieldProblem(message: "\(f.path).transaction_id is missing") }
        guard let product = try f.string("product_id") else { throw FieldProblem(message: "\(f.path).product_id is missing") }
        var t = Transaction(transactionID: id, productID: product)
        t.originalTransactionID = try f.string("original_transaction_id")
        t.quantity = try f.int("quantity") ?? 1
        t.purchaseDateMs = try f.date("purchase_date", ms: "purchase_date_ms")
        t.originalPurchaseDateMs = try f.date("original_purchase_date", ms: "original_purchase_date_ms")
        t.expiresDateMs = try f.date("expires_date", ms: "expires_date_ms")
        t.cancellationDateMs = try f.date("cancellation_date", ms: "cancellation_date_ms")
        t.cancellationReason = try f.string("cancellation_reason")
        t.isUpgraded = try f.bool("is_upgraded") ?? false
        t.isTrialPeriod = try f.bool("is_trial_period") ?? false
        t.isInIntroOfferPeriod = try f.bool("is_in_intro_offer_period") ?? false
        t.ownershipType = try f.string("in_app_ownership_type")
        t.webOrderLineItemID = try f.string("web_order_line_item_id")
        t.promotionalOfferID = try f.string("promotional_offer_id")
        t.subscriptionGroupIdentifier = try f.string("subscription_group_identifier")
        var c = CommerceFields()
        c.signedDateMs = try f.int("signed_date_ms")
        c.revocationType = try f.string("revocation_type")
        c.revocationPercentage = try f.int("revocation_percentage")
        c.offerType = try f.int("offer_type")
        c.offerDiscountType = try f.string("offer_discount_type")
        c.offerPeriod = try f.string("offer_period")
        c.price = try f.int("price")
        c.currency = try f.string("currency")
        c.storefront = try f.string("storefront")
        c.storefrontID = try f.string("storefront_id")
        c.appAccountToken = try f.string("app_account_token")
        c.appTransactionID = try f.string("app_transaction_id")
        c.transactionReason = try f.string("transaction_reason")
        c.type = try f.string("type")
        c.environment = try f.string("environment")
        c.billingPlanType = try f.string("billing_plan_type")
        if let m = try f.object("commitment") {
            c.commitmentBillingPeriodNumber = try m.int("billing_period_number")
            c.commitmentTotalBillingPeriods = try m.int("total_billing_periods")
            c.commitmentExpiresDateMs = try m.int("commitment_expires_date_ms")
            c.commitmentPrice = try m.int("commitment_price")
        }
        t.commerce = c
        return t
    }

    static func renewalInfo(_ v: JSONValue, path: String, index: Int? = nil) throws(FieldProblem) -> RenewalInfo {
        let f = try FieldReader(v, path: path, index: index, .tolerant)
        guard let original = try f.string("original_transaction_id") else {
            throw FieldProblem(message: "\(f.path).original_transaction_id is missing")
        }
        var r = RenewalInfo(originalTransactionID: original)
        r.productID = try f.string("product_id")
        r.autoRenewProductID = try f.string("auto_renew_product_id")
        r.autoRenewStatus = try f.bool("auto_renew_status")
        r.expirationIntent = try f.int("expiration_intent")
        r.isInBillingRetryPeriod = try f.bool("is_in_billing_retry_period")
        r.gracePeriodExpiresDateMs = try f.date("grace_period_expires_date", ms: "grace_period_expires_date_ms")
        r.priceConsentStatus = try f.string("price_consent_status")
        r.priceIncreaseStatus = try f.int("price_increase_status")
        var c = RenewalCommerceFields()
        c.signedDateMs = try f.int("signed_date_ms")
        c.renewalPrice = try f.int("renewal_price")
        c.currency = try f.string("currency")
        c.offerType = try f.int("offer_type")
        c.offerIdentifier = try f.string("offer_identifier")
        c.offerDiscountType = try f.string("offer_discount_type")
        c.offerPeriod = try f.string("offer_period")
        c.renewalDateMs = try f.int("renewal_date_ms")
        c.recentSubscriptionStartDateMs = try f.int("recent_subscription_start_date_ms")
        c.eligibleWinBackOfferIDs = try f.stringArray("eligible_win_back_offer_ids")
        c.appAccountToken = try f.string("app_account_token")
        c.appTransactionID = try f.string("app_transaction_id")
        c.environment = try f.string("environment")
        c.renewalBillingPlanType = try f.string("renewal_billing_plan_type")
        if let m = try f.object("commitment") {
            c.commitmentAutoRenewProductID = try m.string("auto_renew_product_id")
            c.commitmentAutoRenewStatus = try m.bool("auto_renew_status")
            c.commitmentRenewalBillingPlanType = try m.string("renewal_billing_plan_type")
            c.commitmentRenewalDateMs = try m.int("renewal_date_ms")
            c.commitmentRenewalPrice = try m.int("renewal_price")
        }
        r.commerce = c
        return r
    }

    static func transactions(_ v: JSONValue?, path: String) throws(FieldProblem) -> [Transaction] {
        guard let v, !v.isNull else { return [] }
        if v.kind == .object { return [try transaction(v, path: path)] }  // iOS 6 style: one object
        guard let items = v.array else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        var out: [Transaction] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() { out.append(try transaction(item, path: path, index: i)) }
        return out
    }

    static func renewalInfos(_ v: JSONValue?, path: String) throws(FieldProblem) -> [RenewalInfo] {
        guard let v, !v.isNull else { return [] }
        guard let items = v.array else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        var out: [RenewalInfo] = []
        for (i, item) in items.enumerated() { out.append(try renewalInfo(item, path: path, index: i)) }
        return out
    }
}

/// Normalised transactions and renewal infos, in the field names of §5.2 and Apple's.
enum TransactionWriter {
    static func write(_ t: Transaction, into w: inout JSONWriter) {
        w.beginObject()
        w.field("quantity", t.quantity)
        w.field("product_id", t.productID)
        w.field("transaction_id", t.transactionID)
        w.field("original_transaction_id", t.originalTransactionID)
        w.field("purchase_date_ms", t.purchaseDateMs)
        w.field("original_purchase_date_ms", t.originalPurchaseDateMs)
        w.field("expires_date_ms", t.expiresDateMs)
        w.field("cancellation_date_ms", t.cancellationDateMs)
        w.field("cancellation_reason", t.cancellationReason)
        w.field("web_order_line_item_id", t.webOrderLineItemID)
        w.field("is_trial_period", t.isTrialPeriod)
        w.field("is_in_intro_offer_period", t.isInIntroOfferPeriod)
        w.field("is_upgraded", t.isUpgraded)
        w.field("promotional_offer_id", t.promotionalOfferID)
        w.field("in_app_ownership_type", t.ownershipType)
        w.field("subscription_group_identifier", t.subscriptionGroupIdentifier)
        // StoreKit 2 fields only when Apple sent them: receipts and /verifyReceipt stay as they were.
        if t.hasCommerce {
            let c = t.commerce
            w.optional("signed_date_ms", c.signedDateMs)
            w.optional("revocation_type", c.revocationType)
            w.optional("revocation_percentage", c.revocationPercentage)
            w.optional("offer_type", c.offerType)
            w.optional("offer_discount_type", c.offerDiscountType)
            w.optional("offer_period", c.offerPeriod)
            w.optional("price", c.price)
            w.optional("currency", c.currency)
            w.optional("storefront", c.storefront)
            w.optional("storefront_id", c.storefrontID)
            w.optional("app_account_token", c.appAccountToken)
            w.optional("app_transaction_id", c.appTransactionID)
            w.optional("transaction_reason", c.transactionReason)
            w.optional("type", c.type)
            w.optional("environment", c.environment)
            w.optional("billing_plan_type", c.billingPlanType)
            if c.commitmentBillingPeriodNumber != nil || c.commitmentTotalBillingPeriods != nil || c.commitmentExpiresDateMs != nil
                || c.commitmentPrice != nil {
                w.key("commitment")
                w.beginObject()
                w.optional("billing_period_number", c.commitmentBillingPeriodNumber)
                w.optional("total_billing_periods", c.commitmentTotalBillingPeriods)
                w.optional("commitment_expires_date_ms", c.commitmentExpiresDateMs)
                w.optional("commitment_price", c.commitmentPrice)
                w.endObject()
            }
        }
        w.endObject()
    }

    static func write(_ r: RenewalInfo, into w: inout JSONWriter) {
        w.beginObject()
        w.field("original_transaction_id", r.originalTransactionID)
        w.field("product_id", r.productID)
        w.field("auto_renew_product_id", r.autoRenewProductID)
        w.field("auto_renew_status", r.autoRenewStatus)
        w.field("expiration_intent", r.expirationIntent)
        w.field("is_in_billing_retry_period", r.isInBillingRetryPeriod)
        w.field("grace_period_expires_date_ms", r.gracePeriodExpiresDateMs)
        w.field("price_consent_status", r.priceConsentStatus)
        w.optional("price_increase_status", r.priceIncreaseStatus)
        let c = r.commerce
        if !c.isEmpty {
            w.optional("signed_date_ms", c.signedDateMs)
            w.optional("renewal_price", c.renewalPrice)
            w.optional("currency", c.currency)
            w.optional("offer_type", c.offerType)
            w.optional("offer_identifier", c.offerIdentifier)
            w.optional("offer_discount_type", c.offerDiscountType)
            w.optional("offer_period", c.offerPeriod)
            w.optional("renewal_date_ms", c.renewalDateMs)
            w.optional("recent_subscription_start_date_ms", c.recentSubscriptionStartDateMs)
            if let ids = c.eligibleWinBackOfferIDs {
                w.key("eligible_win_back_offer_ids")
                w.beginArray()
                for id in ids { w.string(id) }
                w.endArray()
            }
            w.optional("app_account_token", c.appAccountToken)
            w.optional("app_transaction_id", c.appTransactionID)
            w.optional("environment", c.environment)
            w.optional("renewal_billing_plan_type", c.renewalBillingPlanType)
            if c.commitmentAutoRenewProductID != nil || c.commitmentAutoRenewStatus != nil || c.commitmentRenewalBillingPlanType != nil
                || c.commitmentRenewalDateMs != nil || c.commitmentRenewalPrice != nil {
                w.key("commitment")
                w.beginObject()
                w.optional("auto_renew_product_id", c.commitmentAutoRenewProductID)
                w.optional("auto_renew_status", c.commitmentAutoRenewStatus)
                w.optional("renewal_billing_plan_type", c.commitmentRenewalBillingPlanType)
                w.optional("renewal_date_ms", c.commitmentRenewalDateMs)
                w.optional("renewal_price", c.commitmentRenewalPrice)
                w.endObject()
            }
        }
        w.endObject()
    }
}
