// The states an auto-renewable subscription's entitlement can be in, and which App Store Server
// Notification effects move it between them, as one table. It is data, not logic: the engine
// decides from the signed transactions and renewal infos alone. The table exists so that the
// picture of the states (`iapverify states`, drawn into docs/subscription-states.svg by
// scripts/state-diagram) comes from the code, and SubscriptionStateTableTests replays every row
// through EntitlementEngine, so a row the engine does not produce fails the tests.
// Public because the CLI (a separate target) prints it.

/// One state of the table: the engine's state and whether it grants access.
package struct SubscriptionStateRow: Sendable {
    public let state: EntitlementState
    public let active: Bool
    public let meaning: String
}

/// One arrow: a notification with `effect` arriving while the entitlement is in one of `from`
/// leaves it in `to` once the records it carries are applied. `when` says which case, for an
/// effect with more than one outcome.
package struct SubscriptionTransition: Sendable {
    public let from: [EntitlementState]
    public let effect: NotificationEffect
    public let to: EntitlementState
    public let when: String?
}

/// An effect that is not drawn, and why.
package struct SubscriptionEffectNotDrawn: Sendable {
    public let effect: NotificationEffect
    public let why: String
}

package enum SubscriptionStates {
    /// Where a subscription starts: no transaction grants the entitlement yet.
    public static let start: EntitlementState = .notPurchased

    /// Every state an auto-renewable subscription can give; `owned` is for non-consumables only.
    public static let states: [SubscriptionStateRow] = [
        .init(state: .notPurchased, active: false, meaning: "no transaction grants the entitlement"),
        .init(state: .active, active: true, meaning: "a paid period covers now"),
        .init(state: .gracePeriod, active: true, meaning: "renewal failed; Apple retries and the grace period has not ended"),
        .init(state: .billingRetry, active: false, meaning: "renewal failed; Apple retries, without grace"),
        .init(state: .expired, active: false, meaning: "the last period ended"),
        .init(state: .refunded, active: false, meaning: "the period covering now was refunded or revoked"),
        .init(state: .upgraded, active: false, meaning: "replaced by a higher tier that does not grant this entitlement"),
    ]

    /// States no auto-renewable subscription gives (kept here so a new state needs a decision).
    public static let notSubscriptionStates: [EntitlementState] = [.owned]

    // The conditions of effects with more than one outcome (the tests pick their scenario by them).
    static let whenNewTierGrants = "the new tier grants it"
    static let whenNewTierDoesNot = "the new tier does not grant it"
    static let whenGraceHonoured = "grace_period: honor"
    static let whenGraceIgnored = "grace_period: ignore"
    static let whenStillRetrying = "Apple still retries"
    static let whenRetryStopped = "Apple stopped retrying"
    static let whenPeriodCoversNow = "the period still covers now"
    static let whenPeriodEnded = "the period has ended"

    /// The arrows, in the order they are drawn. Each row is what the engine gives for the signed
    /// records Apple sends with that notification (docs/storekit2.md, "Every type and subtype").
    public static let transitions: [SubscriptionTransition] = [
        .init(from: [.notPurchased], effect: .subscriptionStarted, to: .active, when: nil),
        .init(from: [.notPurchased, .expired, .active], effect: .offerRedeemed, to: .active, when: nil),
        .init(from: [.expired, .refunded], effect: .subscriptionResumed, to: .active, when: nil),
        // Billing trouble: grace keeps access only when the config honours it.
        .init(from: [.active], effect: .gracePeriodStarted, to: .gracePeriod, when: whenGraceHonoured),
        .init(from: [.active], effect: .gracePeriodStarted, to: .billingRetry, when: whenGraceIgnored),
        .init(from: [.active], effect: .billingRetryStarted, to: .billingRetry, when: nil),
        .init(from: [.gracePeriod], effect: .gracePeriodEnded, to: .billingRetry, when: whenStillRetrying),
        .init(from: [.gracePeriod], effect: .gracePeriodEnded, to: .expired, when: whenRetryStopped),
        .init(from: [.gracePeriod, .billingRetry], effect: .billingRecovered, to: .active, when: nil),
        .init(from: [.active, .billingRetry], effect: .expired, to: .expired, when: nil),
        // Refunds and revocations end access at the revocation date; a reversal gives back
        // whatever the transaction itself says.
        .init(from: [.active], effect: .refunded, to: .refunded, when: nil),
        .init(from: [.active], effect: .revoked, to: .refunded, when: nil),
        .init(from: [.refunded], effect: .refundReversed, to: .active, when: whenPeriodCoversNow),
        .init(from: [.refunded], effect: .refundReversed, to: .expired, when: whenPeriodEnded),
        // An upgrade revokes the old period: the entitlement follows the new tier if it grants it.
        .init(from: [.active], effect: .upgraded, to: .active, when: whenNewTierGrants),
        .init(from: [.active], effect: .upgraded, to: .upgraded, when: whenNewTierDoesNot),
        // A new period or a later expiry: still active.
        .init(from: [.active], effect: .renewed, to: .active, when: nil),
        .init(from: [.active], effect: .renewalExtended, to: .active, when: nil),
        // Renewal preferences, price increases and reports change other members, never the state.
        .init(from: [.active], effect: .downgradeScheduled, to: .active, when: nil),
        .init(from: [.active], effect: .downgradeCancelled, to: .active, when: nil),
        .init(from: [.active], effect: .autoRenewEnabled, to: .active, when: nil),
        .init(from: [.active], effect: .autoRenewDisabled, to: .active, when: nil),
        .init(from: [.active], effect: .priceIncreasePending, to: .active, when: nil),
        .init(from: [.active], effect: .priceIncreaseAccepted, to: .active, when: nil),
        .init(from: [.active], effect: .refundDeclined, to: .active, when: nil),
        .init(from: [.active], effect: .renewalExtensionSummary, to: .active, when: nil),
        .init(from: [.active], effect: .renewalExtensionFailed, to: .active, when: nil),
        .init(from: [.active], effect: .consumptionInfoRequested, to: .active, when: nil),
    ]

    /// Effects left out of the picture: not about an auto-renewable subscription's state.
    public static let notDrawn: [SubscriptionEffectNotDrawn] = [
        .init(effect: .oneTimePurchase, why: "a one-time purchase, not a subscription"),
        .init(effect: .externalPurchaseToken, why: "no App Store transaction"),
        .init(effect: .metadataUpdated, why: "Advanced Commerce: the state is what the transaction says"),
        .init(effect: .migrated, why: "Advanced Commerce: the state is what the transaction says"),
        .init(effect: .priceChanged, why: "Advanced Commerce: a renewal price, not a state"),
        .init(effect: .consentRescinded, why: "nothing in access"),
        .init(effect: .test, why: "Apple's test notification"),
        .init(effect: .unknown, why: "never applied"),
    ]

    public static func row(_ state: EntitlementState) -> SubscriptionStateRow? { states.first { $0.state == state } }
}
