package iapverify

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Offer signatures checked with crypto/ecdsa and developer.pub.pem (not the library), and the
// StoreKit 2 signals in the Go structs. Fixed clocks and nonces.

const (
	signNowMs = int64(1_700_000_000_123)
	signNonce = "0F6E6A3C-1C2B-4D7A-9E8F-123456789ABC"
)

var signNow = time.UnixMilli(signNowMs)

func TestSignPromotionalOfferV1(t *testing.T) {
	s := newTestSigner(t, "")
	pub := developerKey(t)
	for _, account := range []string{"", "6A4F0D2B-3C1E-4F5A-8B7C-9D0E1F2A3B4C"} {
		sig, err := s.Sign(map[string]any{"kind": "promotional_offer_v1", "nonce": signNonce, "product_id": "pro.monthly",
			"offer_identifier": "WINBACK1", "app_account_token": account}, signNow)
		if err != nil {
			t.Fatal(err)
		}
		if sig.Kind != "promotional_offer_v1" || sig.KeyID != "FAKEKEY123" || sig.Nonce != strings.ToLower(signNonce) ||
			sig.TimestampMs != signNowMs || sig.JWS != "" || sig.Signature == "" {
			t.Fatalf("result %+v", sig)
		}
		der, err := base64.StdEncoding.DecodeString(sig.Signature)
		if err != nil {
			t.Fatal(err)
		}
		message := strings.Join([]string{"com.example.fake", "FAKEKEY123", "pro.monthly", "WINBACK1",
			strings.ToLower(account), strings.ToLower(signNonce), strconv.FormatInt(signNowMs, 10)}, "\u2063")
		digest := sha256.Sum256([]byte(message))
		if !ecdsa.VerifyASN1(pub, digest[:], der) {
			t.Fatalf("the V1 signature does not verify over %q", message)
		}
		// A plain DER SEQUENCE of two INTEGERs, nothing after it.
		var rs struct{ R, S *big.Int }
		if rest, err := asn1.Unmarshal(der, &rs); err != nil || len(rest) != 0 {
			t.Fatalf("not one DER signature: %v, %d bytes left", err, len(rest))
		}
		other := sha256.Sum256([]byte(strings.Replace(message, strconv.FormatInt(signNowMs, 10), "1", 1)))
		if ecdsa.VerifyASN1(pub, other[:], der) {
			t.Fatal("the signature verifies over another timestamp")
		}
	}
}

// checkOfferJWS verifies a V2 JWS with the developer key and returns its claims.
func checkOfferJWS(t *testing.T, jws, aud string) map[string]any {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("%d parts", len(parts))
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature: %v, %d bytes", err, len(sig))
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(developerKey(t), digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the JWS does not verify with developer.pub.pem")
	}
	var header, claims map[string]any
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	p, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(h, &header) != nil || json.Unmarshal(p, &claims) != nil {
		t.Fatal("header or claims are not JSON")
	}
	if len(header) != 3 || header["alg"] != "ES256" || header["kid"] != "FAKEKEY123" || header["typ"] != "JWT" {
		t.Fatalf("header %v", header)
	}
	if claims["iss"] != "57246542-96fe-1a63-e053-0824d011072a" || claims["iat"] != float64(signNowMs/1000) ||
		claims["aud"] != aud || claims["bid"] != "com.example.fake" || claims["nonce"] != strings.ToLower(signNonce) {
		t.Fatalf("claims %v", claims)
	}
	if _, ok := claims["exp"]; ok {
		t.Fatal("an exp claim")
	}
	return claims
}

func TestSignV2Kinds(t *testing.T) {
	s := newTestSigner(t, "")
	sig, err := s.Sign(`{"kind":"promotional_offer_v2","nonce":"`+signNonce+`","product_id":"pro.yearly",`+
		`"offer_identifier":"SAVE20","transaction_id":"2000000123"}`, signNow)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Signature != "" || sig.TimestampMs != signNowMs/1000*1000 {
		t.Fatalf("result %+v", sig)
	}
	c := checkOfferJWS(t, sig.JWS, "promotional-offer")
	if c["productId"] != "pro.yearly" || c["offerIdentifier"] != "SAVE20" || c["transactionId"] != "2000000123" || len(c) != 8 {
		t.Fatalf("claims %v", c)
	}

	sig, err = s.Sign([]byte(`{"kind":"introductory_offer_eligibility","nonce":"`+signNonce+`","product_id":"pro.monthly",`+
		`"allow_introductory_offer":false,"transaction_id":"2000000456"}`), signNow)
	if err != nil {
		t.Fatal(err)
	}
	c = checkOfferJWS(t, sig.JWS, "introductory-offer-eligibility")
	if c["productId"] != "pro.monthly" || c["allowIntroductoryOffer"] != false || c["transactionId"] != "2000000456" || len(c) != 8 {
		t.Fatalf("claims %v", c)
	}

	text := `{"operation": "CREATE_SUBSCRIPTION",  "requestInfo": {"requestReferenceId": "r-1"}}`
	sig, err = s.Sign(map[string]any{"kind": "advanced_commerce_request", "nonce": signNonce, "request": text}, signNow)
	if err != nil {
		t.Fatal(err)
	}
	c = checkOfferJWS(t, sig.JWS, "advanced-commerce-api")
	body, err := base64.StdEncoding.DecodeString(c["request"].(string))
	if err != nil || string(body) != text || len(c) != 6 {
		t.Fatalf("request claim %q (%v), claims %v", body, err, c)
	}
}

func TestSignRefusals(t *testing.T) {
	s := newTestSigner(t, "")
	v1 := func(change map[string]any, drop string) map[string]any {
		m := map[string]any{"kind": "promotional_offer_v1", "nonce": signNonce, "product_id": "p", "offer_identifier": "o"}
		for k, v := range change {
			m[k] = v
		}
		delete(m, drop)
		return m
	}
	cases := []struct {
		request any
		words   string
	}{
		{v1(nil, "nonce"), "nonce"},
		{v1(map[string]any{"nonce": "12345"}, ""), "UUID"},
		{v1(map[string]any{"kind": "subscription_offer"}, ""), "unknown"},
		{v1(map[string]any{"transaction_id": "1"}, ""), "does not apply"},
		{map[string]any{"kind": "introductory_offer_eligibility", "nonce": signNonce, "product_id": "p",
			"transaction_id": "1", "allow_introductory_offer": "yes"}, "true or false"},
		{map[string]any{"kind": "advanced_commerce_request", "nonce": signNonce, "request": "not json"}, "JSON"},
		{"[]", "JSON object"},
		{nil, "nil"},
		{func() {}, "cannot be encoded"},
	}
	for _, c := range cases {
		_, err := s.Sign(c.request, signNow)
		var e *Error
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &e) || !strings.Contains(e.Message, c.words) {
			t.Errorf("%v: want ErrInvalidArgument mentioning %q, got %v", c.request, c.words, err)
		}
	}
	_ = s.Close()
	if _, err := s.Sign(v1(nil, ""), signNow); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("closed signer: %v", err)
	}
}

func signalNotification(t *testing.T, ntype, subtype string, txn, renewal map[string]any) []byte {
	data := map[string]any{"bundleId": "com.example.fake", "environment": "Production",
		"signedTransactionInfo": fakeAppleJWS(t, txn), "signedRenewalInfo": fakeAppleJWS(t, renewal)}
	p := map[string]any{"notificationType": ntype, "notificationUUID": "00000000-0000-4000-8000-000000000002",
		"data": data, "version": "2.0", "signedDate": signedMs + 1000}
	if subtype != "" {
		p["subtype"] = subtype
	}
	return []byte(fakeAppleJWS(t, p))
}

func TestNotificationSignals(t *testing.T) {
	v := newTestVerifier(t)
	txn := fakeTransaction("1001", "Production")
	txn["price"], txn["currency"], txn["storefront"], txn["revocationDate"] = 9990, "EUR", "FRA", signedMs-1000
	txn["revocationReason"], txn["revocationType"], txn["revocationPercentage"] = 0, "REFUND_PRORATED", 83333
	renewal := map[string]any{"originalTransactionId": "1000", "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
		"autoRenewStatus": 1, "signedDate": signedMs, "environment": "Production", "priceIncreaseStatus": 0,
		"renewalPrice": 12990, "currency": "EUR", "eligibleWinBackOfferIds": []string{"wb1"}}
	r, err := v.VerifyJWS(signalNotification(t, "REFUND", "", txn, renewal), nowMs, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.JWSNotification()
	if err != nil || n == nil || !r.Valid {
		t.Fatalf("%v %v %s", n, err, r.Reason)
	}
	if n.Effect != "refunded" || n.Action != "apply" || n.Transaction == nil || n.RenewalInfo == nil {
		t.Fatalf("notification %+v", n)
	}
	tr := n.Transaction
	if *tr.RevocationType != "REFUND_PRORATED" || *tr.RevocationPercentage != 83333 || *tr.Price != 9990 ||
		*tr.Currency != "EUR" || *tr.Storefront != "FRA" || *tr.SignedDateMs != signedMs || tr.CancellationReason == nil {
		t.Fatalf("transaction %+v", tr)
	}
	ri := n.RenewalInfo
	if *ri.PriceIncreaseStatus != 0 || *ri.RenewalPrice != 12990 || *ri.AutoRenewStatus != true || len(ri.EligibleWinBackOfferIDs) != 1 {
		t.Fatalf("renewal info %+v", ri)
	}
	e := r.Entitlements[0]
	if e.Active || e.RevocationType == nil || *e.RevocationType != "REFUND_PRORATED" {
		t.Fatalf("entitlement %+v", e)
	}

	// An unknown type is recorded only; a transaction is not a notification.
	delete(txn, "revocationDate")
	delete(txn, "revocationType")
	delete(txn, "revocationPercentage")
	delete(txn, "revocationReason")
	r, err = v.VerifyJWS(signalNotification(t, "SOMETHING_NEW", "", txn, renewal), nowMs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ = r.JWSNotification(); n == nil || n.Effect != "unknown" || n.Action != "record_only" {
		t.Fatalf("unknown type: %+v", n)
	}
	r, err = v.VerifyJWS(signalNotification(t, "PRICE_INCREASE", "PENDING", txn, renewal), nowMs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := r.Entitlements[0]; !e.Active || e.PriceIncrease == nil || *e.PriceIncrease != "pending" || e.RevocationType != nil {
		t.Fatalf("price increase: %+v", e)
	}
	r, err = v.VerifyJWS([]byte(fakeAppleJWS(t, txn)), nowMs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err = r.JWSNotification(); n != nil || err != nil {
		t.Fatalf("a transaction has a notification: %+v %v", n, err)
	}
}
