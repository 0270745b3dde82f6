package iapverify_test

import (
	"errors"
	"fmt"
	"os"

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
