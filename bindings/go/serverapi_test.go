package iapverify

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Fixed clocks: the fake transactions are signed at signedMs; the tests run a little later.
const (
	signedMs = int64(1_700_000_000_000)
	nowMs    = signedMs + 123_456
)

var testNow = time.UnixMilli(nowMs)

func fakeApple(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Tests", "shared", "fakeapple", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pemBlock(t *testing.T, name string) []byte {
	t.Helper()
	block, _ := pem.Decode(fakeApple(t, name))
	if block == nil {
		t.Fatalf("%s: no PEM block", name)
	}
	return block.Bytes
}

// signerConfig is the fixture's signer config, with the test base URL when base is not empty.
func signerConfig(t *testing.T, base string) []byte {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(fakeApple(t, "signer.json"), &cfg); err != nil {
		t.Fatal(err)
	}
	if base != "" {
		cfg["test_base_url"] = base
	}
	b, _ := json.Marshal(cfg)
	return b
}

func newTestSigner(t *testing.T, base string) *Signer {
	t.Helper()
	s, err := NewSigner(signerConfig(t, base))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newTestVerifier(t *testing.T) *Verifier {
	t.Helper()
	v, err := NewVerifier(fakeApple(t, "verifier.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// developerKey is the public half of the fixture's developer key (developer.pub.pem).
func developerKey(t *testing.T) *ecdsa.PublicKey {
	t.Helper()
	pub, err := x509.ParsePKIXPublicKey(pemBlock(t, "developer.pub.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return pub.(*ecdsa.PublicKey)
}

// checkBearer verifies a bearer token on its own (crypto/ecdsa and the developer's public key,
// not the library) and checks every header field and claim. It returns what is wrong, or "".
// It does not touch t, so a test server's handler may call it.
func checkBearer(pub *ecdsa.PublicKey, token string, issuedAt int64) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return fmt.Sprintf("%d parts", len(parts))
	}
	var decoded [3][]byte
	for i, part := range parts {
		b, err := base64.RawURLEncoding.DecodeString(part)
		if err != nil {
			return fmt.Sprintf("part %d is not base64url: %v", i, err)
		}
		decoded[i] = b
	}
	sig := decoded[2]
	if len(sig) != 64 {
		return fmt.Sprintf("a %d-byte signature, want raw r||s of 64", len(sig))
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return "the signature does not verify with developer.pub.pem"
	}
	var header map[string]any
	if err := json.Unmarshal(decoded[0], &header); err != nil {
		return "header: " + err.Error()
	}
	if len(header) != 3 || header["alg"] != "ES256" || header["kid"] != "FAKEKEY123" || header["typ"] != "JWT" {
		return fmt.Sprintf("header %v", header)
	}
	var claims struct {
		Iss string `json:"iss"`
		Iat int64  `json:"iat"`
		Exp int64  `json:"exp"`
		Aud string `json:"aud"`
		Bid string `json:"bid"`
	}
	if err := json.Unmarshal(decoded[1], &claims); err != nil {
		return "claims: " + err.Error()
	}
	if claims.Iss != "57246542-96fe-1a63-e053-0824d011072a" || claims.Aud != "appstoreconnect-v1" || claims.Bid != "com.example.fake" {
		return fmt.Sprintf("claims %+v", claims)
	}
	if claims.Iat != issuedAt || claims.Exp <= claims.Iat || claims.Exp > claims.Iat+3600 {
		return fmt.Sprintf("iat %d exp %d, want iat %d and exp within an hour", claims.Iat, claims.Exp, issuedAt)
	}
	return ""
}

func TestSignerToken(t *testing.T) {
	s := newTestSigner(t, "")
	tok, err := s.Token(testNow)
	if err != nil {
		t.Fatal(err)
	}
	if problem := checkBearer(developerKey(t), tok.Token, nowMs/1000); problem != "" {
		t.Fatal(problem)
	}
	if tok.IssuedAtMs != nowMs/1000*1000 || tok.ExpiresAtMs != tok.IssuedAtMs+300_000 || !tok.ExpiresAt().Equal(time.UnixMilli(tok.ExpiresAtMs)) {
		t.Fatalf("times %+v", tok)
	}
	if _, err := s.Token(time.UnixMilli(-1)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a time before 1970: %v", err)
	}
}

func TestSignerConfigErrors(t *testing.T) {
	var cfg map[string]any
	_ = json.Unmarshal(signerConfig(t, ""), &cfg)
	cases := map[string]func(map[string]any){
		"P-384 key":     func(m map[string]any) { m["private_key_pem"] = string(fakeApple(t, "p384.p8")) },
		"no key":        func(m map[string]any) { delete(m, "private_key_pem") },
		"not a key":     func(m map[string]any) { m["private_key_pem"] = "hello" },
		"unknown key":   func(m map[string]any) { m["colour"] = "red" },
		"bad key id":    func(m map[string]any) { m["key_id"] = "a b" },
		"bad base URL":  func(m map[string]any) { m["test_base_url"] = "http://127.0.0.1:1/path" },
		"bundle number": func(m map[string]any) { m["bundle_id"] = 7 },
	}
	secret := cfg["private_key_pem"].(string)
	body := strings.Split(secret, "\n")[1] // a line of the key's base64
	for name, change := range cases {
		m := map[string]any{}
		for k, v := range cfg {
			m[k] = v
		}
		change(m)
		b, _ := json.Marshal(m)
		s, err := NewSigner(b)
		if s != nil || !errors.Is(err, ErrConfig) {
			t.Errorf("%s: want ErrConfig, got %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), body) {
			t.Errorf("%s: the error shows the private key: %v", name, err)
		}
	}
	if _, err := NewSigner([]byte("{")); !errors.Is(err, ErrConfig) {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestNewRequest(t *testing.T) {
	s := newTestSigner(t, "")
	pub := developerKey(t)
	type call struct {
		Endpoint      string `json:"endpoint"`
		Environment   string `json:"environment,omitempty"`
		TransactionID string `json:"transaction_id,omitempty"`
		Revision      string `json:"revision,omitempty"`
	}
	cases := []struct {
		name   string
		call   any
		method string
		url    string
		body   string
	}{
		{"transaction_info as text", `{"endpoint":"transaction_info","transaction_id":"2000000123"}`,
			"GET", "https://api.storekit.apple.com/inApps/v1/transactions/2000000123", ""},
		{"transaction_history as a struct", call{Endpoint: "transaction_history", Environment: "Sandbox", TransactionID: "1001", Revision: "AbC+/="},
			"GET", "https://api.storekit-sandbox.apple.com/inApps/v2/history/1001?revision=AbC%2B%2F%3D", ""},
		{"transaction_history with filters as a map", map[string]any{"endpoint": "transaction_history", "transaction_id": "1001",
			"query": map[string]any{"productType": []string{"AUTO_RENEWABLE", "CONSUMABLE"}, "sort": "DESCENDING"}},
			"GET", "https://api.storekit.apple.com/inApps/v2/history/1001?productType=AUTO_RENEWABLE&productType=CONSUMABLE&sort=DESCENDING", ""},
		{"subscription_statuses as bytes", []byte(`{"endpoint":"subscription_statuses","transaction_id":"1000","query":{"status":[1,4]}}`),
			"GET", "https://api.storekit.apple.com/inApps/v1/subscriptions/1000?status=1&status=4", ""},
		{"order_lookup as raw JSON", json.RawMessage(`{"endpoint":"order_lookup","order_id":"MK5TTTVWJH"}`),
			"GET", "https://api.storekit.apple.com/inApps/v1/lookup/MK5TTTVWJH", ""},
		{"set_app_account_token", map[string]any{"endpoint": "set_app_account_token", "original_transaction_id": "1000",
			"body": map[string]any{"appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}},
			"PUT", "https://api.storekit.apple.com/inApps/v1/transactions/1000/appAccountToken",
			`{"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}`},
		{"mass_extend_status", map[string]any{"endpoint": "mass_extend_status", "product_id": "pro.monthly", "request_identifier": "job-1"},
			"GET", "https://api.storekit.apple.com/inApps/v1/subscriptions/extend/mass/pro.monthly/job-1", ""},
		{"notification_history", map[string]any{"endpoint": "notification_history", "environment": "Sandbox", "pagination_token": "p1",
			"body": map[string]any{"startDate": signedMs - 86_400_000, "endDate": signedMs}},
			"POST", "https://api.storekit-sandbox.apple.com/inApps/v1/notifications/history?paginationToken=p1",
			fmt.Sprintf(`{"startDate":%d,"endDate":%d}`, signedMs-86_400_000, signedMs)},
		{"test_notification", `{"endpoint":"test_notification","environment":"Sandbox"}`,
			"POST", "https://api.storekit-sandbox.apple.com/inApps/v1/notifications/test", ""},
		{"advanced_commerce_revoke_subscription", map[string]any{"endpoint": "advanced_commerce_revoke_subscription", "transaction_id": "1000",
			"body": map[string]any{"refundReason": "LEGAL", "refundType": "FULL", "refundRiskingPreference": true,
				"requestInfo": map[string]any{"requestReferenceId": "7E3FB20B-4CDB-47CC-936D-99D65F608138"}}},
			"POST", "https://api.storekit.apple.com/advancedCommerce/v1/subscription/revoke/1000",
			`{"requestInfo":{"requestReferenceId":"7e3fb20b-4cdb-47cc-936d-99d65f608138"},"refundRiskingPreference":true,"refundType":"FULL","refundReason":"LEGAL"}`},
	}
	for _, c := range cases {
		req, err := s.NewRequest(context.Background(), c.call, testNow)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if req.Method != c.method || req.URL.String() != c.url {
			t.Errorf("%s: %s %s, want %s %s", c.name, req.Method, req.URL, c.method, c.url)
		}
		auth := req.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "Bearer ") {
			t.Errorf("%s: Authorization %q", c.name, auth)
		} else if problem := checkBearer(pub, strings.TrimPrefix(auth, "Bearer "), nowMs/1000); problem != "" {
			t.Errorf("%s: token: %s", c.name, problem)
		}
		if req.Header.Get("Accept") != "application/json" {
			t.Errorf("%s: Accept %q", c.name, req.Header.Get("Accept"))
		}
		if c.body == "" {
			if req.Body != nil || req.ContentLength != 0 || req.Header.Get("Content-Type") != "" {
				t.Errorf("%s: a body where none belongs (%d bytes)", c.name, req.ContentLength)
			}
			continue
		}
		got, _ := io.ReadAll(req.Body)
		if string(got) != c.body || req.ContentLength != int64(len(c.body)) || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: body %s (%d, %q), want %s", c.name, got, req.ContentLength, req.Header.Get("Content-Type"), c.body)
		}
		if req.GetBody == nil {
			t.Errorf("%s: no GetBody", c.name)
		} else if again, err := req.GetBody(); err != nil {
			t.Errorf("%s: GetBody: %v", c.name, err)
		} else if b, _ := io.ReadAll(again); string(b) != c.body {
			t.Errorf("%s: GetBody gives %s", c.name, b)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := s.NewRequest(ctx, `{"endpoint":"transaction_info","transaction_id":"1"}`, testNow)
	if err != nil || req.Context() != ctx {
		t.Fatalf("the request does not carry the context: %v", err)
	}
}

func TestNewRequestRefusals(t *testing.T) {
	s := newTestSigner(t, "")
	for _, id := range []string{"a/b", "a?b", "..", "a#b", `a\b`, "a%2Fb", "a b", ".", "x/../y", ""} {
		_, err := s.NewRequest(context.Background(), map[string]string{"endpoint": "transaction_info", "transaction_id": id}, testNow)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("transaction id %q: want ErrInvalidArgument, got %v", id, err)
		}
	}
	bad := []any{
		`{"endpoint":"transaction_lottery","transaction_id":"1"}`,
		`{"endpoint":"transaction_info"}`,
		`{"endpoint":"transaction_info","transaction_id":"1","order_id":"2"}`,
		`{"endpoint":"transaction_info","transaction_id":"1","environment":"staging"}`,
		`{"endpoint":"transaction_info","transaction_id":"1","body":{"x":1}}`,
		`{"endpoint":"transaction_history","transaction_id":"1","query":{"sort":"SIDEWAYS"}}`,
		`{"endpoint":"order_lookup","order_id":"A","environment":"Sandbox"}`,
		`{"endpoint":"consumption_info","transaction_id":"1","body":{"customerConsented":false,"sampleContentProvided":true,"deliveryStatus":"DELIVERED"}}`,
		`[]`, `not json`, ``,
		nil,
		map[string]any{"endpoint": make(chan int)},
	}
	for _, c := range bad {
		if req, err := s.NewRequest(context.Background(), c, testNow); req != nil || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v: want ErrInvalidArgument, got %v", c, err)
		}
	}
}

// fixedEntropy makes ECDSA signing in the tests repeatable: every byte it gives is the same.
type fixedEntropy struct{}

func (fixedEntropy) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0x5a
	}
	return len(p), nil
}

// fakeAppleJWS signs payload the way the App Store does (ES256, raw r||s, x5c of three), with
// the fake leaf key under the fake root verifier.json trusts.
func fakeAppleJWS(t *testing.T, payload map[string]any) string {
	t.Helper()
	key, err := x509.ParsePKCS8PrivateKey(pemBlock(t, "leaf.key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	var chain []string
	for _, name := range []string{"leaf.pem", "wwdr.pem", "root.pem"} {
		chain = append(chain, base64.StdEncoding.EncodeToString(pemBlock(t, name)))
	}
	header, _ := json.Marshal(map[string]any{"alg": "ES256", "x5c": chain})
	body, _ := json.Marshal(payload)
	input := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(body)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(fixedEntropy{}, key.(*ecdsa.PrivateKey), digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func fakeTransaction(id, environment string) map[string]any {
	return map[string]any{
		"transactionId": id, "originalTransactionId": "1000", "bundleId": "com.example.fake", "productId": "pro.monthly",
		"purchaseDate": signedMs - 86_400_000, "originalPurchaseDate": signedMs - 86_400_000,
		"expiresDate": signedMs + 29*86_400_000, "quantity": 1, "type": "Auto-Renewable Subscription",
		"inAppOwnershipType": "PURCHASED", "signedDate": signedMs, "environment": environment,
	}
}

// fakeAPI is a stand-in for the sandbox App Store Server API: it checks the bearer token on
// its own and serves one page of transaction history.
func fakeAPI(t *testing.T, status int, retryAfter string, page map[string]any) *httptest.Server {
	pub := developerKey(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "Bearer ") || checkBearer(pub, strings.TrimPrefix(auth, "Bearer "), nowMs/1000) != "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method != "GET" || r.URL.Path != "/inApps/v2/history/1001" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"errorCode":4040010,"errorMessage":"Transaction id not found."}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		if page != nil {
			_ = json.NewEncoder(w).Encode(page)
		} else if status == http.StatusTooManyRequests {
			_, _ = w.Write([]byte(`{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// roundTrip asks srv for the sandbox history of 1001 and interprets the answer.
func roundTrip(t *testing.T, srv *httptest.Server, call map[string]any) *APIResult {
	t.Helper()
	s := newTestSigner(t, srv.URL)
	v := newTestVerifier(t)
	req, err := s.NewRequest(context.Background(), call, testNow)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.InterpretHTTPResponse(resp, "transaction_history", EnvironmentSandbox, 1, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var historyCall = map[string]any{"endpoint": "transaction_history", "environment": "Sandbox", "transaction_id": "1001"}

func TestRoundTripTransactionHistory(t *testing.T) {
	page := map[string]any{"revision": "rev-1", "hasMore": false, "bundleId": "com.example.fake", "environment": "Sandbox",
		"signedTransactions": []string{fakeAppleJWS(t, fakeTransaction("1001", "Sandbox"))}}
	r := roundTrip(t, fakeAPI(t, 200, "", page), historyCall)
	if !r.Valid || r.Verdict != "valid" || r.Action != "accept" || !r.Trusted || r.NextPage != nil {
		t.Fatalf("%s", r.Raw)
	}
	if len(r.Transactions) != 1 || r.Transactions[0].TransactionID != "1001" || r.Transactions[0].ProductID != "pro.monthly" ||
		r.SignedItems != 1 || r.HTTPStatus != 200 || r.Environment != EnvironmentSandbox {
		t.Fatalf("%s", r.Raw)
	}
	if len(r.Entitlements) != 1 || !r.Entitlements[0].Active || r.Entitlement(r.Entitlements[0].ID) == nil {
		t.Fatalf("entitlements: %s", r.Raw)
	}

	// Apple has more: the same page with hasMore gives the revision for the next call.
	page["hasMore"] = true
	r = roundTrip(t, fakeAPI(t, 200, "", page), historyCall)
	if !r.Valid || r.Action != "next_page" || r.NextPage == nil || r.NextPage.Revision != "rev-1" || len(r.Transactions) != 1 {
		t.Fatalf("next page: %s", r.Raw)
	}

	// A production transaction in a sandbox answer: nothing in it counts.
	page["hasMore"] = false
	page["signedTransactions"] = []string{fakeAppleJWS(t, fakeTransaction("1001", "Production"))}
	r = roundTrip(t, fakeAPI(t, 200, "", page), historyCall)
	if r.Valid || r.Action != "reject" || len(r.Transactions) != 0 || len(r.Entitlements) != 0 {
		t.Fatalf("wrong environment: %s", r.Raw)
	}
}

func TestRoundTripRateLimitAndUnauthorized(t *testing.T) {
	r := roundTrip(t, fakeAPI(t, http.StatusTooManyRequests, fmt.Sprint(nowMs+7_000), nil), historyCall)
	if r.Valid || r.Action != "retry_later" || r.RetryAfterMs == nil || *r.RetryAfterMs != 7_000 || r.RetryAfter() != 7*time.Second ||
		r.ErrorCode == nil || *r.ErrorCode != 4290000 {
		t.Fatalf("429: %s", r.Raw)
	}

	// The fake API refuses a token signed at another time: 401 is a configuration problem.
	srv := fakeAPI(t, 200, "", map[string]any{})
	s := newTestSigner(t, srv.URL)
	v := newTestVerifier(t)
	req, err := s.NewRequest(context.Background(), historyCall, testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r, err = v.InterpretHTTPResponse(resp, "transaction_history", EnvironmentSandbox, 1, testNow)
	if err != nil || r.Valid || r.HTTPStatus != 401 || r.Action != "fix_configuration" {
		t.Fatalf("401: %v %s", err, r.Raw)
	}
}

func TestInterpretAPIResponseOptions(t *testing.T) {
	v := newTestVerifier(t)
	r, err := v.InterpretAPIResponse(nil, APIResponseOptions{Endpoint: "transaction_info", HTTPStatus: 401}, testNow)
	if err != nil || r.Action != "fix_configuration" || r.Verdict != "configuration_error" {
		t.Fatalf("401: %v %+v", err, r)
	}
	// No Retry-After: the backoff for the attempt.
	r, err = v.InterpretAPIResponse([]byte(`{"errorCode":5000000,"errorMessage":"An unknown error occurred."}`),
		APIResponseOptions{Endpoint: "transaction_info", HTTPStatus: 500, Attempt: 3}, testNow)
	if err != nil || r.Action != "retry_later" || r.RetryAfterMs == nil || *r.RetryAfterMs != 4000 {
		t.Fatalf("500: %v %s", err, r.Raw)
	}
	// An unknown id in production, with Sandbox accepted: ask the sandbox host.
	r, err = v.InterpretAPIResponse([]byte(`{"errorCode":4040010,"errorMessage":"Transaction id not found."}`),
		APIResponseOptions{Endpoint: "transaction_info", Environment: EnvironmentProduction, HTTPStatus: 404}, testNow)
	if err != nil || r.Action != "retry_sandbox" {
		t.Fatalf("404: %v %s", err, r.Raw)
	}
	// Extra carries the other options by name.
	r, err = v.InterpretAPIResponse(nil, APIResponseOptions{Endpoint: "finish_transaction", HTTPStatus: 200,
		Extra: map[string]any{"delivered_transaction_ids": []string{"1"}}}, testNow)
	if err != nil || !r.Valid || r.Action != "accept" {
		t.Fatalf("finish_transaction: %v %s", err, r.Raw)
	}
	// ... and the typed fields carry every key of iapv_interpret_api_response.
	r, err = v.InterpretAPIResponse(nil, APIResponseOptions{Endpoint: "finish_transaction", HTTPStatus: 200,
		DeliveredTransactionIDs: []string{"1"}, Orders: []Order{{OrderID: "A", ProductID: "coins", CreatedMs: 900}},
		RenewalInfo: []interface{}{map[string]any{"original_transaction_id": "1000", "auto_renew_status": false}}}, testNow)
	if err != nil || !r.Valid || r.Action != "accept" || len(r.Delivery.Orders) != 1 || r.Delivery.Orders[0].Status != "unmatched" {
		t.Fatalf("typed delivery options: %v %s", err, r.Raw)
	}
	bad := []APIResponseOptions{
		{Endpoint: "transaction_info", HTTPStatus: 200, DeliveredTransactionIDs: []string{"1"},
			Extra: map[string]any{"delivered_transaction_ids": []string{"2"}}},
		{HTTPStatus: 200},
		{Endpoint: "transaction_info"},
		{Endpoint: "transaction_lottery", HTTPStatus: 200},
		{Endpoint: "transaction_info", HTTPStatus: 200, Environment: "staging"},
		{Endpoint: "transaction_info", HTTPStatus: 200, Extra: map[string]any{"attempt": 2}},
		{Endpoint: "transaction_info", HTTPStatus: 200, Extra: map[string]any{"colour": "red"}},
		{Endpoint: "transaction_info", HTTPStatus: 200, Extra: map[string]any{"f": func() {}}},
	}
	for _, o := range bad {
		if _, err := v.InterpretAPIResponse([]byte(`{}`), o, testNow); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%+v: want ErrInvalidArgument, got %v", o, err)
		}
	}
	if _, err := v.InterpretHTTPResponse(nil, "transaction_info", "", 1, testNow); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil response: %v", err)
	}
}

func TestUseAfterClose(t *testing.T) {
	s, err := NewSigner(signerConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Token(testNow); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Token after Close: %v", err)
	}
	if req, err := s.NewRequest(context.Background(), historyCall, testNow); req != nil || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewRequest after Close: %v", err)
	}
	v, err := NewVerifier(fakeApple(t, "verifier.json"))
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	if _, err := v.InterpretAPIResponse(nil, APIResponseOptions{Endpoint: "transaction_info", HTTPStatus: 401}, testNow); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("InterpretAPIResponse after Close: %v", err)
	}
}

func TestOldSpellingsAreReportedAndForeignOptionsRefused(t *testing.T) {
	v := newTestVerifier(t)
	r, err := v.InterpretAPIResponse(nil, APIResponseOptions{Endpoint: "finish_transaction", HTTPStatus: 200,
		Environment: "sandbox"}, testNow)
	if err != nil || r.Environment != EnvironmentSandbox || len(r.Deprecations) != 1 ||
		!strings.Contains(r.Deprecations[0], `"Sandbox"`) {
		t.Fatalf("a lower-case environment: %+v, %v", r, err)
	}
	r, err = v.InterpretAPIResponse(nil, APIResponseOptions{Endpoint: "finish_transaction", HTTPStatus: 200,
		Environment: EnvironmentSandbox}, testNow)
	if err != nil || len(r.Deprecations) != 0 {
		t.Fatalf("Apple's spelling: %+v, %v", r, err)
	}
	res, err := v.InterpretResponse([]byte(`{"status":21005}`), testNow.UnixMilli(), &Options{Endpoint: "sandbox"})
	if err != nil || len(res.Deprecations) != 1 || !strings.Contains(res.Deprecations[0], "options.endpoint is deprecated") {
		t.Fatalf("the deprecated Options.Endpoint: %+v, %v", res, err)
	}
	res, err = v.InterpretResponse([]byte(`{"status":21005}`), testNow.UnixMilli(), &Options{Environment: EnvironmentSandbox})
	if err != nil || len(res.Deprecations) != 0 || res.Action != ActionRetryLater {
		t.Fatalf("Options.Environment: %+v, %v", res, err)
	}
	_, err = v.InterpretResponse([]byte(`{"status":21005}`), testNow.UnixMilli(), &Options{DeviceID: "C68BCE28-7E27-494A-A082-ACECB9328171"})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `"device_id" does not apply to iapv_interpret_response`) {
		t.Fatalf("a receipt option given to InterpretResponse: %v", err)
	}
}

func TestReadTransactionReceipt(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "Tests", "shared", "transaction_receipt_ios6.b64"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadTransactionReceipt(text)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != "unverified" || r.TransactionID != "1000000046178818" || r.Environment != "Sandbox" ||
		r.PurchaseInfo["product-id"] != "com.example.coins" {
		t.Fatalf("read %+v", r)
	}
	bad, err := ReadTransactionReceipt([]byte("hello"))
	if err != nil || bad.Verdict != "malformed" || bad.TransactionID != "" {
		t.Fatalf("hello: %+v, %v", bad, err)
	}
	if empty, err := ReadTransactionReceipt(nil); err != nil || empty.Verdict != "malformed" {
		t.Fatalf("nil: %+v, %v", empty, err)
	}
}
