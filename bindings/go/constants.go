package iapverify

// Named string types for the values the library writes in its results. The result fields have
// these types; a value this package has no constant for (a newer library, a new Apple type)
// still comes through as it is. Compare with the constants or with string literals:
//
//	if r.Verdict == iapverify.VerdictValid { ... }    // or r.Verdict == "valid"
//
// Use string(v) where a plain string is needed.

// Verdict is what an input is worth (docs/verdicts.md). Only VerdictValid grants anything.
type Verdict string

// The verdicts.
const (
	VerdictValid                  Verdict = "valid"
	VerdictMalformed              Verdict = "malformed"
	VerdictUnsupportedAlgorithm   Verdict = "unsupported_algorithm"
	VerdictUntrustedChain         Verdict = "untrusted_chain"
	VerdictNotAppleSigner         Verdict = "not_apple_signer"
	VerdictSignatureInvalid       Verdict = "signature_invalid"
	VerdictEnvironmentRejected    Verdict = "environment_rejected"
	VerdictBundleMismatch         Verdict = "bundle_mismatch"
	VerdictVersionMismatch        Verdict = "version_mismatch"
	VerdictDeviceMismatch         Verdict = "device_mismatch"
	VerdictReceiptExpired         Verdict = "receipt_expired"
	VerdictStale                  Verdict = "stale"
	VerdictRevoked                Verdict = "revoked"
	VerdictRevocationUnknown      Verdict = "revocation_unknown"
	VerdictWrongEnvironment       Verdict = "wrong_environment"
	VerdictTemporarilyUnavailable Verdict = "temporarily_unavailable"
	VerdictConfigurationError     Verdict = "configuration_error"
	VerdictRejectedByApple        Verdict = "rejected_by_apple"
	// VerdictUnverified is the CLI's inspect: decoded, nothing checked. Never grant from it.
	VerdictUnverified Verdict = "unverified"
)

// Action is what to do next: after a /verifyReceipt answer (Result.Action), an App Store Server
// API answer (APIResult.Action) or a notification (JWSNotification.Action).
type Action string

// The actions of /verifyReceipt and App Store Server API answers
// (docs/verifyreceipt.md, docs/server-api.md#the-action).
const (
	ActionAccept           Action = "accept"
	ActionNextPage         Action = "next_page" // API answers only
	ActionRetryLater       Action = "retry_later"
	ActionRetrySandbox     Action = "retry_sandbox"
	ActionRetryProduction  Action = "retry_production" // /verifyReceipt only
	ActionGiveUp           Action = "give_up"
	ActionFixConfiguration Action = "fix_configuration"
	ActionReject           Action = "reject"
)

// The actions of a notification (docs/storekit2.md); ActionReject too.
const (
	ActionApply               Action = "apply"
	ActionIgnoreDuplicate     Action = "ignore_duplicate"
	ActionIgnoreStale         Action = "ignore_stale"
	ActionSendConsumptionInfo Action = "send_consumption_info"
	ActionRecordOnly          Action = "record_only"
)

// The action of a Retention Messaging realtime request a host should answer; ActionIgnoreDuplicate,
// ActionIgnoreStale and ActionReject too.
const (
	ActionRespond Action = "respond"
)

// JWSKind is what a StoreKit 2 token is (Result.Kind), and the kind a caller expects
// (Options.Kind): a token of another kind is malformed (docs/storekit2.md).
type JWSKind string

// The kinds of signed token. KindUnknown (signed by Apple, of no shape this library models) is
// only ever a result's kind, never an option.
const (
	KindTransaction     JWSKind = "transaction"
	KindRenewalInfo     JWSKind = "renewal_info"
	KindAppTransaction  JWSKind = "app_transaction"
	KindNotification    JWSKind = "notification"
	KindRealtimeRequest JWSKind = "realtime_request"
	KindUnknown         JWSKind = "unknown"
)

// Environment is the environment a receipt, a signed token or a /verifyReceipt answer names, as
// Apple spells it (Result.Environment, a transaction's "environment").
type Environment string

// The environments.
const (
	ProductionEnvironment   Environment = "Production"
	SandboxEnvironment      Environment = "Sandbox"
	XcodeEnvironment        Environment = "Xcode"
	LocalTestingEnvironment Environment = "LocalTesting"
)

// ServerEnvironment is which of Apple's servers a call goes to or an answer came from: the
// /verifyReceipt host (Options.Environment) or the App Store Server API host (a call's
// "environment", APIResponseOptions.Environment, APIResult.Environment). It is spelled as Apple
// spells environments, like the config's "environments". The lower-case "production" and
// "sandbox" of release 0.1 still work until the next release; the result's Deprecations says so.
type ServerEnvironment string

// The server environments.
const (
	EnvironmentProduction ServerEnvironment = "Production"
	EnvironmentSandbox    ServerEnvironment = "Sandbox"
	// A server the developer runs (the signer's local_testing_base_url); API calls only.
	EnvironmentLocalTesting ServerEnvironment = "LocalTesting"
)

// State says why an entitlement is or is not active (docs/entitlements.md#states).
type State string

// The entitlement states. StateActive, StateGracePeriod and StateOwned are active.
const (
	StateActive       State = "active"
	StateGracePeriod  State = "grace_period"
	StateOwned        State = "owned"
	StateBillingRetry State = "billing_retry"
	StateExpired      State = "expired"
	StateRefunded     State = "refunded"
	StateUpgraded     State = "upgraded"
	StateNotPurchased State = "not_purchased"
)

// NotificationType is an App Store Server Notification V2 notificationType, as Apple writes it.
type NotificationType string

// The notification types the library knows (docs/storekit2.md#every-type-and-subtype). Any other
// is kept as data: its Effect is EffectUnknown and its action ActionRecordOnly.
const (
	NotificationSubscribed             NotificationType = "SUBSCRIBED"
	NotificationDidRenew               NotificationType = "DID_RENEW"
	NotificationDidChangeRenewalPref   NotificationType = "DID_CHANGE_RENEWAL_PREF"
	NotificationDidChangeRenewalStatus NotificationType = "DID_CHANGE_RENEWAL_STATUS"
	NotificationOfferRedeemed          NotificationType = "OFFER_REDEEMED"
	NotificationDidFailToRenew         NotificationType = "DID_FAIL_TO_RENEW"
	NotificationGracePeriodExpired     NotificationType = "GRACE_PERIOD_EXPIRED"
	NotificationExpired                NotificationType = "EXPIRED"
	NotificationPriceIncrease          NotificationType = "PRICE_INCREASE"
	NotificationRefund                 NotificationType = "REFUND"
	NotificationRefundDeclined         NotificationType = "REFUND_DECLINED"
	NotificationRefundReversed         NotificationType = "REFUND_REVERSED"
	NotificationRevoke                 NotificationType = "REVOKE"
	NotificationRenewalExtended        NotificationType = "RENEWAL_EXTENDED"
	NotificationRenewalExtension       NotificationType = "RENEWAL_EXTENSION"
	NotificationConsumptionRequest     NotificationType = "CONSUMPTION_REQUEST"
	NotificationOneTimeCharge          NotificationType = "ONE_TIME_CHARGE"
	NotificationExternalPurchaseToken  NotificationType = "EXTERNAL_PURCHASE_TOKEN"
	NotificationMetadataUpdate         NotificationType = "METADATA_UPDATE"
	NotificationMigration              NotificationType = "MIGRATION"
	NotificationPriceChange            NotificationType = "PRICE_CHANGE"
	NotificationRescindConsent         NotificationType = "RESCIND_CONSENT"
	NotificationTest                   NotificationType = "TEST"
)

// NotificationSubtype is a notification's subtype, as Apple writes it; "" when it has none.
type NotificationSubtype string

// The notification subtypes the library knows.
const (
	SubtypeInitialBuy          NotificationSubtype = "INITIAL_BUY"
	SubtypeResubscribe         NotificationSubtype = "RESUBSCRIBE"
	SubtypeBillingRecovery     NotificationSubtype = "BILLING_RECOVERY"
	SubtypeUpgrade             NotificationSubtype = "UPGRADE"
	SubtypeDowngrade           NotificationSubtype = "DOWNGRADE"
	SubtypeAutoRenewEnabled    NotificationSubtype = "AUTO_RENEW_ENABLED"
	SubtypeAutoRenewDisabled   NotificationSubtype = "AUTO_RENEW_DISABLED"
	SubtypeGracePeriod         NotificationSubtype = "GRACE_PERIOD"
	SubtypeVoluntary           NotificationSubtype = "VOLUNTARY"
	SubtypeBillingRetry        NotificationSubtype = "BILLING_RETRY"
	SubtypePriceIncrease       NotificationSubtype = "PRICE_INCREASE"
	SubtypeProductNotForSale   NotificationSubtype = "PRODUCT_NOT_FOR_SALE"
	SubtypePending             NotificationSubtype = "PENDING"
	SubtypeAccepted            NotificationSubtype = "ACCEPTED"
	SubtypeSummary             NotificationSubtype = "SUMMARY"
	SubtypeFailure             NotificationSubtype = "FAILURE"
	SubtypeUnreported          NotificationSubtype = "UNREPORTED"
	SubtypeActiveTokenReminder NotificationSubtype = "ACTIVE_TOKEN_REMINDER"
	SubtypeCreated             NotificationSubtype = "CREATED"
)

// Effect is what a notification's type and subtype mean for access (notification "effect").
type Effect string

// The effects (docs/storekit2.md#every-type-and-subtype).
const (
	EffectSubscriptionStarted      Effect = "subscription_started"
	EffectSubscriptionResumed      Effect = "subscription_resumed"
	EffectRenewed                  Effect = "renewed"
	EffectBillingRecovered         Effect = "billing_recovered"
	EffectUpgraded                 Effect = "upgraded"
	EffectDowngradeScheduled       Effect = "downgrade_scheduled"
	EffectDowngradeCancelled       Effect = "downgrade_cancelled"
	EffectAutoRenewEnabled         Effect = "auto_renew_enabled"
	EffectAutoRenewDisabled        Effect = "auto_renew_disabled"
	EffectOfferRedeemed            Effect = "offer_redeemed"
	EffectGracePeriodStarted       Effect = "grace_period_started"
	EffectBillingRetryStarted      Effect = "billing_retry_started"
	EffectGracePeriodEnded         Effect = "grace_period_ended"
	EffectExpired                  Effect = "expired"
	EffectPriceIncreasePending     Effect = "price_increase_pending"
	EffectPriceIncreaseAccepted    Effect = "price_increase_accepted"
	EffectRefunded                 Effect = "refunded"
	EffectRefundDeclined           Effect = "refund_declined"
	EffectRefundReversed           Effect = "refund_reversed"
	EffectRevoked                  Effect = "revoked"
	EffectRenewalExtended          Effect = "renewal_extended"
	EffectRenewalExtensionSummary  Effect = "renewal_extension_summary"
	EffectRenewalExtensionFailed   Effect = "renewal_extension_failed"
	EffectConsumptionInfoRequested Effect = "consumption_info_requested"
	EffectOneTimePurchase          Effect = "one_time_purchase"
	EffectExternalPurchaseToken    Effect = "external_purchase_token"
	EffectMetadataUpdated          Effect = "metadata_updated"
	EffectMigrated                 Effect = "migrated"
	EffectPriceChanged             Effect = "price_changed"
	EffectConsentRescinded         Effect = "consent_rescinded"
	EffectTest                     Effect = "test"
	EffectUnknown                  Effect = "unknown"
)

// subtype reads an optional subtype.
func subtype(p *string) NotificationSubtype {
	if p == nil {
		return ""
	}
	return NotificationSubtype(*p)
}

// NotificationSubtype is Subtype as a NotificationSubtype; "" when the notification has none.
func (n JWSNotification) NotificationSubtype() NotificationSubtype { return subtype(n.Subtype) }

// NotificationSubtype is Subtype as a NotificationSubtype; "" when the notification has none.
func (n APINotification) NotificationSubtype() NotificationSubtype { return subtype(n.Subtype) }
