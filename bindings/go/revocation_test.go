package iapverify

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fake PKI of Tests/shared/fakeapple/ocsp: a leaf that names an OCSP responder, a token it
// signed, and prepared answers made for ocspNow (2026-01-01T01:00:00Z).
var ocspDir = filepath.Join(root, "Tests", "shared", "fakeapple", "ocsp")

const (
	ocspNow = int64(1767229200000)
	ocspURL = "http://127.0.0.1:39217/ocsp"
)

func ocspFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ocspDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ocspVerifier(t *testing.T, policy string) *Verifier {
	t.Helper()
	cfg := map[string]any{
		"bundle_id": "com.example.fake",
		"trust":     map[string]any{"include_apple_roots": false, "roots_pem": []string{string(ocspFile(t, "root.pem"))}},
	}
	if policy != "" {
		cfg["revocation"] = policy
	}
	raw, _ := json.Marshal(cfg)
	v, err := NewVerifier(raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

func ocspJWS(t *testing.T, v *Verifier, answers ...string) *Result {
	t.Helper()
	var opts *Options
	if len(answers) > 0 {
		opts = &Options{}
		for _, a := range answers {
			opts.OCSPResponses = append(opts.OCSPResponses, ocspFile(t, a+".der"))
		}
	}
	r, err := v.VerifyJWS([]byte(strings.TrimSpace(string(ocspFile(t, "transaction.jws")))), ocspNow, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRevocationUncheckedCarriesTheRequest(t *testing.T) {
	r := ocspJWS(t, ocspVerifier(t, ""))
	if !r.Valid || r.Verdict != "valid" {
		t.Fatalf("verdict %s: %s", r.Verdict, r.Reason)
	}
	rev := r.Revocation
	if rev == nil || rev.Status != "unchecked" || rev.ResponderURL == nil || *rev.ResponderURL != ocspURL {
		t.Fatalf("revocation %+v", rev)
	}
	if len(rev.Request) == 0 || rev.Request[0] != 0x30 {
		t.Fatalf("request is not DER: %x", rev.Request)
	}
	// The leaf's serial number is inside the request (its CertID names the leaf).
	block, _ := pem.Decode(ocspFile(t, "leaf.pem"))
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rev.Request), string(leaf.SerialNumber.Bytes())) {
		t.Fatal("the request does not carry the leaf's serial number")
	}
	req, err := rev.HTTPRequest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if req.Method != "POST" || req.URL.String() != ocspURL || req.Header.Get("Content-Type") != "application/ocsp-request" ||
		string(body) != string(rev.Request) {
		t.Fatalf("HTTP request %s %s %v", req.Method, req.URL, req.Header)
	}
}

func TestRevocationAnswers(t *testing.T) {
	off, required := ocspVerifier(t, "off"), ocspVerifier(t, "required")
	for _, c := range []struct {
		verifier *Verifier
		answers  []string
		verdict  Verdict
		status   string
	}{
		{off, []string{"good"}, "valid", "good"},
		{required, []string{"good"}, "valid", "good"},
		{required, []string{"delegated_good"}, "valid", "good"},
		{off, []string{"revoked"}, "revoked", "revoked"},
		{required, []string{"revoked"}, "revoked", "revoked"},
		{required, nil, "revocation_unknown", "unchecked"},
		{off, []string{"forged"}, "valid", "unknown"},
		{required, []string{"forged"}, "revocation_unknown", "unknown"},
		{required, []string{"stale"}, "revocation_unknown", "unknown"},
		{required, []string{"other_certificate"}, "revocation_unknown", "unknown"},
		{required, []string{"forged", "good"}, "valid", "good"},
	} {
		r := ocspJWS(t, c.verifier, c.answers...)
		if r.Verdict != c.verdict || r.Valid != (c.verdict == "valid") || r.Revocation == nil || r.Revocation.Status != c.status {
			t.Errorf("%v: verdict %s, revocation %+v", c.answers, r.Verdict, r.Revocation)
			continue
		}
		switch c.status {
		case "good":
			if r.Revocation.ThisUpdateMs == nil || *r.Revocation.ThisUpdateMs != 1767225600000 ||
				r.Revocation.NextUpdateMs == nil || *r.Revocation.NextUpdateMs != 1767830400000 {
				t.Errorf("%v: update times %+v", c.answers, r.Revocation)
			}
		case "revoked":
			if r.Revocation.RevokedAtMs == nil || *r.Revocation.RevokedAtMs != 1767139200000 || len(r.Entitlements) != 0 {
				t.Errorf("%v: revoked %+v", c.answers, r.Revocation)
			}
		}
	}
}

func TestRevocationOfReceipts(t *testing.T) {
	der, err := os.ReadFile(filepath.Join(root, "Tests", "IAPVerifyTests", "Fixtures", "receipts",
		"production_2025-04-18_com.dashedspace.analytics_sha256.der"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier([]byte(`{"bundle_id":"com.dashedspace.analytics"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	r, err := v.VerifyReceipt(der, 1745000000000, &Options{OCSPResponses: [][]byte{ocspFile(t, "good.der")}})
	if err != nil {
		t.Fatal(err)
	}
	// The fake PKI's answer is for another certificate: unknown, and "off" does not refuse.
	if !r.Valid || r.Revocation == nil || r.Revocation.Status != "unknown" || len(r.Revocation.Request) == 0 {
		t.Fatalf("receipt revocation %+v (%s)", r.Revocation, r.Verdict)
	}
	if r, err = v.VerifyReceipt([]byte("nope"), 1745000000000, nil); err != nil || r.Revocation != nil {
		t.Fatalf("a malformed receipt has revocation %+v (%v)", r.Revocation, err)
	}
}

func TestAPIResponseOptionsOCSP(t *testing.T) {
	text, err := APIResponseOptions{Endpoint: "transaction_info", HTTPStatus: 200, OCSPResponses: [][]byte{{0x30, 0x03}}}.marshal()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(text, &m)
	if list, ok := m["ocsp_responses"].([]any); !ok || len(list) != 1 || list[0] != "MAM=" {
		t.Fatalf("options %s", text)
	}
	_, err = APIResponseOptions{Endpoint: "transaction_info", HTTPStatus: 200,
		Extra: map[string]any{"ocsp_responses": []string{"MAM="}}}.marshal()
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("ocsp_responses in Extra: %v", err)
	}
}
