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
        w.field("verdict", verdict.rawValue)
        w.field("reason", judgement.reason)
        w.field("endpoint", endpoint.rawValue)
        w.field("environment", environment.rawValue)
        w.field("http_status", httpStatus)
        // A host that reads only the action must still be safe: not valid never says accept.
        w.field("action", isValid || action != .accept && action != .nextPage ? action.rawValue : NextAction.reject.rawValue)
        w.field("retry_after_ms", retryAfterMs)
        w.field("deprecations", deprecations)
        w.field("error_code", errorCode)
        w.field("error_message", errorMessage)
        w.field("trusted", isValid)
        w.key("next_page")
        switch nextPage {
        case .revision(let r)?:
            w.beginObject(); w.field("revision", r); w.endObject()
        case .paginationToken(let t)?:
            w.beginObject(); w.field("pagination_token", t); w.endObject()
        case nil:
            w.null()
        }
        w.field("signed_items", Int64(signedItems))
        w.field("order_status", orderStatus)
        TransactionWriter.write("transactions", transactions, "renewal_info", renewals, into: &w)
        w.key("app_transaction")
        if let a = appTransactionJSON { w.rawJSON(a) } else { w.null() }
        w.key("notifications")
        w.beginArray()
        for n in notifications {
            w.beginObject()
            w.field("notification_type", n.type)
            w.field("subtype", n.subtype)
            w.field("effect", n.effect.rawValue)
            w.field("notification_uuid", n.uuid)
            w.field("signed_date_ms", n.signedDateMs)
            w.endObject()
        }
        w.endArray()
        w.key("subscription_statuses")
        Self.write(statuses, into: &w)
        w.key("status_disagreements")
        Self.write(statusDisagreements, into: &w)
        w.revocation(revocation)
        w.key("unsigned")
        if let u = unsignedJSON { w.rawJSON(u) } else { w.null() }
        w.grants(entitlements, valid: isValid)
        w.endObject()
        return w.finish()
    }

    private static func write(_ list: [SubscriptionStatusCheck], into w: inout JSONWriter) {
        w.beginArray()
        for s in list {
            w.beginObject()
            w.field("subscription_group_identifier", s.subscriptionGroupIdentifier)
            w.field("original_transaction_id", s.originalTransactionID)
            w.field("apple_status", s.appleStatus)
            w.field("apple_state", Self.appleState(s.appleStatus))
            w.field("engine_state", s.engineState?.rawValue)
            w.field("agrees", s.agrees)
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
