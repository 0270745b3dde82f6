// Result JSON for /verifyReceipt responses and for direct entitlement input.

extension ResponseReport {
    public func resultJSON() -> [UInt8] { resultJSONBlock().bytes }

    /// The same document, in one block the C boundary takes without a copy.
    package func resultJSONBlock() -> JSONText {
        // Sized not to regrow: a transaction writes about 520 bytes in `in_app` and 200 more as a
        // purchase, more when it is delivered (a regrown buffer is a second, fresh block).
        var w = JSONWriter(capacity: 2048 + transactions.count * 1024 + renewals.count * 512)
        w.beginObject()
        w.field(ResultHeadMember.verdict, verdict.rawValue)
        w.field(ResultHeadMember.reason, judgement.reason)
        w.field(ResponseResultMember.status, status)
        w.field(ResponseResultMember.action, action.rawValue)
        w.field(ResponseResultMember.retryAfterMs, retryAfterMs)
        w.field(ResponseResultMember.deprecations, deprecations)
        w.field(ResponseResultMember.environment, environment?.rawValue)
        w.key(ResponseResultMember.receipt)
        if receipt != nil {
            // Read through the optional in place (binding it with `if let` copied the receipt,
            // every text retained and released).
            w.beginObject()
            w.field(ResponseReceiptMember.trusted, trusted)
            w.field(ResponseReceiptMember.style, receipt?.style.rawValue)
            w.field(ResponseReceiptMember.environment, environment?.rawValue)
            w.field(ResponseReceiptMember.receiptType, receipt?.receiptType)
            w.field(ResponseReceiptMember.bundleID, receipt?.bundleID)
            w.field(ResponseReceiptMember.appVersion, receipt?.appVersion)
            w.field(ResponseReceiptMember.originalAppVersion, receipt?.originalAppVersion)
            w.field(ResponseReceiptMember.creationDateMs, receipt?.creationDateMs)
            w.field(ResponseReceiptMember.requestDateMs, receipt?.requestDateMs)
            w.field(ResponseReceiptMember.expirationDateMs, receipt?.expirationDateMs)
            w.field(ResponseReceiptMember.originalPurchaseDateMs, receipt?.originalPurchaseDateMs)
            w.field(ResponseReceiptMember.appItemID, receipt?.appItemID)
            w.field(ResponseReceiptMember.downloadID, receipt?.downloadID)
            w.field(ResponseReceiptMember.versionExternalIdentifier, receipt?.versionExternalIdentifier)
            w.field(ResponseReceiptMember.latestReceiptPresent, receipt?.latestReceiptPresent)
            TransactionWriter.write(ResponseReceiptMember.inApp, transactions, ResponseReceiptMember.pendingRenewalInfo, renewals, into: &w)
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
        w.field(ResultHeadMember.verdict, verdict.rawValue)
        w.field(ResultHeadMember.reason, judgement.reason)
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }
}


extension ResponseReport: VerificationResult {}

extension EntitlementInputReport: VerificationResult {}

extension ResponseReport: RenderedResult {}

extension EntitlementInputReport: RenderedResult {}
