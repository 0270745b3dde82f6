package iapverify

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTypedValuesAndTimes(t *testing.T) {
	var r APIResult
	doc := `{"verdict": "valid", "action": "next_page", "entitlements": [{"id": "pro", "state": "grace_period",
	  "expires_date_ms": 1767225600000}], "notifications": [{"notification_type": "SOMETHING_NEW",
	  "subtype": "LATER", "effect": "unknown", "signed_date_ms": 1767225600123}],
	  "transactions": [{"transaction_id": "1", "product_id": "p", "quantity": 1, "purchase_date_ms": 0}]}`
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	if r.Verdict != VerdictValid || r.Action != ActionNextPage || r.Action == "accept" {
		t.Fatalf("%+v", r)
	}
	e := r.Entitlements[0]
	if at, ok := e.ExpiresAt(); e.State != StateGracePeriod || !ok || !at.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) ||
		at.Location() != time.UTC {
		t.Fatalf("%+v %v", e, at)
	}
	n := r.Notifications[0] // values without a constant come through as they are
	if n.NotificationType != "SOMETHING_NEW" || n.NotificationSubtype() != "LATER" || n.Effect != EffectUnknown {
		t.Fatalf("%+v", n)
	}
	if at, ok := n.SignedAt(); !ok || at.UnixMilli() != 1767225600123 {
		t.Fatalf("SignedAt %v", at)
	}
	tr := r.Transactions[0]
	if at, ok := tr.PurchasedAt(); !ok || at.UnixMilli() != 0 {
		t.Fatalf("PurchasedAt %v %v", at, ok)
	}
	if at, ok := tr.ExpiresAt(); ok || !at.IsZero() {
		t.Fatalf("no expiry: %v %v", at, ok)
	}
	var rev *Revocation
	if _, ok := rev.NextUpdateAt(); ok {
		t.Fatal("nil revocation")
	}
	if (JWSNotification{}).NotificationSubtype() != "" || (&Result{}).RetryAfter() != 0 {
		t.Fatal("zero values")
	}
}
