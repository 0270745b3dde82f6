// Result JSON for App Store Server API answers: the decision (verdict, action, retry, next page),
// Apple's error, what was verified, and what it grants.

extension APIResponseReport {
    public func resultJSON() -> [UInt8] { resultJSONBlock().bytes }

    /// The same document, in one block the C boundary takes without a copy.
    package func resultJSONBlock() -> JSONText {
        // Sized not to regrow (a regrown buffer is a second, fresh block): signed transactions carry
        // their commerce fields, about 1 KB each with their purchase entry.
        var w = JSONWriter(capacity: 2048 + transactions.count * 1536 + (appTransactionJSON?.count ?? 0) + (unsignedJSON?.count ?? 0))
        w.beginObject()
        w.field(ResultHeadMember.verdict, verdict.rawValue)
        w.field(ResultHeadMember.reason, judgement.reason)
        w.field(APIResponseResultMember.endpoint, endpoint.rawValue)
        w.field(APIResponseResultMember.environment, environment.rawValue)
        w.field(APIResponseResultMember.httpStatus, httpStatus)
        // A host that reads only the action must still be safe: not valid never says accept.
        w.field(APIResponseResultMember.action, isValid || action != .accept && action != .nextPage ? action.rawValue : NextAction.reject.rawValue)
        w.field(APIResponseResultMember.retryAfterMs, retryAfterMs)
        w.field(APIResponseResultMember.deprecations, deprecations)
        w.field(APIResponseResultMember.errorCode, errorCode)
        w.field(APIResponseResultMember.errorMessage, errorMessage)
        w.field(APIResponseResultMember.trusted, isValid)
        w.key(APIResponseResultMember.nextPage)
        switch nextPage {
        case .revision(let r)?:
            w.beginObject(); w.field(NextPageMember.revision, r); w.endObject()
        case .paginationToken(let t)?:
            w.beginObject(); w.field(NextPageMember.paginationToken, t); w.endObject()
        case nil:
            w.null()
        }
        w.field(APIResponseResultMember.signedItems, Int64(signedItems))
        w.field(APIResponseResultMember.orderStatus, orderStatus)
        TransactionWriter.write(APIResponseResultMember.transactions, transactions, APIResponseResultMember.renewalInfo, renewals, into: &w)
        w.key(APIResponseResultMember.appTransaction)
        if let a = appTransactionJSON { w.rawJSON(a) } else { w.null() }
        w.key(APIResponseResultMember.notifications)
        w.beginArray()
        for n in notifications {
            w.beginObject()
            w.field(APINotificationMember.notificationType, n.type)
            w.field(APINotificationMember.subtype, n.subtype)
            w.field(APINotificationMember.effect, n.effect.rawValue)
            w.field(APINotificationMember.notificationUUID, n.uuid)
            w.field(APINotificationMember.signedDateMs, n.signedDateMs)
            w.endObject()
        }
        w.endArray()
        w.key(APIResponseResultMember.subscriptionStatuses)
        Self.write(statuses, into: &w)
        w.key(APIResponseResultMember.statusDisagreements)
        Self.write(statusDisagreements, into: &w)
        w.revocation(APIResponseResultMember.revocation, revocation)
        w.key(APIResponseResultMember.unsigned)
        if let u = unsignedJSON { w.rawJSON(u) } else { w.null() }
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }

    private static func write(_ list: [SubscriptionStatusCheck], into w: inout JSONWriter) {
        w.beginArray()
        for s in list {
            w.beginObject()
            w.field(StatusCheckMember.subscriptionGroupIdentifier, s.subscriptionGroupIdentifier)
            w.field(StatusCheckMember.originalTransactionID, s.originalTransactionID)
            w.field(StatusCheckMember.appleStatus, s.appleStatus)
            w.field(StatusCheckMember.appleState, Self.appleState(s.appleStatus))
            w.field(StatusCheckMember.engineState, s.engineState?.rawValue)
            w.field(StatusCheckMember.agrees, s.agrees)
            w.endObject()
        }
        w.endArray()
    }

    /// Apple's names for subscription statuses 1–5.
    static func appleState(_ status: Int64) -> String? {
        switch status {
        case 1: return "active"
        case 2: return "expired"
        case 3: return "billing_retry"
        case 4: return "grace_period"
        case 5: return "revoked"
        default: return nil
        }
    }
}

extension APIResponseReport: VerificationResult {}

extension APIResponseReport: RenderedResult {}
