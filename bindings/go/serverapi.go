package iapverify

/*
#include <stdlib.h>
#include <iapverify.h>
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// The App Store Server API, without I/O in the library: a Signer turns a call description into a
// ready *http.Request (with a fresh ES256 bearer token), the host sends it with its own client,
// and Verifier.InterpretHTTPResponse says what the answer is worth and what to do next.

// Signer holds the developer's App Store Connect key (a .p8 P-256 key) and makes bearer tokens
// and requests for the App Store Server API. It is immutable and safe for concurrent use.
type Signer struct {
	mu     sync.RWMutex // guards h against Close while a call is running
	h      *C.iapv_signer
	closed bool
}

// NewSigner builds a signer from a JSON config:
//
//	{"private_key_pem": "-----BEGIN PRIVATE KEY-----\n...", "key_id": "...",
//	 "issuer_id": "...", "bundle_id": "..."}
//
// A missing, unknown or unusable key (not an unencrypted EC P-256 key) matches ErrConfig.
// The private key never appears in an error.
func NewSigner(config []byte) (*Signer, error) {
	if abi := C.iapv_abi_version(); abi != ABIVersion {
		return nil, &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: "libiapverify ABI does not match this package"}
	}
	cfg := C.CBytes(config)
	defer C.free(cfg)
	var h *C.iapv_signer
	var e C.iapv_error
	if status := C.iapv_signer_new((*C.char)(cfg), C.size_t(len(config)), &h, &e); status != 0 {
		return nil, statusError(status, &e)
	}
	s := &Signer{h: h}
	runtime.SetFinalizer(s, func(s *Signer) { _ = s.Close() })
	return s, nil
}

// Close frees the signer. It waits for running calls; later calls return ErrInvalidArgument.
// Closing twice is fine. The error is always nil; it is there for io.Closer.
func (s *Signer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		C.iapv_signer_free(s.h)
		s.h, s.closed = nil, true
	}
	return nil
}

func invalid(msg string) error {
	return &Error{Code: -1, Name: "IAPV_E_INVALID_ARGUMENT", Message: msg}
}

func internal(msg string) error { return &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: msg} }

// takeResult copies the result's JSON and validity, then frees the result.
func takeResult(out *C.iapv_result) ([]byte, bool) {
	defer C.iapv_result_free(out)
	var n C.size_t
	text := C.GoBytes(unsafe.Pointer(C.iapv_result_json(out, &n)), C.int(n))
	return text, C.iapv_result_is_valid(out) == 1
}

// APIToken is a bearer token for the App Store Server API.
type APIToken struct {
	Token       string `json:"token"`         // the JWT, for "Authorization: Bearer <Token>"
	IssuedAtMs  int64  `json:"issued_at_ms"`  // whole seconds, in ms
	ExpiresAtMs int64  `json:"expires_at_ms"` // IssuedAtMs + 5 minutes
}

// ExpiresAt is ExpiresAtMs as a time.Time.
func (t APIToken) ExpiresAt() time.Time { return time.UnixMilli(t.ExpiresAtMs) }

// Token makes a bearer token issued at now, for hosts that build their own requests
// (NewRequest already puts a fresh one in each request).
func (s *Signer) Token(now time.Time) (APIToken, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return APIToken{}, invalid("the signer is closed")
	}
	var out *C.iapv_result
	var e C.iapv_error
	if status := C.iapv_api_token(s.h, C.int64_t(now.UnixMilli()), &out, &e); status != 0 {
		return APIToken{}, statusError(status, &e)
	}
	text, _ := takeResult(out)
	var t APIToken
	if err := json.Unmarshal(text, &t); err != nil || t.Token == "" {
		return APIToken{}, internal("token result JSON: " + string(text))
	}
	return t, nil
}

// apiRequest is the library's description of one HTTP request.
type apiRequest struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
	// Bodies that are not JSON (an image), base64 in the result; encoding/json decodes them.
	BodyBase64 []byte `json:"body_base64"`
}

// NewRequest builds the HTTP request for one App Store Server API call, with a bearer token
// issued at now. call describes it, e.g.
//
//	{"endpoint": "transaction_history", "environment": "Sandbox", "transaction_id": "...",
//	 "revision": "...", "query": {"sort": "DESCENDING"}}
//
// and may be JSON text ([]byte, json.RawMessage or string) or any value encoding/json marshals
// to such an object (a map or a struct with json tags). upload_image takes the PNG's bytes as
// "body_base64": a []byte in a map is marshalled to base64 by encoding/json. An unknown endpoint, a missing or bad
// parameter, or an id that could change the path ("a/b", "a?b", "..") matches ErrInvalidArgument.
// The request carries ctx, the method, URL, headers and body (with ContentLength and GetBody set,
// so the client can resend it); send it as it is.
func (s *Signer) NewRequest(ctx context.Context, call any, now time.Time) (*http.Request, error) {
	var callJSON []byte
	switch c := call.(type) {
	case []byte:
		callJSON = c
	case json.RawMessage:
		callJSON = c
	case string:
		callJSON = []byte(c)
	case nil:
		return nil, invalid("the call is nil; pass {\"endpoint\": ...}")
	default:
		var err error
		if callJSON, err = json.Marshal(c); err != nil {
			return nil, invalid("the call cannot be encoded as JSON: " + err.Error())
		}
	}
	text, err := s.request(callJSON, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	var r apiRequest
	if err := json.Unmarshal(text, &r); err != nil || r.Method == "" || r.URL == "" {
		return nil, internal("request result JSON: " + string(text))
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader([]byte(*r.Body)) // sets ContentLength and GetBody
	} else if r.BodyBase64 != nil {
		body = bytes.NewReader(r.BodyBase64)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, invalid("the request cannot be built: " + err.Error())
	}
	for name, value := range r.Headers {
		req.Header.Set(name, value)
	}
	return req, nil
}

func (s *Signer) request(callJSON []byte, nowMs int64) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, invalid("the signer is closed")
	}
	var ptr *C.char
	if len(callJSON) > 0 {
		ptr = (*C.char)(unsafe.Pointer(&callJSON[0])) // read during the call only (cgo rules)
	}
	var out *C.iapv_result
	var e C.iapv_error
	status := C.iapv_api_request(s.h, ptr, C.size_t(len(callJSON)), C.int64_t(nowMs), &out, &e)
	runtime.KeepAlive(callJSON)
	if status != 0 {
		return nil, statusError(status, &e)
	}
	text, _ := takeResult(out)
	return text, nil
}

// OfferSignature is what Sign made: Signature (V1, base64 DER) or JWS (V2), never both.
// Nonce is the request's UUID in lower case; TimestampMs the signing time (for V2, the iat
// second in milliseconds). Raw keeps the library's result document.
type OfferSignature struct {
	Kind        string `json:"kind"`
	KeyID       string `json:"key_id"`
	Nonce       string `json:"nonce"`
	TimestampMs int64  `json:"timestamp_ms"`
	Signature   string `json:"signature"` // promotional_offer_v1
	JWS         string `json:"jws"`       // promotional_offer_v2, introductory_offer_eligibility, advanced_commerce_request
	Body        string `json:"body"`      // realtime_response: the JSON body that answers Apple's realtime request
	Raw         []byte `json:"-"`
}

// Sign signs what an app asks its server for, at now (the V1 timestamp, the V2 iat):
//
//	{"kind": "promotional_offer_v1" | "promotional_offer_v2" | "introductory_offer_eligibility" |
//	 "advanced_commerce_request" | "realtime_response", "nonce": "<a UUID made for this request>", ...the kind's fields}
//
// request may be JSON text ([]byte, json.RawMessage or string) or any value encoding/json
// marshals to such an object. A missing, bad or foreign field matches ErrInvalidArgument and the
// message names it.
func (s *Signer) Sign(request any, now time.Time) (OfferSignature, error) {
	var reqJSON []byte
	switch c := request.(type) {
	case []byte:
		reqJSON = c
	case json.RawMessage:
		reqJSON = c
	case string:
		reqJSON = []byte(c)
	case nil:
		return OfferSignature{}, invalid("the request is nil; pass {\"kind\": ..., \"nonce\": ...}")
	default:
		var err error
		if reqJSON, err = json.Marshal(c); err != nil {
			return OfferSignature{}, invalid("the request cannot be encoded as JSON: " + err.Error())
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return OfferSignature{}, invalid("the signer is closed")
	}
	var ptr *C.char
	if len(reqJSON) > 0 {
		ptr = (*C.char)(unsafe.Pointer(&reqJSON[0])) // read during the call only (cgo rules)
	}
	var out *C.iapv_result
	var e C.iapv_error
	status := C.iapv_sign(s.h, ptr, C.size_t(len(reqJSON)), C.int64_t(now.UnixMilli()), &out, &e)
	runtime.KeepAlive(reqJSON)
	if status != 0 {
		return OfferSignature{}, statusError(status, &e)
	}
	text, _ := takeResult(out)
	var sig OfferSignature
	if err := json.Unmarshal(text, &sig); err != nil || sig.Kind == "" {
		return OfferSignature{}, internal("signature result JSON: " + string(text))
	}
	sig.Raw = text
	return sig, nil
}

// APIResponseOptions say which call an App Store Server API answer belongs to and how it came.
type APIResponseOptions struct {
	Endpoint    string            // the call's endpoint, e.g. "transaction_history" (required)
	Environment ServerEnvironment // the host that answered: EnvironmentProduction (when empty) or EnvironmentSandbox
	HTTPStatus  int               // the HTTP status (required)
	RetryAfter  string            // the Retry-After header's text; empty when there was none
	Attempt     int               // 1 for the first try; 0 means 1
	// OCSPResponses are DER OCSP responses for the certificates that signed the answer's items
	// (docs/revocation.md); each signed item's leaf is checked with them.
	OCSPResponses [][]byte
	// DeliveredTransactionIDs, Orders and RenewalInfo are the delivery options, as in Options
	// (Extra may carry them instead, by their JSON names).
	DeliveredTransactionIDs []string
	Orders                  []Order
	RenewalInfo             []interface{}
	// Extra holds options by their JSON names (a newer library's). It may not repeat the keys of
	// the fields above.
	Extra map[string]any
}

func (o APIResponseOptions) marshal() ([]byte, error) {
	m := make(map[string]any, len(o.Extra)+5)
	for k, v := range o.Extra {
		switch k {
		case "endpoint", "environment", "http_status", "retry_after", "attempt", "ocsp_responses":
			return nil, invalid("APIResponseOptions.Extra[\"" + k + "\"]: set the field of APIResponseOptions instead")
		case "delivered_transaction_ids", "orders", "renewal_info":
			if (k == "delivered_transaction_ids" && len(o.DeliveredTransactionIDs) > 0) || (k == "orders" && len(o.Orders) > 0) ||
				(k == "renewal_info" && len(o.RenewalInfo) > 0) {
				return nil, invalid("APIResponseOptions.Extra[\"" + k + "\"] repeats the field of APIResponseOptions: set one")
			}
		}
		m[k] = v
	}
	if o.Endpoint != "" {
		m["endpoint"] = o.Endpoint
	}
	if o.Environment != "" {
		m["environment"] = o.Environment
	}
	if o.HTTPStatus != 0 {
		m["http_status"] = o.HTTPStatus
	}
	if o.RetryAfter != "" {
		m["retry_after"] = o.RetryAfter
	}
	if o.Attempt != 0 {
		m["attempt"] = o.Attempt
	}
	if len(o.OCSPResponses) > 0 {
		m["ocsp_responses"] = o.OCSPResponses // [][]byte: base64 strings in JSON
	}
	if len(o.DeliveredTransactionIDs) > 0 {
		m["delivered_transaction_ids"] = o.DeliveredTransactionIDs
	}
	if len(o.Orders) > 0 {
		m["orders"] = o.Orders
	}
	if len(o.RenewalInfo) > 0 {
		m["renewal_info"] = o.RenewalInfo
	}
	text, err := json.Marshal(m)
	if err != nil {
		return nil, invalid("the options cannot be encoded as JSON: " + err.Error())
	}
	return text, nil
}

// APIResult is what an App Store Server API answer is worth. Act on Action: accept (use the
// verified items), next_page (use them, then call again with NextPage), retry_later (after
// RetryAfterMs), retry_sandbox, give_up, fix_configuration or reject. Raw keeps the library's
// full result document.
type APIResult struct {
	Verdict              Verdict              `json:"verdict"`
	Reason               string               `json:"reason"`
	Valid                bool                 `json:"-"`
	Endpoint             string               `json:"endpoint"`
	Environment          ServerEnvironment    `json:"environment"`
	Deprecations         []string             `json:"deprecations"` // old spellings the options used, each with what to write instead
	HTTPStatus           int                  `json:"http_status"`
	Action               Action               `json:"action"`
	RetryAfterMs         *int64               `json:"retry_after_ms"`
	ErrorCode            *int64               `json:"error_code"`    // Apple's errorCode, if the body had one
	ErrorMessage         *string              `json:"error_message"` // Apple's errorMessage
	Trusted              bool                 `json:"trusted"`
	NextPage             *APINextPage         `json:"next_page"`
	SignedItems          int                  `json:"signed_items"`
	OrderStatus          *int64               `json:"order_status"` // order_lookup: 0 valid, 1 invalid
	Transactions         []Transaction        `json:"transactions"`
	RenewalInfo          []RenewalInfo        `json:"renewal_info"`
	AppTransaction       json.RawMessage      `json:"app_transaction"`
	Notifications        []APINotification    `json:"notifications"`
	SubscriptionStatuses []SubscriptionStatus `json:"subscription_statuses"`
	StatusDisagreements  []SubscriptionStatus `json:"status_disagreements"`
	Unsigned             json.RawMessage      `json:"unsigned"` // the answer's unsigned top-level fields
	Entitlements         []Entitlement        `json:"entitlements"`
	Purchases            []Purchase           `json:"purchases"`
	Delivery             Delivery             `json:"delivery"`
	UnknownProducts      []string             `json:"unknown_products"`
	CatalogConflicts     []CatalogConflict    `json:"catalog_conflicts"`
	IntroEligible        map[string]bool      `json:"intro_eligible"`
	// Revocation is the revocation facts of the first signed item (or of the refused one); nil until one verified.
	Revocation *Revocation `json:"revocation"`
	Raw        []byte      `json:"-"`
}

// RetryAfter is RetryAfterMs as a duration; 0 when the result has none.
func (r *APIResult) RetryAfter() time.Duration {
	if r.RetryAfterMs == nil {
		return 0
	}
	return time.Duration(*r.RetryAfterMs) * time.Millisecond
}

// Entitlement returns the entitlement with this id, or nil.
func (r *APIResult) Entitlement(id string) *Entitlement {
	for i := range r.Entitlements {
		if r.Entitlements[i].ID == id {
			return &r.Entitlements[i]
		}
	}
	return nil
}

// APINextPage is the paging token to put in the next call: one of the two is set.
type APINextPage struct {
	Revision        string `json:"revision,omitempty"`         // as call "revision"
	PaginationToken string `json:"pagination_token,omitempty"` // as call "pagination_token"
}

// Transaction is one transaction, in the library's names: every in_app item (a receipt's and a
// /verifyReceipt response's alike, see Result.InApp), JWS and App Store Server API transactions.
// The fields after SubscriptionGroupIdentifier come from StoreKit 2 and are nil when Apple did not
// send them; ProductType and UnknownAttributes only a receipt's records carry. TransactionID and
// ProductID are empty only in a receipt record that lacks them.
// Prices are in milliunits of Currency (9990 is 9.99); RevocationPercentage in milliunits of a
// percent (83333 is 83.333 %).
type Transaction struct {
	TransactionID               string  `json:"transaction_id"`
	OriginalTransactionID       *string `json:"original_transaction_id"`
	ProductID                   string  `json:"product_id"`
	Quantity                    int64   `json:"quantity"`
	PurchaseDateMs              *int64  `json:"purchase_date_ms"`
	OriginalPurchaseDateMs      *int64  `json:"original_purchase_date_ms"`
	ExpiresDateMs               *int64  `json:"expires_date_ms"`
	CancellationDateMs          *int64  `json:"cancellation_date_ms"`
	CancellationReason          *string `json:"cancellation_reason"` // "0" or "1", as Apple sends it
	WebOrderLineItemID          *string `json:"web_order_line_item_id"`
	IsTrialPeriod               *bool   `json:"is_trial_period"`
	IsInIntroOfferPeriod        *bool   `json:"is_in_intro_offer_period"`
	IsUpgraded                  *bool   `json:"is_upgraded"`
	PromotionalOfferID          *string `json:"promotional_offer_id"`
	InAppOwnershipType          *string `json:"in_app_ownership_type"`
	SubscriptionGroupIdentifier *string `json:"subscription_group_identifier"`

	SignedDateMs         *int64                 `json:"signed_date_ms,omitempty"`
	RevocationType       *string                `json:"revocation_type,omitempty"`       // REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE, ASSIGNMENT_REVOKE
	RevocationPercentage *int64                 `json:"revocation_percentage,omitempty"` // milliunits of a percent
	OfferType            *int64                 `json:"offer_type,omitempty"`
	OfferDiscountType    *string                `json:"offer_discount_type,omitempty"`
	OfferPeriod          *string                `json:"offer_period,omitempty"` // ISO 8601 duration, e.g. "P1M"
	Price                *int64                 `json:"price,omitempty"`        // milliunits of Currency
	Currency             *string                `json:"currency,omitempty"`
	Storefront           *string                `json:"storefront,omitempty"`
	StorefrontID         *string                `json:"storefront_id,omitempty"`
	AppAccountToken      *string                `json:"app_account_token,omitempty"`
	AppTransactionID     *string                `json:"app_transaction_id,omitempty"`
	TransactionReason    *string                `json:"transaction_reason,omitempty"` // PURCHASE or RENEWAL
	Type                 *string                `json:"type,omitempty"`               // Apple's product type text
	Environment          *string                `json:"environment,omitempty"`
	BundleID             *string                `json:"bundle_id,omitempty"` // StoreKit 2: the app the transaction is for
	BillingPlanType      *string                `json:"billing_plan_type,omitempty"`
	Commitment           *TransactionCommitment `json:"commitment,omitempty"`

	ProductType       *int64             `json:"product_type,omitempty"`       // receipts: attribute 1707 (undocumented by Apple)
	UnknownAttributes []UnknownAttribute `json:"unknown_attributes,omitempty"` // receipts: the attributes the library does not name

	// AdvancedCommerce is an Advanced Commerce API purchase's items and taxes (docs/results.md), as the library wrote them.
	AdvancedCommerce json.RawMessage `json:"advanced_commerce,omitempty"`
}

// UnknownAttribute is a receipt attribute the library does not name, kept as it was.
type UnknownAttribute struct {
	Type        int64  `json:"type"`
	Version     int64  `json:"version"`
	ValueBase64 string `json:"value_base64"`
}

// TransactionCommitment is the commitment part of a transaction (a billing plan with a term).
type TransactionCommitment struct {
	BillingPeriodNumber     *int64 `json:"billing_period_number,omitempty"`
	TotalBillingPeriods     *int64 `json:"total_billing_periods,omitempty"`
	CommitmentExpiresDateMs *int64 `json:"commitment_expires_date_ms,omitempty"`
	CommitmentPrice         *int64 `json:"commitment_price,omitempty"` // milliunits
}

// RenewalInfo is one verified subscription renewal info, in the library's names. The fields after
// PriceIncreaseStatus come from StoreKit 2 and are nil when Apple did not send them.
type RenewalInfo struct {
	OriginalTransactionID    string  `json:"original_transaction_id"`
	ProductID                *string `json:"product_id"`
	AutoRenewProductID       *string `json:"auto_renew_product_id"`
	AutoRenewStatus          *bool   `json:"auto_renew_status"`
	ExpirationIntent         *int64  `json:"expiration_intent"`
	IsInBillingRetryPeriod   *bool   `json:"is_in_billing_retry_period"`
	GracePeriodExpiresDateMs *int64  `json:"grace_period_expires_date_ms"`
	PriceConsentStatus       *string `json:"price_consent_status"`            // /verifyReceipt's "0" or "1"
	PriceIncreaseStatus      *int64  `json:"price_increase_status,omitempty"` // StoreKit 2: 0 pending, 1 accepted

	SignedDateMs                  *int64             `json:"signed_date_ms,omitempty"`
	RenewalPrice                  *int64             `json:"renewal_price,omitempty"` // milliunits of Currency
	Currency                      *string            `json:"currency,omitempty"`
	OfferType                     *int64             `json:"offer_type,omitempty"`
	OfferIdentifier               *string            `json:"offer_identifier,omitempty"`
	OfferDiscountType             *string            `json:"offer_discount_type,omitempty"`
	OfferPeriod                   *string            `json:"offer_period,omitempty"`
	RenewalDateMs                 *int64             `json:"renewal_date_ms,omitempty"`
	RecentSubscriptionStartDateMs *int64             `json:"recent_subscription_start_date_ms,omitempty"`
	EligibleWinBackOfferIDs       []string           `json:"eligible_win_back_offer_ids,omitempty"`
	AppAccountToken               *string            `json:"app_account_token,omitempty"`
	AppTransactionID              *string            `json:"app_transaction_id,omitempty"`
	Environment                   *string            `json:"environment,omitempty"`
	RenewalBillingPlanType        *string            `json:"renewal_billing_plan_type,omitempty"`
	Commitment                    *RenewalCommitment `json:"commitment,omitempty"`
	// AdvancedCommerce is an Advanced Commerce API subscription's items (docs/results.md), as the library wrote them.
	AdvancedCommerce json.RawMessage `json:"advanced_commerce,omitempty"`
}

// RenewalCommitment is the commitment part of a renewal info.
type RenewalCommitment struct {
	AutoRenewProductID     *string `json:"auto_renew_product_id,omitempty"`
	AutoRenewStatus        *bool   `json:"auto_renew_status,omitempty"`
	RenewalBillingPlanType *string `json:"renewal_billing_plan_type,omitempty"`
	RenewalDateMs          *int64  `json:"renewal_date_ms,omitempty"`
	RenewalPrice           *int64  `json:"renewal_price,omitempty"` // milliunits
}

// APINotification summarises one verified notification (notification history, test status).
type APINotification struct {
	NotificationType NotificationType `json:"notification_type"`
	Subtype          *string          `json:"subtype"`
	Effect           Effect           `json:"effect"` // what the type and subtype do to access; "unknown" when new
	NotificationUUID *string          `json:"notification_uuid"`
	SignedDateMs     *int64           `json:"signed_date_ms"`
}

// SubscriptionStatus is Apple's status (1-5) for one subscription beside the library's own state.
type SubscriptionStatus struct {
	SubscriptionGroupIdentifier *string `json:"subscription_group_identifier"`
	OriginalTransactionID       string  `json:"original_transaction_id"`
	AppleStatus                 int64   `json:"apple_status"`
	AppleState                  *string `json:"apple_state"`
	EngineState                 *string `json:"engine_state"`
	Agrees                      bool    `json:"agrees"`
}

// InterpretAPIResponse reads an App Store Server API answer: the body and how it came (opts).
// Every signed item in a 2xx body must verify with this verifier's rules, or none counts.
// An error means the call could not answer (bad options, body over max_input_bytes).
func (v *Verifier) InterpretAPIResponse(body []byte, opts APIResponseOptions, now time.Time) (*APIResult, error) {
	optJSON, err := opts.marshal()
	if err != nil {
		return nil, err
	}
	text, valid, err := v.interpretAPI(body, optJSON, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	r := &APIResult{Raw: text}
	if err := json.Unmarshal(text, r); err != nil {
		return nil, internal("result JSON: " + err.Error())
	}
	r.Valid = valid
	return r, nil
}

func (v *Verifier) interpretAPI(body, optJSON []byte, nowMs int64) ([]byte, bool, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.closed {
		return nil, false, invalid("the verifier is closed")
	}
	var inPtr *C.uint8_t
	if len(body) > 0 {
		inPtr = (*C.uint8_t)(unsafe.Pointer(&body[0])) // read during the call only (cgo rules)
	}
	var optPtr *C.char
	if len(optJSON) > 0 {
		optPtr = (*C.char)(unsafe.Pointer(&optJSON[0]))
	}
	var out *C.iapv_result
	var e C.iapv_error
	status := C.iapv_interpret_api_response(v.h, inPtr, C.size_t(len(body)), optPtr, C.size_t(len(optJSON)),
		C.int64_t(nowMs), &out, &e)
	runtime.KeepAlive(body)
	runtime.KeepAlive(optJSON)
	if status != 0 {
		return nil, false, statusError(status, &e)
	}
	text, valid := takeResult(out)
	return text, valid, nil
}

// MaxAPIResponseBytes bounds the body InterpretHTTPResponse reads. The verifier's own
// max_input_bytes (3 MiB by default) still applies to what it reads.
var MaxAPIResponseBytes int64 = 32 << 20

// InterpretHTTPResponse reads resp (its status, its Retry-After header, and its body, at most
// MaxAPIResponseBytes, which it then closes) and interprets it as the answer of the call to
// endpoint on environment (EnvironmentProduction or EnvironmentSandbox); attempt counts from 1. A body that cannot
// be read returns that I/O error: try the call again later.
func (v *Verifier) InterpretHTTPResponse(resp *http.Response, endpoint string, environment ServerEnvironment, attempt int,
	now time.Time) (*APIResult, error) {
	if resp == nil {
		return nil, invalid("the response is nil")
	}
	var body []byte
	if resp.Body != nil {
		defer resp.Body.Close()
		var err error
		body, err = io.ReadAll(io.LimitReader(resp.Body, MaxAPIResponseBytes+1))
		if err != nil {
			return nil, err
		}
		if int64(len(body)) > MaxAPIResponseBytes {
			return nil, &Error{Code: -3, Name: "IAPV_E_TOO_LARGE",
				Message: "the API answer is over " + strconv.FormatInt(MaxAPIResponseBytes, 10) + " bytes (MaxAPIResponseBytes)"}
		}
	}
	return v.InterpretAPIResponse(body, APIResponseOptions{
		Endpoint:    endpoint,
		Environment: environment,
		HTTPStatus:  resp.StatusCode,
		RetryAfter:  resp.Header.Get("Retry-After"),
		Attempt:     attempt,
	}, now)
}

// TransactionReceipt is what ReadTransactionReceipt read from an iOS 6 style transaction
// receipt. Nothing in it is verified: TransactionID is only a name to look up.
type TransactionReceipt struct {
	Verdict       string            `json:"verdict"` // "unverified" when the id was read, else "malformed"
	Reason        string            `json:"reason"`
	TransactionID string            `json:"transaction_id"`
	Environment   string            `json:"environment"` // "Sandbox"; empty in production receipts
	PurchaseInfo  map[string]string `json:"purchase_info"`
	Raw           []byte            `json:"-"`
}

// ReadTransactionReceipt reads the transaction id out of an iOS 6 style transaction receipt (the
// base64 property list SKPaymentTransaction.transactionReceipt gave) WITHOUT verifying it: its
// signature cannot be checked here. Verdict is "unverified" when the id was read, else
// "malformed" with the reason. Look the id up with the App Store Server API (transaction_info)
// before granting anything.
func ReadTransactionReceipt(receipt []byte) (TransactionReceipt, error) {
	var ptr *C.uint8_t
	if len(receipt) > 0 {
		ptr = (*C.uint8_t)(unsafe.Pointer(&receipt[0])) // read during the call only (cgo rules)
	}
	var out *C.iapv_result
	var e C.iapv_error
	status := C.iapv_read_transaction_receipt(ptr, C.size_t(len(receipt)), &out, &e)
	runtime.KeepAlive(receipt)
	if status != 0 {
		return TransactionReceipt{}, statusError(status, &e)
	}
	text, _ := takeResult(out)
	var r TransactionReceipt
	if err := json.Unmarshal(text, &r); err != nil || r.Verdict == "" {
		return TransactionReceipt{}, internal("transaction receipt result JSON: " + string(text))
	}
	r.Raw = text
	return r, nil
}
