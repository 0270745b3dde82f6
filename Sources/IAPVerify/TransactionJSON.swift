// Transactions and renewal infos read from JSON objects: /verifyReceipt items, the
// entitlements input (SPEC §7) and per-call `renewal_info`. Field names follow Apple's, which
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
