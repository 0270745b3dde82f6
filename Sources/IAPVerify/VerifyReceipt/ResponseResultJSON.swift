// Result JSON for /verifyReceipt responses and for direct entitlement input.

extension ResponseReport {
    public func resultJSON() -> [UInt8] { resultJSONBlock().bytes }

    /// The same document, in one block the C boundary takes without a copy.
    package func resultJSONBlock() -> JSONText {
        // Sized not to regrow: a transaction writes about 520 bytes in `in_app` and 200 more as a
        // purchase, more when it is delivered (a regrown buffer is a second, fresh block).
        var w = JSONWriter(capacity: 2048 + transactions.count * 1024 + renewals.count * 512)
        w.beginObject()
        w.field("verdict", verdict.rawValue)
        w.field("reason", judgement.reason)
        w.field("status", status)
        w.field("action", action.rawValue)
        w.field("retry_after_ms", retryAfterMs)
        w.field("deprecations", deprecations)
        w.field("environment", environment?.rawValue)
        w.key("receipt")
        if receipt != nil {
            // Read through the optional in place (binding it with `if let` copied the receipt,
            // every text retained and released).
            w.beginObject()
            w.field("trusted", trusted)
            w.field("style", receipt?.style.rawValue)
            w.field("environment", environment?.rawValue)
            w.field("receipt_type", receipt?.receiptType)
            w.field("bundle_id", receipt?.bundleID)
            w.field("app_version", receipt?.appVersion)
            w.field("original_app_version", receipt?.originalAppVersion)
            w.field("creation_date_ms", receipt?.creationDateMs)
            w.field("request_date_ms", receipt?.requestDateMs)
            w.field("expiration_date_ms", receipt?.expirationDateMs)
            w.field("original_purchase_date_ms", receipt?.originalPurchaseDateMs)
            w.field("app_item_id", receipt?.appItemID)
            w.field("download_id", receipt?.downloadID)
            w.field("version_external_identifier", receipt?.versionExternalIdentifier)
            w.field("latest_receipt_present", receipt?.latestReceiptPresent)
            TransactionWriter.write("in_app", transactions, "pending_renewal_info", renewals, into: &w)
            w.endObject()
        } else {
            w.null()
        }
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }
}

extension EntitlementInputReport {
    public func resultJSON() -> [UInt8] { resultJSONBlock().bytes }

    /// The same document, in one block the C boundary takes without a copy.
    package func resultJSONBlock() -> JSONText {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.field("verdict", verdict.rawValue)
        w.field("reason", judgement.reason)
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }
}


extension ResponseReport: VerificationResult {}

extension EntitlementInputReport: VerificationResult {}

extension ResponseReport: RenderedResult {}

extension EntitlementInputReport: RenderedResult {}
