package iapverify

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
)

// Result is the answer of any call; JSON keeps the library's full result document.
type Result struct {
	Verdict      Verdict `json:"verdict"`
	Reason       string  `json:"reason"`
	Valid        bool    `json:"-"`
	Status       *int64  `json:"status,omitempty"`         // responses only
	Action       Action  `json:"action,omitempty"`         // responses only
	RetryAfterMs *int64  `json:"retry_after_ms,omitempty"` // responses only
	Environment  *string `json:"environment,omitempty"`
	// Deprecations (responses only) lists the old spellings the options used (Options.Endpoint,
	// a lower-case environment), each with what to write instead; empty when there are none.
	Deprecations    []string        `json:"deprecations,omitempty"`
	Receipt         json.RawMessage `json:"receipt"`
	Entitlements    []Entitlement   `json:"entitlements"`
	Purchases       []Purchase      `json:"purchases"`
	Delivery        Delivery        `json:"delivery"`
	UnknownProducts []string        `json:"unknown_products"`
	// CatalogConflicts lists catalog entries whose type contradicts the type Apple signed.
	CatalogConflicts []CatalogConflict `json:"catalog_conflicts"`
	IntroEligible    map[string]bool   `json:"intro_eligible"`
	// Checks (receipts only) is each check's outcome: "structure" ... "age" -> ok, failed,
	// skipped, not_checked or not_run (docs/receipts.md).
	Checks map[string]string `json:"checks"`
	// The JWS result's own members (JWS only): Trusted is true only when the verdict is valid;
	// Chain the validated certificates, leaf first; Payload the decoded payload exactly as signed.
	Trusted         bool            `json:"trusted,omitempty"`
	BundleID        *string         `json:"bundle_id,omitempty"`
	SignedDateMs    *int64          `json:"signed_date_ms,omitempty"`
	ValidatedAtMs   *int64          `json:"validated_at_ms,omitempty"`
	Chain           []Certificate   `json:"chain,omitempty"`
	AppAccountToken *string         `json:"app_account_token,omitempty"` // a transaction's appAccountToken
	ProductType     *string         `json:"product_type,omitempty"`      // a transaction's type, as Apple wrote it
	Payload         json.RawMessage `json:"payload,omitempty"`
	Kind            JWSKind         `json:"kind,omitempty"`             // JWS only ("" when null)
	Transaction     json.RawMessage `json:"transaction,omitempty"`      // JWS only: Result.JWSTransaction reads it
	RenewalInfo     json.RawMessage `json:"renewal_info,omitempty"`     // JWS only: Result.JWSRenewalInfo reads it
	Notification    json.RawMessage `json:"notification,omitempty"`     // JWS only: Result.JWSNotification reads it
	RealtimeRequest json.RawMessage `json:"realtime_request,omitempty"` // JWS only: Result.JWSRealtimeRequest reads it
	// Revocation is the signing certificate's OCSP facts: a JWS result's "revocation", a receipt
	// result's "receipt.signing.revocation". Nil until the chain verified.
	Revocation *Revocation `json:"revocation,omitempty"`
	JSON       []byte      `json:"-"`
}

// Revocation is what the library knows about the revocation of the certificate that signed a JWS
// or a receipt, and the OCSP request that would tell more (docs/revocation.md).
type Revocation struct {
	Status       string  `json:"status"` // "unchecked", "good", "revoked" or "unknown"
	Reason       string  `json:"reason"`
	ThisUpdateMs *int64  `json:"this_update_ms,omitempty"` // good only
	NextUpdateMs *int64  `json:"next_update_ms,omitempty"` // good only; nil when the responder gave none
	RevokedAtMs  *int64  `json:"revoked_at_ms,omitempty"`  // revoked only
	ResponderURL *string `json:"responder_url"`            // the leaf's OCSP responder, nil when it names none
	// Request is the DER OCSPRequest (the result carries it in base64). POST it to ResponderURL
	// with Content-Type application/ocsp-request and pass the answer in Options.OCSPResponses.
	Request []byte `json:"request"`
}

// Certificate is one certificate of a verified chain.
type Certificate struct {
	Subject     string `json:"subject"`       // comma-separated attributes, in the certificate's order
	NotBeforeMs int64  `json:"not_before_ms"` // start of the validity period
	NotAfterMs  int64  `json:"not_after_ms"`  // end of the validity period
	SHA256      string `json:"sha256"`        // SHA-256 of the DER, 64 upper-case hex digits
}

// HTTPRequest is the POST of Request to ResponderURL, ready for an http.Client.
func (r *Revocation) HTTPRequest(ctx context.Context) (*http.Request, error) {
	if r == nil || r.ResponderURL == nil || len(r.Request) == 0 {
		return nil, invalid("the signing certificate names no OCSP responder")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, *r.ResponderURL, bytes.NewReader(r.Request))
	if err != nil {
		return nil, invalid("the OCSP responder URL: " + err.Error())
	}
	req.Header.Set("Content-Type", "application/ocsp-request")
	return req, nil
}

func (r *Result) receiptRevocation() error {
	var receipt struct {
		Signing *struct {
			Revocation *Revocation `json:"revocation"`
		} `json:"signing"`
	}
	if string(r.Receipt) == "null" {
		return nil
	}
	if err := json.Unmarshal(r.Receipt, &receipt); err != nil {
		return &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: "receipt JSON: " + err.Error()}
	}
	if receipt.Signing != nil {
		r.Revocation = receipt.Signing.Revocation
	}
	return nil
}

// JWSNotification is the "notification" member of a JWS result, as Result.JWSNotification reads it.
type JWSNotification struct {
	NotificationType NotificationType `json:"notification_type"`
	Subtype          *string          `json:"subtype"`
	NotificationUUID *string          `json:"notification_uuid"`
	SignedDateMs     *int64           `json:"signed_date_ms"`
	Effect           Effect           `json:"effect"` // e.g. "renewed", "refunded"; "unknown" for a type this library does not know
	Action           Action           `json:"action"` // apply, ignore_duplicate, ignore_stale, send_consumption_info, record_only, reject
	Transaction      *Transaction     `json:"transaction"`
	RenewalInfo      *RenewalInfo     `json:"renewal_info"`
	// AppTransaction is a consent change's verified app transaction, in Apple's field names; JSON null otherwise.
	AppTransaction json.RawMessage `json:"app_transaction"`
	// ExternalPurchaseToken is an external purchase token notification's token; nil otherwise.
	ExternalPurchaseToken *ExternalPurchaseToken `json:"external_purchase_token,omitempty"`
}

// ExternalPurchaseToken is the token of an EXTERNAL_PURCHASE_TOKEN notification.
type ExternalPurchaseToken struct {
	ExternalPurchaseID    *string `json:"external_purchase_id"`
	TokenCreationDateMs   *int64  `json:"token_creation_date_ms"`
	AppAppleID            *int64  `json:"app_apple_id"`
	BundleID              *string `json:"bundle_id"`
	TokenType             *string `json:"token_type"` // as Apple wrote it, also a type this package does not know
	TokenExpirationDateMs *int64  `json:"token_expiration_date_ms"`
}

// JWSRealtimeRequest is the "realtime_request" member of a JWS result: a Retention Messaging
// realtime request (docs/storekit2.md#realtime-requests-retention-messaging).
type JWSRealtimeRequest struct {
	OriginalTransactionID string `json:"original_transaction_id"`
	ProductID             string `json:"product_id"`
	UserLocale            string `json:"user_locale"`
	RequestIdentifier     string `json:"request_identifier"`
	AppAppleID            *int64 `json:"app_apple_id"`
	SignedDateMs          int64  `json:"signed_date_ms"`
	Action                Action `json:"action"` // respond, ignore_duplicate, ignore_stale, reject
}

// decodeMember decodes one JWS-only member of the result into out; false when it is absent or null.
func decodeMember(raw json.RawMessage, what string, out any) (bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: what + " JSON: " + err.Error()}
	}
	return true, nil
}

// JWSNotification decodes the result's notification; nil when the token was not a notification.
func (r *Result) JWSNotification() (*JWSNotification, error) {
	var n JWSNotification
	if ok, err := decodeMember(r.Notification, "notification", &n); !ok {
		return nil, err
	}
	return &n, nil
}

// JWSTransaction decodes the result's transaction; nil when the token was not a transaction.
func (r *Result) JWSTransaction() (*Transaction, error) {
	var t Transaction
	if ok, err := decodeMember(r.Transaction, "transaction", &t); !ok {
		return nil, err
	}
	return &t, nil
}

// JWSRenewalInfo decodes the result's renewal info; nil when the token was not a renewal info.
func (r *Result) JWSRenewalInfo() (*RenewalInfo, error) {
	var ri RenewalInfo
	if ok, err := decodeMember(r.RenewalInfo, "renewal_info", &ri); !ok {
		return nil, err
	}
	return &ri, nil
}

// JWSRealtimeRequest decodes the result's realtime request; nil when the token was not one.
func (r *Result) JWSRealtimeRequest() (*JWSRealtimeRequest, error) {
	var q JWSRealtimeRequest
	if ok, err := decodeMember(r.RealtimeRequest, "realtime_request", &q); !ok {
		return nil, err
	}
	return &q, nil
}

// InApp decodes the result's receipt.in_app: a receipt's purchase records or a /verifyReceipt
// response's transactions, both in the one Transaction shape. Nil when the result has no receipt.
func (r *Result) InApp() ([]Transaction, error) {
	if len(r.Receipt) == 0 || string(r.Receipt) == "null" {
		return nil, nil
	}
	var receipt struct {
		InApp []Transaction `json:"in_app"`
	}
	if err := json.Unmarshal(r.Receipt, &receipt); err != nil {
		return nil, &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: "receipt JSON: " + err.Error()}
	}
	return receipt.InApp, nil
}

// Entitlement says whether one entitlement is active now, and why.
type Entitlement struct {
	ID                    string   `json:"id"`
	Active                bool     `json:"active"`
	State                 State    `json:"state"`
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
	// Items (only when the deciding purchase carries Advanced Commerce items): grant an item only
	// while its Active is true.
	Items []EntitlementItem `json:"items,omitempty"`
}

// EntitlementItem is one Advanced Commerce item of the purchase that decided an entitlement.
type EntitlementItem struct {
	SKU              string `json:"sku"`
	Active           bool   `json:"active"`             // the entitlement is active and the item itself was not revoked
	RevocationDateMs *int64 `json:"revocation_date_ms"` // when the item alone was revoked
}

// Evidence names the transaction and the rule that decided an entitlement.
type Evidence struct {
	Rule          string  `json:"rule"`
	TransactionID *string `json:"transaction_id"`
	Candidates    int     `json:"candidates"`
	// OfferType is the deciding transaction's offerType as Apple signed it (1 introductory,
	// 2 promotional, 3 offer code, 4 win-back, 5 retention), and Offer its name ("unknown" for a
	// number Apple added since); both only when it was bought with an offer.
	OfferType *int64 `json:"offer_type,omitempty"`
	Offer     string `json:"offer,omitempty"`
	// Billing is the deciding transaction's billing plan, when it states one.
	Billing *Billing `json:"billing,omitempty"`
}

// Billing is a billing plan as the deciding transaction states it: monthly payments toward a
// commitment grant one paid month at a time (Entitlement.ExpiresDateMs is that month's end).
type Billing struct {
	PlanType                *string `json:"plan_type"` // BILLED_UPFRONT, MONTHLY
	BillingPeriodNumber     *int64  `json:"billing_period_number"`
	TotalBillingPeriods     *int64  `json:"total_billing_periods"`
	CommitmentExpiresDateMs *int64  `json:"commitment_expires_date_ms"`
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

// CatalogConflict is a catalog entry whose type contradicts the type Apple signed for the
// product's purchases; the catalog's rule was used.
type CatalogConflict struct {
	ProductID   string `json:"product_id"`
	CatalogType string `json:"catalog_type"`
	SignedType  string `json:"signed_type"` // as Apple wrote it, e.g. "Consumable"
}
