// What each App Store Server Notification V2 type and subtype does to a subscriber's state, named
// in the result as `notification.effect`. The state itself always comes from the signed
// transaction and renewal info the notification carries; the effect says why it changed.
// A type or subtype not listed here is `unknown`: kept as data, never applied, never an error.

public enum NotificationEffect: String, Sendable, CaseIterable {
    case subscriptionStarted = "subscription_started"        // SUBSCRIBED INITIAL_BUY
    case subscriptionResumed = "subscription_resumed"        // SUBSCRIBED RESUBSCRIBE
    case renewed                                              // DID_RENEW
    case billingRecovered = "billing_recovered"              // DID_RENEW BILLING_RECOVERY
    case upgraded                                             // DID_CHANGE_RENEWAL_PREF UPGRADE (now)
    case downgradeScheduled = "downgrade_scheduled"          // DID_CHANGE_RENEWAL_PREF DOWNGRADE (next renewal)
    case downgradeCancelled = "downgrade_cancelled"          // DID_CHANGE_RENEWAL_PREF, no subtype
    case autoRenewEnabled = "auto_renew_enabled"             // DID_CHANGE_RENEWAL_STATUS
    case autoRenewDisabled = "auto_renew_disabled"           // (access continues to the expiry)
    case offerRedeemed = "offer_redeemed"                    // OFFER_REDEEMED (any subtype Apple lists)
    case gracePeriodStarted = "grace_period_started"         // DID_FAIL_TO_RENEW GRACE_PERIOD
    case billingRetryStarted = "billing_retry_started"       // DID_FAIL_TO_RENEW, no subtype
    case gracePeriodEnded = "grace_period_ended"             // GRACE_PERIOD_EXPIRED
    case expired                                              // EXPIRED (every subtype)
    case priceIncreasePending = "price_increase_pending"     // PRICE_INCREASE PENDING
    case priceIncreaseAccepted = "price_increase_accepted"   // PRICE_INCREASE ACCEPTED
    case refunded                                             // REFUND: access ends at revocationDate
    case refundDeclined = "refund_declined"                  // REFUND_DECLINED: nothing changes
    case refundReversed = "refund_reversed"                  // REFUND_REVERSED: access comes back
    case revoked                                              // REVOKE (Family Sharing)
    case renewalExtended = "renewal_extended"                // RENEWAL_EXTENDED: a later expiry
    case renewalExtensionSummary = "renewal_extension_summary" // RENEWAL_EXTENSION SUMMARY
    case renewalExtensionFailed = "renewal_extension_failed" // RENEWAL_EXTENSION FAILURE
    case consumptionInfoRequested = "consumption_info_requested" // CONSUMPTION_REQUEST
    case oneTimePurchase = "one_time_purchase"               // ONE_TIME_CHARGE
    case externalPurchaseToken = "external_purchase_token"   // EXTERNAL_PURCHASE_TOKEN
    case metadataUpdated = "metadata_updated"                // METADATA_UPDATE (Advanced Commerce)
    case migrated                                             // MIGRATION (Advanced Commerce)
    case priceChanged = "price_changed"                      // PRICE_CHANGE (Advanced Commerce)
    case consentRescinded = "consent_rescinded"              // RESCIND_CONSENT
    case test                                                 // TEST
    case unknown

    /// The effect of a type and subtype as Apple names them.
    public static func of(type: String, subtype: String?) -> NotificationEffect {
        switch (type, subtype) {
        case ("SUBSCRIBED", "INITIAL_BUY"): return .subscriptionStarted
        case ("SUBSCRIBED", "RESUBSCRIBE"): return .subscriptionResumed
        case ("DID_RENEW", nil): return .renewed
        case ("DID_RENEW", "BILLING_RECOVERY"): return .billingRecovered
        case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"): return .upgraded
        case ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"): return .downgradeScheduled
        case ("DID_CHANGE_RENEWAL_PREF", nil): return .downgradeCancelled
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): return .autoRenewEnabled
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), ("DID_CHANGE_RENEWAL_STATUS", nil): return .autoRenewDisabled
        case ("OFFER_REDEEMED", nil), ("OFFER_REDEEMED", "INITIAL_BUY"), ("OFFER_REDEEMED", "RESUBSCRIBE"),
             ("OFFER_REDEEMED", "UPGRADE"), ("OFFER_REDEEMED", "DOWNGRADE"): return .offerRedeemed
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): return .gracePeriodStarted
        case ("DID_FAIL_TO_RENEW", nil): return .billingRetryStarted
        case ("GRACE_PERIOD_EXPIRED", nil): return .gracePeriodEnded
        case ("EXPIRED", nil), ("EXPIRED", "VOLUNTARY"), ("EXPIRED", "BILLING_RETRY"), ("EXPIRED", "PRICE_INCREASE"),
             ("EXPIRED", "PRODUCT_NOT_FOR_SALE"): return .expired
        case ("PRICE_INCREASE", "PENDING"): return .priceIncreasePending
        case ("PRICE_INCREASE", "ACCEPTED"): return .priceIncreaseAccepted
        case ("REFUND", nil): return .refunded
        case ("REFUND_DECLINED", nil): return .refundDeclined
        case ("REFUND_REVERSED", nil): return .refundReversed
        case ("REVOKE", nil): return .revoked
        case ("RENEWAL_EXTENDED", nil): return .renewalExtended
        case ("RENEWAL_EXTENSION", "SUMMARY"): return .renewalExtensionSummary
        case ("RENEWAL_EXTENSION", "FAILURE"): return .renewalExtensionFailed
        case ("CONSUMPTION_REQUEST", nil): return .consumptionInfoRequested
        case ("ONE_TIME_CHARGE", nil): return .oneTimePurchase
        case ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED"), ("EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER"),
             ("EXTERNAL_PURCHASE_TOKEN", "CREATED"): return .externalPurchaseToken
        case ("METADATA_UPDATE", _): return .metadataUpdated
        case ("MIGRATION", _): return .migrated
        case ("PRICE_CHANGE", _): return .priceChanged
        case ("RESCIND_CONSENT", nil): return .consentRescinded
        case ("TEST", nil): return .test
        default: return .unknown
        }
    }
}
