// Package iapverify verifies App Store receipts, interprets /verifyReceipt responses and
// computes entitlements through libiapverify (cgo, found with pkg-config).
//
// A Verifier is immutable and safe for concurrent use by many goroutines. A rejected receipt
// is a Result with Valid == false; an error means the call could not answer (bad config,
// bad options, input too large) and matches ErrConfig, ErrInvalidArgument... with errors.Is.
package iapverify

/*
#cgo pkg-config: iapverify
#include <stdlib.h>
#include <iapverify.h>
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"unsafe"
)

// ABIVersion is the C ABI this package was written for; NewVerifier checks the library's.
const ABIVersion = 1

// Error is a non-OK status from the library.
type Error struct {
	Code    int32  // the iapv_status, e.g. -2
	Name    string // e.g. "IAPV_E_CONFIG"
	Message string // what to fix
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

// Is makes errors.Is(err, ErrConfig) match any error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinel errors, one per status, for errors.Is.
var (
	ErrInvalidArgument = &Error{Code: -1, Name: "IAPV_E_INVALID_ARGUMENT"}
	ErrConfig          = &Error{Code: -2, Name: "IAPV_E_CONFIG"}
	ErrTooLarge        = &Error{Code: -3, Name: "IAPV_E_TOO_LARGE"}
	ErrNoMemory        = &Error{Code: -4, Name: "IAPV_E_NO_MEMORY"}
	ErrInternal        = &Error{Code: -5, Name: "IAPV_E_INTERNAL"}
)

func statusError(status C.iapv_status, e *C.iapv_error) error {
	return &Error{Code: int32(status), Name: C.GoString(C.iapv_status_name(status)), Message: C.GoString(&e.message[0])}
}

// Verifier holds a libiapverify verifier. Build one per config and share it.
type Verifier struct {
	mu     sync.RWMutex // guards h against Close while a call is running
	h      *C.iapv_verifier
	closed bool
}

// NewVerifier builds a verifier from a JSON config (see the project README).
func NewVerifier(config []byte) (*Verifier, error) {
	if abi := C.iapv_abi_version(); abi != ABIVersion {
		return nil, &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: "libiapverify ABI does not match this package"}
	}
	cfg := C.CBytes(config)
	defer C.free(cfg)
	var h *C.iapv_verifier
	var e C.iapv_error
	if status := C.iapv_verifier_new((*C.char)(cfg), C.size_t(len(config)), &h, &e); status != 0 {
		return nil, statusError(status, &e)
	}
	v := &Verifier{h: h}
	runtime.SetFinalizer(v, (*Verifier).Close)
	return v, nil
}

// Close frees the verifier. It waits for running calls; later calls return ErrInvalidArgument.
func (v *Verifier) Close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.closed {
		C.iapv_verifier_free(v.h)
		v.h, v.closed = nil, true
	}
}

// Options are the per-call options; the zero value means none. Only the fields set are sent, and
// each call reads its own (docs/options.md): DeviceID is for VerifyReceipt; Environment and
// Attempt for InterpretResponse; Kind, LastSignedDateMs, SeenNotificationUUIDs,
// SeenRequestIdentifiers and MaxAgeMs for VerifyJWS;
// OCSPResponses for VerifyReceipt and VerifyJWS; the delivery fields for every call. A field set
// for a call that does not read it is refused with ErrInvalidArgument ("does not apply to ...").
type Options struct {
	DeviceID string `json:"device_id,omitempty"` // VerifyReceipt
	// Environment is the /verifyReceipt host that answered (InterpretResponse); empty means
	// EnvironmentProduction.
	Environment ServerEnvironment `json:"environment,omitempty"`
	// Deprecated: Endpoint is the old name of Environment for InterpretResponse ("production" or
	// "sandbox", any case). It still works until the next release, with a note in
	// Result.Deprecations; set Environment instead.
	Endpoint string `json:"endpoint,omitempty"`
	Attempt  int    `json:"attempt,omitempty"` // InterpretResponse: 1 for the first try
	// HTTPStatus (InterpretResponse) is the HTTP status when it was not 200, or 0 when Apple did
	// not answer at all (refused, reset, timed out): the body is then not read, and the result is
	// retry_later or give_up like a temporary status. A pointer, because 0 is a value; nil is a 200.
	HTTPStatus              *int          `json:"http_status,omitempty"`
	DeliveredTransactionIDs []string      `json:"delivered_transaction_ids,omitempty"`
	Orders                  []Order       `json:"orders,omitempty"`
	RenewalInfo             []interface{} `json:"renewal_info,omitempty"`
	LastSignedDateMs        int64         `json:"last_signed_date_ms,omitempty"`     // JWS notifications
	SeenNotificationUUIDs   []string      `json:"seen_notification_uuids,omitempty"` // JWS notifications
	// Kind (VerifyJWS) is the kind of token the caller expects: KindTransaction for an app's
	// jwsRepresentation, KindRenewalInfo, KindAppTransaction, KindNotification or
	// KindRealtimeRequest. A token of another kind is malformed (docs/storekit2.md). Empty: any.
	Kind JWSKind `json:"kind,omitempty"`
	// SeenRequestIdentifiers (VerifyJWS) are the request_identifiers of the realtime requests
	// already answered: one of them again is ignore_duplicate.
	SeenRequestIdentifiers []string `json:"seen_request_identifiers,omitempty"`
	// MaxAgeMs (VerifyJWS) is how old a realtime request may be before it is a replay
	// (ignore_stale). A pointer, because 0 is a value; nil is the library's default (300000).
	MaxAgeMs *int64 `json:"max_age_ms,omitempty"`
	// OCSPResponses are DER OCSP responses for the signing certificate, as its responder answered
	// Revocation.Request (encoding/json sends them as base64). See docs/revocation.md.
	OCSPResponses [][]byte `json:"ocsp_responses,omitempty"`
}

// Order is a pending order the delivery plan may match to a purchase.
type Order struct {
	OrderID   string `json:"order_id"`
	ProductID string `json:"product_id"`
	CreatedMs int64  `json:"created_ms"`
}

type callFn func(v *C.iapv_verifier, in *C.uint8_t, n C.size_t, opts *C.char, optsLen C.size_t, now C.int64_t,
	out **C.iapv_result, e *C.iapv_error) C.iapv_status

func (v *Verifier) call(fn callFn, input []byte, nowMs int64, opts *Options) (*Result, error) {
	var optJSON []byte
	if opts != nil {
		var err error
		if optJSON, err = json.Marshal(opts); err != nil {
			return nil, &Error{Code: -1, Name: "IAPV_E_INVALID_ARGUMENT", Message: err.Error()}
		}
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.closed {
		return nil, &Error{Code: -1, Name: "IAPV_E_INVALID_ARGUMENT", Message: "the verifier is closed"}
	}
	var inPtr *C.uint8_t
	if len(input) > 0 {
		inPtr = (*C.uint8_t)(unsafe.Pointer(&input[0])) // read during the call only (cgo rules)
	}
	var optPtr *C.char
	if len(optJSON) > 0 {
		optPtr = (*C.char)(unsafe.Pointer(&optJSON[0]))
	}
	var out *C.iapv_result
	var e C.iapv_error
	status := fn(v.h, inPtr, C.size_t(len(input)), optPtr, C.size_t(len(optJSON)), C.int64_t(nowMs), &out, &e)
	runtime.KeepAlive(input)
	runtime.KeepAlive(optJSON)
	if status != 0 {
		return nil, statusError(status, &e)
	}
	defer C.iapv_result_free(out)
	var n C.size_t
	text := C.GoBytes(unsafe.Pointer(C.iapv_result_json(out, &n)), C.int(n))
	r := &Result{JSON: text}
	if err := json.Unmarshal(text, r); err != nil {
		return nil, &Error{Code: -5, Name: "IAPV_E_INTERNAL", Message: "result JSON: " + err.Error()}
	}
	r.Valid = C.iapv_result_is_valid(out) == 1
	if r.Revocation == nil && len(r.Receipt) > 0 {
		if err := r.receiptRevocation(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// VerifyReceipt verifies a receipt (DER, or base64 text) at nowMs (Unix milliseconds).
func (v *Verifier) VerifyReceipt(receipt []byte, nowMs int64, opts *Options) (*Result, error) {
	return v.call(func(h *C.iapv_verifier, in *C.uint8_t, n C.size_t, o *C.char, on C.size_t, now C.int64_t,
		out **C.iapv_result, e *C.iapv_error) C.iapv_status {
		return C.iapv_verify_receipt(h, in, n, o, on, now, out, e)
	}, receipt, nowMs, opts)
}

// InterpretResponse reads a /verifyReceipt body; set Options.Environment (the host that
// answered) and Options.Attempt.
func (v *Verifier) InterpretResponse(body []byte, nowMs int64, opts *Options) (*Result, error) {
	return v.call(func(h *C.iapv_verifier, in *C.uint8_t, n C.size_t, o *C.char, on C.size_t, now C.int64_t,
		out **C.iapv_result, e *C.iapv_error) C.iapv_status {
		return C.iapv_interpret_response(h, in, n, o, on, now, out, e)
	}, body, nowMs, opts)
}

// ComputeEntitlements works from {"transactions": [...], "renewal_info": [...]}.
func (v *Verifier) ComputeEntitlements(input []byte, nowMs int64, opts *Options) (*Result, error) {
	return v.call(func(h *C.iapv_verifier, in *C.uint8_t, n C.size_t, o *C.char, on C.size_t, now C.int64_t,
		out **C.iapv_result, e *C.iapv_error) C.iapv_status {
		return C.iapv_compute_entitlements(h, in, n, o, on, now, out, e)
	}, input, nowMs, opts)
}

// VerifyJWS verifies a StoreKit 2 compact JWS (transaction, renewal info or notification).
func (v *Verifier) VerifyJWS(token []byte, nowMs int64, opts *Options) (*Result, error) {
	return v.call(func(h *C.iapv_verifier, in *C.uint8_t, n C.size_t, o *C.char, on C.size_t, now C.int64_t,
		out **C.iapv_result, e *C.iapv_error) C.iapv_status {
		return C.iapv_verify_jws(h, in, n, o, on, now, out, e)
	}, token, nowMs, opts)
}

// Version is the library's version string.
func Version() string { return C.GoString(C.iapv_version_string()) }
