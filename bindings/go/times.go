package iapverify

import "time"

// time.Time helpers beside the *int64 Unix-millisecond fields. Each returns the instant in UTC
// and true, or the zero time and false when the field is nil (Apple did not send it, or the
// result has none).

func msTime(ms *int64) (time.Time, bool) {
	if ms == nil {
		return time.Time{}, false
	}
	return time.UnixMilli(*ms).UTC(), true
}

// ExpiresAt is ExpiresDateMs: when the entitlement ends (for grace_period, the grace end).
func (e Entitlement) ExpiresAt() (time.Time, bool) { return msTime(e.ExpiresDateMs) }

// PurchasedAt is PurchaseDateMs.
func (p Purchase) PurchasedAt() (time.Time, bool) { return msTime(p.PurchaseDateMs) }

// PurchasedAt is PurchaseDateMs.
func (d DeliveryItem) PurchasedAt() (time.Time, bool) { return msTime(d.PurchaseDateMs) }

// PurchasedAt is PurchaseDateMs.
func (t Transaction) PurchasedAt() (time.Time, bool) { return msTime(t.PurchaseDateMs) }

// OriginalPurchasedAt is OriginalPurchaseDateMs.
func (t Transaction) OriginalPurchasedAt() (time.Time, bool) { return msTime(t.OriginalPurchaseDateMs) }

// ExpiresAt is ExpiresDateMs (subscriptions).
func (t Transaction) ExpiresAt() (time.Time, bool) { return msTime(t.ExpiresDateMs) }

// CancelledAt is CancellationDateMs: when the purchase was refunded or revoked.
func (t Transaction) CancelledAt() (time.Time, bool) { return msTime(t.CancellationDateMs) }

// SignedAt is SignedDateMs: when Apple signed this statement (StoreKit 2).
func (t Transaction) SignedAt() (time.Time, bool) { return msTime(t.SignedDateMs) }

// GracePeriodExpiresAt is GracePeriodExpiresDateMs.
func (r RenewalInfo) GracePeriodExpiresAt() (time.Time, bool) {
	return msTime(r.GracePeriodExpiresDateMs)
}

// RenewsAt is RenewalDateMs (StoreKit 2).
func (r RenewalInfo) RenewsAt() (time.Time, bool) { return msTime(r.RenewalDateMs) }

// SignedAt is SignedDateMs (StoreKit 2).
func (r RenewalInfo) SignedAt() (time.Time, bool) { return msTime(r.SignedDateMs) }

// SignedAt is SignedDateMs: when Apple signed the notification.
func (n JWSNotification) SignedAt() (time.Time, bool) { return msTime(n.SignedDateMs) }

// SignedAt is SignedDateMs: when Apple signed the notification.
func (n APINotification) SignedAt() (time.Time, bool) { return msTime(n.SignedDateMs) }

// ThisUpdateAt is ThisUpdateMs (good only).
func (r *Revocation) ThisUpdateAt() (time.Time, bool) {
	if r == nil {
		return time.Time{}, false
	}
	return msTime(r.ThisUpdateMs)
}

// NextUpdateAt is NextUpdateMs: keep the OCSP answer until then (good only).
func (r *Revocation) NextUpdateAt() (time.Time, bool) {
	if r == nil {
		return time.Time{}, false
	}
	return msTime(r.NextUpdateMs)
}

// RevokedAt is RevokedAtMs (revoked only).
func (r *Revocation) RevokedAt() (time.Time, bool) {
	if r == nil {
		return time.Time{}, false
	}
	return msTime(r.RevokedAtMs)
}

// RetryAfter is RetryAfterMs as a duration (/verifyReceipt answers); 0 when the result has none.
func (r *Result) RetryAfter() time.Duration {
	if r.RetryAfterMs == nil {
		return 0
	}
	return time.Duration(*r.RetryAfterMs) * time.Millisecond
}
