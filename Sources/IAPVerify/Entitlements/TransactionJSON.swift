// Transactions and renewal infos read from JSON objects: /verifyReceipt items, the
// entitlements input and per-call `renewal_info`. Field names follow Apple's, which
// are also the normalised names of the result JSON.

enum TransactionJSON {
    static func transaction(_ v: JSONValue, path: String) throws(FieldProblem) -> Transaction {
        let f = try FieldReader(v, path: path)
        guard let id = try f.string("transaction_id") else { throw FieldProblem(message: "\(path).transaction_id is missing") }
        guard let product = try f.string("product_id") else { throw FieldProblem(message: "\(path).product_id is missing") }
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
        return t
    }

    static func renewalInfo(_ v: JSONValue, path: String) throws(FieldProblem) -> RenewalInfo {
        let f = try FieldReader(v, path: path)
        guard let original = try f.string("original_transaction_id") else {
            throw FieldProblem(message: "\(path).original_transaction_id is missing")
        }
        var r = RenewalInfo(originalTransactionID: original)
        r.productID = try f.string("product_id")
        r.autoRenewProductID = try f.string("auto_renew_product_id")
        r.autoRenewStatus = try f.bool("auto_renew_status")
        r.expirationIntent = try f.int("expiration_intent")
        r.isInBillingRetryPeriod = try f.bool("is_in_billing_retry_period")
        r.gracePeriodExpiresDateMs = try f.date("grace_period_expires_date", ms: "grace_period_expires_date_ms")
        r.priceConsentStatus = try f.string("price_consent_status")
        return r
    }

    static func transactions(_ v: JSONValue?, path: String) throws(FieldProblem) -> [Transaction] {
        guard let v, !v.isNull else { return [] }
        if v.kind == .object { return [try transaction(v, path: path)] }  // iOS 6 style: one object
        guard let items = v.array else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        var out: [Transaction] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() { out.append(try transaction(item, path: "\(path)[\(i)]")) }
        return out
    }

    static func renewalInfos(_ v: JSONValue?, path: String) throws(FieldProblem) -> [RenewalInfo] {
        guard let v, !v.isNull else { return [] }
        guard let items = v.array else { throw FieldProblem(message: "\(path) must be an array, got \(v.typeName)") }
        var out: [RenewalInfo] = []
        for (i, item) in items.enumerated() { out.append(try renewalInfo(item, path: "\(path)[\(i)]")) }
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
        w.endObject()
    }
}
