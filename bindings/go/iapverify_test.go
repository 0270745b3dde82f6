package iapverify

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var root = filepath.Join("..", "..")

type sharedCase struct {
	Name         string                 `json:"name"`
	Kind         string                 `json:"kind"`
	Input        string                 `json:"input"`
	Config       json.RawMessage        `json:"config"`
	Options      map[string]interface{} `json:"options"`
	NowMs        int64                  `json:"now_ms"`
	Verdict      Verdict                `json:"verdict"`
	Status       *int64                 `json:"status"`
	Action       Action                 `json:"action"`
	Entitlements []struct {
		ID            string  `json:"id"`
		Active        bool    `json:"active"`
		State         State   `json:"state"`
		TransactionID *string `json:"transaction_id"`
	} `json:"entitlements"`
	ToDeliver []string `json:"to_deliver"`
}

func options(m map[string]interface{}) *Options {
	if len(m) == 0 {
		return nil
	}
	raw, _ := json.Marshal(m)
	var o Options
	_ = json.Unmarshal(raw, &o)
	return &o
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestSharedExpectations(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "Tests", "shared", "expectations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Fixtures string       `json:"fixtures"`
		Cases    []sharedCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 15 {
		t.Fatalf("only %d cases", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		v, err := NewVerifier(c.Config)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		input, err := os.ReadFile(filepath.Join(root, doc.Fixtures, c.Input))
		if err != nil {
			t.Fatal(err)
		}
		var r *Result
		if c.Kind == "receipt" {
			r, err = v.VerifyReceipt(input, c.NowMs, options(c.Options))
		} else {
			r, err = v.InterpretResponse(input, c.NowMs, options(c.Options))
		}
		v.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if r.Verdict != c.Verdict || r.Valid != (c.Verdict == "valid") {
			t.Errorf("%s: verdict %s (valid %v), want %s", c.Name, r.Verdict, r.Valid, c.Verdict)
		}
		if len(r.Entitlements) != len(c.Entitlements) {
			t.Errorf("%s: %d entitlements, want %d", c.Name, len(r.Entitlements), len(c.Entitlements))
			continue
		}
		for i, e := range c.Entitlements {
			g := r.Entitlements[i]
			if g.ID != e.ID || g.Active != e.Active || g.State != e.State || str(g.TransactionID) != str(e.TransactionID) {
				t.Errorf("%s: entitlement %+v, want %+v", c.Name, g, e)
			}
		}
		var deliver []string
		for _, d := range r.Delivery.ToDeliver {
			deliver = append(deliver, d.TransactionID)
		}
		if len(deliver) != len(c.ToDeliver) || (len(deliver) > 0 && deliver[0] != c.ToDeliver[0]) {
			t.Errorf("%s: to_deliver %v, want %v", c.Name, deliver, c.ToDeliver)
		}
		if c.Kind == "response" && (r.Action != c.Action || *r.Status != *c.Status) {
			t.Errorf("%s: action %s status %d, want %s %d", c.Name, r.Action, *r.Status, c.Action, *c.Status)
		}
	}
}

func TestErrorsMatchWithErrorsIs(t *testing.T) {
	_, err := NewVerifier([]byte(`{"bundle_id":"a","colour":"red"}`))
	if !errors.Is(err, ErrConfig) || errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrConfig, got %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != -2 || e.Name != "IAPV_E_CONFIG" || e.Message == "" {
		t.Fatalf("bad error %#v", err)
	}
	v, err := NewVerifier([]byte(`{"bundle_id":"*","max_input_bytes":100}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyReceipt(make([]byte, 101), 0, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	if _, err := v.VerifyReceipt([]byte("x"), -1, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("want ErrInvalidArgument, got %v", err)
	}
	r, err := v.VerifyReceipt(nil, 0, nil)
	if err != nil || r.Verdict != "malformed" || r.Valid {
		t.Fatalf("empty input: %v %v", r, err)
	}
	v.Close()
	v.Close()
	if _, err := v.VerifyReceipt([]byte("x"), 0, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("closed verifier: %v", err)
	}
}

func TestResponsesAndDelivery(t *testing.T) {
	v, err := NewVerifier([]byte(`{"bundle_id":"com.example.app","environments":["Production","Sandbox"],
		"products":{"coins":{"type":"consumable"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	r, err := v.InterpretResponse([]byte(`{"status":21005}`), 0, &Options{Attempt: 3})
	if err != nil || r.Action != "retry_later" || *r.RetryAfterMs != 4000 {
		t.Fatalf("21005: %+v %v", r, err)
	}
	for _, status := range []int{0, 503} {
		status := status
		r, err = v.InterpretResponse(nil, 0, &Options{Attempt: 3, HTTPStatus: &status})
		if err != nil || r.Action != "retry_later" || *r.RetryAfterMs != 4000 || r.Verdict != "temporarily_unavailable" {
			t.Fatalf("HTTP %d: %+v %v", status, r, err)
		}
	}
	r, err = v.ComputeEntitlements([]byte(`{"transactions":[{"transaction_id":"1","product_id":"coins","purchase_date_ms":"1000"}]}`),
		2000, &Options{Orders: []Order{{OrderID: "A", ProductID: "coins", CreatedMs: 900}}})
	if err != nil || !r.Valid || len(r.Delivery.ToDeliver) != 1 || r.Delivery.Orders[0].Status != "matched" {
		t.Fatalf("entitlements: %+v %v", r, err)
	}
}

func TestGoroutinesShareOneVerifier(t *testing.T) {
	v, err := NewVerifier([]byte(`{"bundle_id":"*","environments":["Production","Sandbox"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	files, _ := filepath.Glob(filepath.Join(root, "Tests", "IAPVerifyTests", "Fixtures", "receipts", "*.der"))
	var inputs [][]byte
	var want []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		r, err := v.VerifyReceipt(b, 1893456000000, nil)
		if err != nil {
			t.Fatal(err)
		}
		inputs, want = append(inputs, b), append(want, string(r.JSON))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, b := range inputs {
				r, err := v.VerifyReceipt(b, 1893456000000, nil)
				if err != nil || string(r.JSON) != want[i] {
					mu.Lock()
					bad++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if bad != 0 {
		t.Fatalf("%d results differed", bad)
	}
}

func TestVerifyJWS(t *testing.T) {
	v, err := NewVerifier([]byte(`{"bundle_id":"*","environments":["Sandbox"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	token, _ := os.ReadFile(filepath.Join(root, "Tests", "IAPVerifyTests", "Fixtures", "jws", "transaction_autorenew_sandbox_2022-11.jws"))
	r, err := v.VerifyJWS([]byte(strings.TrimSpace(string(token))), 1893456000000, nil)
	if err != nil || !r.Valid || r.Kind != "transaction" || len(r.Transaction) == 0 {
		t.Fatalf("jws: %+v %v", r, err)
	}
}

// A receipt's in_app and a /verifyReceipt response's in_app decode into the one Transaction shape.
func TestInAppHasOneShape(t *testing.T) {
	v, err := NewVerifier([]byte(`{"bundle_id":"*","environments":["Production","Sandbox"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	b, _ := os.ReadFile(filepath.Join(root, "Tests", "IAPVerifyTests", "Fixtures", "receipts", "sandbox_2020-07-22_com.revenuecat.sampleapp.der"))
	r, err := v.VerifyReceipt(b, 1893456000000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Checks["signature"] != "ok" || len(r.Checks) != 12 {
		t.Fatalf("receipt checks: %v", r.Checks)
	}
	fromReceipt, err := r.InApp()
	if err != nil || len(fromReceipt) == 0 || fromReceipt[0].TransactionID == "" || fromReceipt[0].Quantity < 1 ||
		fromReceipt[0].IsUpgraded == nil || *fromReceipt[0].IsUpgraded {
		t.Fatalf("receipt in_app: %+v %v", fromReceipt, err)
	}
	r, err = v.InterpretResponse([]byte(`{"status":0,"environment":"Sandbox","receipt":{"bundle_id":"x","in_app":[{"transaction_id":"7","product_id":"p","purchase_date_ms":"1000"}]}}`),
		2000, &Options{Endpoint: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	fromResponse, err := r.InApp()
	if err != nil || len(fromResponse) != 1 || fromResponse[0].TransactionID != "7" || fromResponse[0].Quantity != 1 ||
		fromResponse[0].ProductType != nil {
		t.Fatalf("response in_app: %+v %v", fromResponse, err)
	}
}
