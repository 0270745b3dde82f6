// Result JSON for JWS: verdict, kind, the verified chain, the decoded payload, the
// normalised transaction or renewal info, the notification or realtime request, and what it grants.

extension JWSReport {
    public func resultJSON() -> [UInt8] { resultJSONBlock().bytes }

    /// The same document, in one block the C boundary takes without a copy.
    package func resultJSONBlock() -> JSONText {
        var w = JSONWriter(capacity: 2048 + (payloadJSON?.count ?? 0) * 2)
        w.beginObject()
        w.field(ResultHeadMember.verdict, verdict.rawValue)
        w.field(ResultHeadMember.reason, judgement.reason)
        writeBody(into: &w)
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }

    private func writeBody(into w: inout JSONWriter) {
        w.field(JWSResultMember.trusted, isValid)
        w.field(JWSResultMember.kind, kind?.rawValue)
        w.field(JWSResultMember.environment, environment?.rawValue)
        w.field(JWSResultMember.bundleID, bundleID)
        w.field(JWSResultMember.signedDateMs, signedDateMs)
        w.field(JWSResultMember.validatedAtMs, validatedAtMs)
        w.key(JWSResultMember.chain)
        CertificateSummary.write(chain, into: &w)
        w.revocation(JWSResultMember.revocation, revocation)
        w.key(JWSResultMember.transaction)
        if let t = transaction { TransactionWriter.write(t, into: &w) } else { w.null() }
        w.field(JWSResultMember.appAccountToken, appAccountToken)
        w.field(JWSResultMember.productType, productType)
        w.key(JWSResultMember.renewalInfo)
        if let r = renewal { TransactionWriter.write(r, into: &w) } else { w.null() }
        w.key(JWSResultMember.notification)
        if let n = notification {
            w.beginObject()
            w.field(NotificationMember.notificationType, n.type)
            w.field(NotificationMember.subtype, n.subtype)
            w.field(NotificationMember.notificationUUID, n.uuid)
            w.field(NotificationMember.signedDateMs, n.signedDateMs)
            w.field(NotificationMember.effect, n.effect.rawValue)
            // A host that reads only the action must still be safe: not valid means reject.
            w.field(NotificationMember.action, isValid ? n.action.rawValue : NotificationAction.reject.rawValue)
            w.key(NotificationMember.transaction)
            if let t = n.transaction { TransactionWriter.write(t, into: &w) } else { w.null() }
            w.key(NotificationMember.renewalInfo)
            if let r = n.renewal { TransactionWriter.write(r, into: &w) } else { w.null() }
            w.key(NotificationMember.appTransaction)
            if let a = n.appTransactionJSON { w.rawJSON(a) } else { w.null() }
            if let token = n.externalPurchaseToken {
                w.key(NotificationMember.externalPurchaseToken)
                w.beginObject()
                w.field(ExternalPurchaseTokenMember.externalPurchaseID, token.externalPurchaseID)
                w.field(ExternalPurchaseTokenMember.tokenCreationDateMs, token.tokenCreationDateMs)
                w.field(ExternalPurchaseTokenMember.appAppleID, token.appAppleID)
                w.field(ExternalPurchaseTokenMember.bundleID, token.bundleID)
                w.field(ExternalPurchaseTokenMember.tokenType, token.tokenType)
                w.field(ExternalPurchaseTokenMember.tokenExpirationDateMs, token.tokenExpirationDateMs)
                w.endObject()
            }
            w.endObject()
        } else {
            w.null()
        }
        w.key(JWSResultMember.realtimeRequest)
        if let r = realtime {
            w.beginObject()
            w.field(RealtimeRequestMember.originalTransactionID, r.originalTransactionID)
            w.field(RealtimeRequestMember.productID, r.productID)
            w.field(RealtimeRequestMember.userLocale, r.userLocale)
            w.field(RealtimeRequestMember.requestIdentifier, r.requestIdentifier)
            w.field(RealtimeRequestMember.appAppleID, r.appAppleID)
            w.field(RealtimeRequestMember.signedDateMs, r.signedDateMs)
            w.field(RealtimeRequestMember.action, isValid ? r.action.rawValue : RealtimeAction.reject.rawValue)
            w.endObject()
        } else {
            w.null()
        }
        w.key(JWSResultMember.payload)
        if let p = payloadJSON { w.rawJSON(p) } else { w.null() }
    }
}

extension JWSReport: VerificationResult {}

extension JWSReport: RenderedResult {}
