// Result JSON for /verifyReceipt responses (SPEC §6) and for direct entitlement input (§7).

extension ResponseReport {
    public func resultJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 1024 + transactions.count * 700)
        w.beginObject()
        w.field("verdict", verdict.rawValue)
        w.field("reason", judgement.reason)
        w.field("status", status)
        w.field("action", action.rawValue)
        w.field("retry_after_ms", retryAfterMs)
        w.field("environment", environment?.rawValue)
        w.key("receipt")
        if let r = receipt {
            w.beginObject()
            w.field("trusted", trusted)
            w.field("style", r.style)
            w.field("environment", environment?.rawValue)
            w.field("receipt_type", r.receiptType)
            w.field("bundle_id", r.bundleID)
            w.field("app_version", r.appVersion)
            w.field("original_app_version", r.originalAppVersion)
            w.field("creation_date_ms", r.creationDateMs)
            w.field("request_date_ms", r.requestDateMs)
            w.field("expiration_date_ms", r.expirationDateMs)
            w.field("original_purchase_date_ms", r.originalPurchaseDateMs)
            w.field("app_item_id", r.appItemID)
            w.field("download_id", r.downloadID)
            w.field("version_external_identifier", r.versionExternalIdentifier)
            w.field("latest_receipt_present", r.latestReceiptPresent)
            w.key("in_app")
            w.beginArray()
            for t in transactions { TransactionWriter.write(t, into: &w) }
            w.endArray()
            w.key("pending_renewal_info")
            w.beginArray()
            for r in renewals { TransactionWriter.write(r, into: &w) }
            w.endArray()
            w.endObject()
        } else {
            w.null()
        }
        if let entitlements, isValid {
            entitlements.writeMembers(into: &w)
        } else {
            EntitlementReport.writeEmptyMembers(into: &w)
        }
        w.endObject()
        return w.bytes
    }
}

extension EntitlementInputReport {
    public func resultJSON() -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.field("verdict", verdict.rawValue)
        w.field("reason", judgement.reason)
        if let entitlements, isValid {
            entitlements.writeMembers(into: &w)
        } else {
            EntitlementReport.writeEmptyMembers(into: &w)
        }
        w.endObject()
        return w.bytes
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
