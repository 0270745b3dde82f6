// Result JSON for JWS: verdict, kind, the verified chain, the decoded payload, the
// normalised transaction or renewal info, the notification or realtime request, and what it grants.

extension JWSReport {
    public func resultJSON() -> [UInt8] { resultJSONBlock().bytes }

    /// The same document, in one block the C boundary takes without a copy.
    package func resultJSONBlock() -> JSONText {
        var w = JSONWriter(capacity: 2048 + (payloadJSON?.count ?? 0) * 2)
        w.beginObject()
        w.field("verdict", verdict.rawValue)
        w.field("reason", judgement.reason)
        writeBody(into: &w)
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }

    private func writeBody(into w: inout JSONWriter) {
        w.field("trusted", isValid)
        w.field("kind", kind?.rawValue)
        w.field("environment", environment?.rawValue)
        w.field("bundle_id", bundleID)
        w.field("signed_date_ms", signedDateMs)
        w.field("validated_at_ms", validatedAtMs)
        w.key("chain")
        CertificateSummary.write(chain, into: &w)
        w.revocation(revocation)
        w.key("transaction")
        if let t = transaction { TransactionWriter.write(t, into: &w) } else { w.null() }
        w.field("app_account_token", appAccountToken)
        w.field("product_type", productType)
        w.key("renewal_info")
        if let r = renewal { TransactionWriter.write(r, into: &w) } else { w.null() }
        w.key("notification")
        if let n = notification {
            w.beginObject()
            w.field("notification_type", n.type)
            w.field("subtype", n.subtype)
            w.field("notification_uuid", n.uuid)
            w.field("signed_date_ms", n.signedDateMs)
            w.field("effect", n.effect.rawValue)
            // A host that reads only the action must still be safe: not valid means reject.
            w.field("action", isValid ? n.action.rawValue : NotificationAction.reject.rawValue)
            w.key("transaction")
            if let t = n.transaction { TransactionWriter.write(t, into: &w) } else { w.null() }
            w.key("renewal_info")
            if let r = n.renewal { TransactionWriter.write(r, into: &w) } else { w.null() }
            w.key("app_transaction")
            if let a = n.appTransactionJSON { w.rawJSON(a) } else { w.null() }
            w.endObject()
        } else {
            w.null()
        }
        w.key("realtime_request")
        if let r = realtime {
            w.beginObject()
            w.field("original_transaction_id", r.originalTransactionID)
            w.field("product_id", r.productID)
            w.field("user_locale", r.userLocale)
            w.field("request_identifier", r.requestIdentifier)
            w.field("app_apple_id", r.appAppleID)
            w.field("signed_date_ms", r.signedDateMs)
            w.field("action", isValid ? r.action.rawValue : RealtimeAction.reject.rawValue)
            w.endObject()
        } else {
            w.null()
        }
        w.key("payload")
        if let p = payloadJSON { w.rawJSON(p) } else { w.null() }
    }
}

extension JWSReport: VerificationResult {}

extension JWSReport: RenderedResult {}
