package iapverify

import (
	"strings"
	"testing"
)

// The JWS options a Go server needs (docs/storekit2.md, docs/options.md) and the typed records of
// a JWS result. Fixed clocks: the fake tokens are signed at signedMs.

func TestJWSKindOption(t *testing.T) {
	v := newTestVerifier(t)
	renewal := map[string]any{"originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
		"autoRenewStatus": 1, "signedDate": signedMs, "environment": "Production", "renewalPrice": 12990, "currency": "EUR"}
	token := []byte(fakeAppleJWS(t, renewal))

	// A renewal info sent where a transaction is expected (an app's jwsRepresentation) is refused.
	r, err := v.VerifyJWS(token, nowMs, &Options{Kind: KindTransaction})
	if err != nil {
		t.Fatal(err)
	}
	if r.Valid || r.Verdict != VerdictMalformed || r.Kind != KindRenewalInfo {
		t.Fatalf("a renewal info as a transaction: %s", r.JSON)
	}
	if tr, err := r.JWSTransaction(); tr != nil || err != nil {
		t.Fatalf("a renewal info has a transaction: %+v %v", tr, err)
	}

	// Named as what it is, it is valid, and reads as a typed RenewalInfo.
	r, err = v.VerifyJWS(token, nowMs, &Options{Kind: KindRenewalInfo})
	if err != nil {
		t.Fatal(err)
	}
	ri, err := r.JWSRenewalInfo()
	if err != nil || !r.Valid || ri == nil {
		t.Fatalf("renewal info: %+v %v %s", ri, err, r.JSON)
	}
	if ri.OriginalTransactionID != "1000" || *ri.ProductID != "pro.monthly" || *ri.AutoRenewStatus != true ||
		*ri.RenewalPrice != 12990 || *ri.Currency != "EUR" || *ri.SignedDateMs != signedMs {
		t.Fatalf("renewal info %+v", ri)
	}

	// A transaction with Kind transaction: valid, typed.
	r, err = v.VerifyJWS([]byte(fakeAppleJWS(t, fakeTransaction("1001", "Production"))), nowMs, &Options{Kind: KindTransaction})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.JWSTransaction()
	if err != nil || !r.Valid || r.Kind != KindTransaction || tr == nil {
		t.Fatalf("transaction: %+v %v %s", tr, err, r.JSON)
	}
	if !r.Trusted || len(r.Chain) != 3 || r.Chain[0].SHA256 == "" || r.Chain[0].NotAfterMs <= r.Chain[0].NotBeforeMs ||
		r.BundleID == nil || *r.BundleID != "com.example.fake" || r.SignedDateMs == nil || *r.SignedDateMs != signedMs ||
		r.ValidatedAtMs == nil || r.ProductType == nil || *r.ProductType != "Auto-Renewable Subscription" ||
		!strings.Contains(string(r.Payload), `"transactionId":"1001"`) || r.Checks != nil {
		t.Fatalf("the JWS result's own members: %s", r.JSON)
	}
	if tr.TransactionID != "1001" || tr.ProductID != "pro.monthly" || *tr.OriginalTransactionID != "1000" ||
		*tr.SignedDateMs != signedMs || *tr.BundleID != "com.example.fake" || *tr.Environment != "Production" {
		t.Fatalf("transaction %+v", tr)
	}
	if ri, err := r.JWSRenewalInfo(); ri != nil || err != nil {
		t.Fatalf("a transaction has a renewal info: %+v %v", ri, err)
	}
}

func TestJWSRealtimeRequestOptions(t *testing.T) {
	v := newTestVerifier(t) // app_apple_id 1234567890
	const requestID = "6a0b7d2c-4f7e-4a83-9d59-1f0f3c2a5b10"
	token := []byte(fakeAppleJWS(t, map[string]any{"appAppleId": 1234567890, "environment": "Production",
		"originalTransactionId": "1000", "productId": "pro.monthly", "userLocale": "en-US",
		"requestIdentifier": requestID, "signedDate": signedMs}))
	action := func(now int64, opts *Options) Action {
		t.Helper()
		r, err := v.VerifyJWS(token, now, opts)
		if err != nil {
			t.Fatal(err)
		}
		q, err := r.JWSRealtimeRequest()
		if err != nil || q == nil || !r.Valid || r.Kind != KindRealtimeRequest {
			t.Fatalf("realtime request: %+v %v %s", q, err, r.JSON)
		}
		if q.RequestIdentifier != requestID || q.OriginalTransactionID != "1000" || q.UserLocale != "en-US" ||
			q.AppAppleID == nil || *q.AppAppleID != 1234567890 || q.SignedDateMs != signedMs {
			t.Fatalf("realtime request %+v", q)
		}
		return q.Action
	}
	if a := action(nowMs, &Options{Kind: KindRealtimeRequest}); a != ActionRespond {
		t.Fatalf("fresh: %s", a)
	}
	if a := action(nowMs, &Options{SeenRequestIdentifiers: []string{requestID}}); a != ActionIgnoreDuplicate {
		t.Fatalf("seen: %s", a)
	}
	later := signedMs + 301_000
	if a := action(later, nil); a != ActionIgnoreStale {
		t.Fatalf("301 s old, default max age: %s", a)
	}
	maxAge := int64(600_000)
	if a := action(later, &Options{MaxAgeMs: &maxAge}); a != ActionRespond {
		t.Fatalf("301 s old, MaxAgeMs 600000: %s", a)
	}
	zero := int64(0)
	if a := action(signedMs+1, &Options{MaxAgeMs: &zero}); a != ActionIgnoreStale {
		t.Fatalf("1 ms old, MaxAgeMs 0: %s", a)
	}
}
