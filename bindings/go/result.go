package iapverify

import "encoding/json"

// Result is the answer of any call; JSON keeps the library's full result document.
type Result struct {
	Verdict         string          `json:"verdict"`
	Reason          string          `json:"reason"`
	Valid           bool            `json:"-"`
	Status          *int64          `json:"status,omitempty"`         // responses only
	Action          string          `json:"action,omitempty"`         // responses only
	RetryAfterMs    *int64          `json:"retry_after_ms,omitempty"` // responses only
	Environment     *string         `json:"environment,omitempty"`
	Receipt         json.RawMessage `json:"receipt"`
	Entitlements    []Entitlement   `json:"entitlements"`
	Purchases       []Purchase      `json:"purchases"`
	Delivery        Delivery        `json:"delivery"`
	UnknownProducts []string        `json:"unknown_products"`
	IntroEligible   map[string]bool `json:"intro_eligible"`
	Kind            string          `json:"kind,omitempty"`         // JWS only
	Transaction     json.RawMessage `json:"transaction,omitempty"`  // JWS only
	Notification    json.RawMessage `json:"notification,omitempty"` // JWS only
	JSON            []byte          `json:"-"`
}

// JWSNotification is the "notification" member of a JWS result, as Result.JWSNotification reads it.
type JWSNotification struct {
	NotificationType string       `json:"notification_type"`
	Subtype          *string      `json:"subtype"`
	NotificationUUID *string      `json:"notification_uuid"`
	SignedDateMs     *int64       `json:"signed_date_ms"`
	Effect           string       `json:"effect"` // e.g. "renewed", "refunded"; "unknown" for a type this library does not know
	Action           string       `json:"action"` // apply, ignore_duplicate, ignore_stale, send_consumption_info, record_only, reject
	Transaction      *Transaction `json:"transaction"`
	RenewalInfo      *RenewalInfo `json:"renewal_info"`
}

// JWSNotification decodes the result's notification; nil when the token was not a notification.
func (r *Result) JWSNotification() (*JWSNotification, error) {
	if len(r.Notification) == 0 || string(r.Notification) == "null" {
		return nil, nil
	}
	var n JWSNotification
	if err := json.Unmarshal(r.Notification, &n); err != nil {
		return nil, &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: "notification JSON: " + err.Error()}
	}
	return &n, nil
}

// Entitlement says whether one entitlement is active now, and why.
type Entitlement struct {
	ID                    string   `json:"id"`
	Active                bool     `json:"active"`
	State                 string   `json:"state"`
	ProductID             *string  `json:"product_id"`
	OriginalTransactionID *string  `json:"original_transaction_id"`
	TransactionID         *string  `json:"transaction_id"`
	ExpiresDateMs         *int64   `json:"expires_date_ms"`
	WillRenew             *bool    `json:"will_renew"`
	RenewsTo              *string  `json:"renews_to"`
	Period                *string  `json:"period"`
	Ownership             *string  `json:"ownership"`
	ExpirationReason      *string  `json:"expiration_reason"`
	CancellationReason    *string  `json:"cancellation_reason,omitempty"` // a revoked purchase: Apple's reason ("0", "1")
	PriceIncrease         *string  `json:"price_increase"`                // "pending", "accepted" or nil
	RevocationType        *string  `json:"revocation_type,omitempty"`     // a revoked purchase: e.g. "REFUND_PRORATED"
	Reason                string   `json:"reason"`
	Evidence              Evidence `json:"evidence"`
}

// Evidence names the transaction and the rule that decided an entitlement.
type Evidence struct {
	Rule          string  `json:"rule"`
	TransactionID *string `json:"transaction_id"`
	Candidates    int     `json:"candidates"`
}

// Purchase is one transaction as the catalog types it.
type Purchase struct {
	TransactionID         string  `json:"transaction_id"`
	OriginalTransactionID *string `json:"original_transaction_id"`
	ProductID             string  `json:"product_id"`
	Type                  string  `json:"type"`
	Quantity              int64   `json:"quantity"`
	PurchaseDateMs        *int64  `json:"purchase_date_ms"`
	Revoked               bool    `json:"revoked"`
}

// Delivery is what to hand out, what to take back, and which order each purchase pays.
type Delivery struct {
	ToDeliver []DeliveryItem `json:"to_deliver"`
	ToRevoke  []DeliveryItem `json:"to_revoke"`
	Orders    []OrderMatch   `json:"orders"`
}

// DeliveryItem is one transaction to deliver or revoke. Store TransactionID under a unique index.
type DeliveryItem struct {
	TransactionID         string  `json:"transaction_id"`
	OriginalTransactionID *string `json:"original_transaction_id"`
	ProductID             string  `json:"product_id"`
	Quantity              int64   `json:"quantity"`
	PurchaseDateMs        *int64  `json:"purchase_date_ms"`
}

// OrderMatch pairs a pending order with the purchase that pays it, if any.
type OrderMatch struct {
	OrderID       string  `json:"order_id"`
	TransactionID *string `json:"transaction_id"`
	Status        string  `json:"status"` // "matched" or "unmatched"
}

// Entitlement returns the entitlement with this id, or nil.
func (r *Result) Entitlement(id string) *Entitlement {
	for i := range r.Entitlements {
		if r.Entitlements[i].ID == id {
			return &r.Entitlements[i]
		}
	}
	return nil
}
