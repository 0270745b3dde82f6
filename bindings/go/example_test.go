package iapverify_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	iapverify "github.com/iapverify/iapverify/bindings/go"
)

func Example() {
	v, err := iapverify.NewVerifier([]byte(`{"bundle_id": "com.dashedspace.analytics"}`))
	if err != nil {
		fmt.Println("config:", err) // errors.Is(err, iapverify.ErrConfig)
		return
	}
	defer v.Close()
	receipt, _ := os.ReadFile("../../Tests/IAPVerifyTests/Fixtures/receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der")
	r, err := v.VerifyReceipt(receipt, 1745000000000, nil) // pass your server's clock in ms
	if errors.Is(err, iapverify.ErrTooLarge) {
		fmt.Println("too large")
		return
	}
	fmt.Println(r.Verdict)
	for _, e := range r.Entitlements {
		fmt.Println(e.ID, e.Active, e.State)
	}
	// Output:
	// valid
	// api.dashedspace.com.plan.yearly true active
}

// A call to the App Store Server API: the Signer builds the request, your client sends it, and
// the Verifier says what the answer is worth and what to do next.
func ExampleSigner_NewRequest() {
	config, _ := os.ReadFile("../../Tests/shared/fakeapple/signer.json") // your .p8 key and ids
	signer, err := iapverify.NewSigner(config)
	if err != nil {
		fmt.Println("signer config:", err) // errors.Is(err, iapverify.ErrConfig)
		return
	}
	defer signer.Close()
	call := map[string]any{
		"endpoint":       "transaction_history",
		"environment":    "Sandbox",
		"transaction_id": "2000000123456789",
		"query":          map[string]any{"sort": "DESCENDING"},
	}
	now := time.UnixMilli(1700000000000) // your server's clock: time.Now()
	req, err := signer.NewRequest(context.Background(), call, now)
	if err != nil {
		fmt.Println("call:", err) // errors.Is(err, iapverify.ErrInvalidArgument)
		return
	}
	fmt.Println(req.Method, req.URL)
	fmt.Println(strings.HasPrefix(req.Header.Get("Authorization"), "Bearer "))
	// Then: resp, err := http.DefaultClient.Do(req)
	//       r, err := verifier.InterpretHTTPResponse(resp, "transaction_history", iapverify.EnvironmentSandbox, attempt, time.Now())
	// Output:
	// GET https://api.storekit-sandbox.apple.com/inApps/v2/history/2000000123456789?sort=DESCENDING
	// true
}

// Reading Apple's answer: here a rate limit, whose Retry-After is a UNIX time in milliseconds.
func ExampleVerifier_InterpretAPIResponse() {
	config, _ := os.ReadFile("../../Tests/shared/fakeapple/verifier.json")
	v, err := iapverify.NewVerifier(config)
	if err != nil {
		fmt.Println("config:", err)
		return
	}
	defer v.Close()
	now := time.UnixMilli(1700000000000)
	r, err := v.InterpretAPIResponse([]byte(`{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}`),
		iapverify.APIResponseOptions{Endpoint: "transaction_history", Environment: iapverify.EnvironmentProduction,
			HTTPStatus: 429, RetryAfter: "1700000030000", Attempt: 1}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	switch r.Action {
	case "accept", "next_page":
		fmt.Println(len(r.Transactions), "verified transactions")
	case "retry_later":
		fmt.Println("retry in", r.RetryAfter())
	default:
		fmt.Println(r.Action, r.Reason)
	}
	// Output:
	// retry in 30s
}
