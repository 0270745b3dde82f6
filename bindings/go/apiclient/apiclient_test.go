package apiclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	iapverify "github.com/iapverify/iapverify/bindings/go"
	"github.com/iapverify/iapverify/bindings/go/apiclient"
)

const (
	signedMs = 1_767_225_600_000    // 2026-01-01T00:00:00Z: when the fake's items are dated
	nowMs    = signedMs + 3_600_000 // the client's clock at the start of each test
	coins    = "com.example.fake.coins"
	pro      = "com.example.fake.pro"
)

var root = func() string {
	dir, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		panic(err)
	}
	return dir
}()

// purchase is a transaction payload as Apple signs it (the fake adds bundleId and environment).
func purchase(id, product, original string, minute int64) map[string]any {
	kind := "Consumable"
	if product == pro {
		kind = "Non-Consumable"
	}
	return map[string]any{"transactionId": id, "originalTransactionId": original, "productId": product,
		"purchaseDate": signedMs - 3_600_000 + minute*60_000, "originalPurchaseDate": signedMs - 3_600_000,
		"quantity": 1, "type": kind, "inAppOwnershipType": "PURCHASED", "signedDate": signedMs}
}

// fakeAPI is Tests/shared/fakeapple/serve.py running a scenario.
type fakeAPI struct {
	production, sandbox string
	stdin               io.WriteCloser
	out                 *bufio.Reader
	cmd                 *exec.Cmd
	stderr              *bytes.Buffer
	once                sync.Once
	summary             fakeSummary
	checked             bool // the test looked at the summary itself
}

type fakeSummary struct {
	Errors   []string   `json:"errors"`
	Requests [][]string `json:"requests"` // environment, method, path?query
}

func needPython(t *testing.T) {
	t.Helper()
	err := exec.Command("python3", "-c", "import cryptography").Run()
	if err == nil {
		return
	}
	if os.Getenv("IAPVERIFY_REQUIRE_FAKE_API") != "" {
		t.Fatalf("python3 with the cryptography package is needed for the fake App Store Server API: %v", err)
	}
	t.Skipf("no python3 with the cryptography package (scripts/bootstrap installs it): %v", err)
}

func startFake(t *testing.T, scenario map[string]any) *fakeAPI {
	t.Helper()
	needPython(t)
	path := filepath.Join(t.TempDir(), "scenario.json")
	text, err := json.Marshal(scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fakeAPI{stderr: &bytes.Buffer{}}
	f.cmd = exec.Command("python3", "Tests/shared/fakeapple/serve.py", path)
	f.cmd.Dir = root
	f.cmd.Stderr = f.stderr
	if f.stdin, err = f.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.out = bufio.NewReader(stdout)
	line := make(chan string, 1)
	go func() {
		s, _ := f.out.ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		urls := strings.Fields(s)
		if len(urls) != 2 {
			_ = f.cmd.Process.Kill()
			_ = f.cmd.Wait()
			t.Fatalf("serve.py printed %q; stderr: %s", s, f.stderr)
		}
		f.production, f.sandbox = urls[0], urls[1]
	case <-time.After(30 * time.Second):
		_ = f.cmd.Process.Kill()
		_ = f.cmd.Wait()
		t.Fatalf("serve.py did not start; stderr: %s", f.stderr)
	}
	t.Cleanup(func() {
		s := f.finish(t)
		if !f.checked && len(s.Errors) > 0 {
			t.Errorf("the fake refused requests: %v", s.Errors)
		}
	})
	return f
}

// finish stops the fake (closing its stdin) and returns what it saw.
func (f *fakeAPI) finish(t *testing.T) fakeSummary {
	t.Helper()
	f.once.Do(func() {
		_ = f.stdin.Close()
		done := make(chan error, 1)
		go func() {
			s, _ := f.out.ReadString('\n')
			if err := json.Unmarshal([]byte(s), &f.summary); err != nil {
				done <- err
				return
			}
			done <- f.cmd.Wait()
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve.py: %v; stderr: %s", err, f.stderr)
			}
		case <-time.After(30 * time.Second):
			_ = f.cmd.Process.Kill()
			t.Errorf("serve.py did not stop; stderr: %s", f.stderr)
		}
	})
	return f.summary
}

// requests is what the fake received on one host, as "METHOD path?query".
func (s fakeSummary) requests(environment string) []string {
	var out []string
	for _, r := range s.Requests {
		if r[0] == environment {
			out = append(out, r[1]+" "+r[2])
		}
	}
	return out
}

func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, "Tests", "shared", "fakeapple", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(text, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func newSigner(t *testing.T, production, sandbox string, change map[string]any) *iapverify.Signer {
	t.Helper()
	config := fixture(t, "signer.json")
	config["test_base_url"] = map[string]any{"production": production, "sandbox": sandbox}
	for k, v := range change {
		config[k] = v
	}
	text, _ := json.Marshal(config)
	s, err := iapverify.NewSigner(text)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newVerifier(t *testing.T) *iapverify.Verifier {
	t.Helper()
	config := fixture(t, "verifier.json")
	config["products"] = map[string]any{coins: map[string]any{"type": "consumable"},
		pro: map[string]any{"type": "non_consumable", "entitlements": []string{"pro"}}}
	text, _ := json.Marshal(config)
	v, err := iapverify.NewVerifier(text)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// recorder notes every request the client sends, and the Authorization header it carried.
type recorder struct {
	mu     sync.Mutex
	sent   []string // METHOD URL
	tokens []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.sent = append(r.sent, req.Method+" "+req.URL.String())
	r.tokens = append(r.tokens, req.Header.Get("Authorization"))
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// clock is the test's time: Sleep records the wait and moves the clock on, at once.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func newClient(t *testing.T, s *iapverify.Signer) (*apiclient.Client, *recorder, *clock) {
	rec := &recorder{}
	clk := &clock{now: time.UnixMilli(nowMs)}
	return &apiclient.Client{Signer: s, Verifier: newVerifier(t), HTTPClient: &http.Client{Transport: rec},
		Now: clk.Now, Sleep: clk.Sleep, Timeout: time.Minute}, rec, clk
}

func actions(pages []*iapverify.APIResult) []iapverify.Action {
	var out []iapverify.Action
	for _, p := range pages {
		out = append(out, p.Action)
	}
	return out
}

func transactionIDs(ts []iapverify.Transaction) []string {
	var out []string
	for _, tr := range ts {
		out = append(out, tr.TransactionID)
	}
	sort.Strings(out)
	return out
}

func TestThreePageHistory(t *testing.T) {
	t.Parallel()
	// Five coin purchases and an unlock in one history: three pages of two at the fake.
	var history []any
	for i, id := range []string{"200000", "200001", "200002", "200003", "200004"} {
		history = append(history, purchase(id, coins, "200000", int64(i)))
	}
	history = append(history, purchase("300001", pro, "200000", 9))
	f := startFake(t, map[string]any{"transactions": map[string]any{"Production": history}})
	c, rec, clk := newClient(t, newSigner(t, f.production, f.sandbox, nil))

	res, err := c.Do(context.Background(), map[string]any{"endpoint": "transaction_history", "transaction_id": "200002"})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(res.Pages); !reflect.DeepEqual(got, []iapverify.Action{iapverify.ActionNextPage,
		iapverify.ActionNextPage, iapverify.ActionAccept}) {
		t.Fatalf("pages %v", got)
	}
	want := []string{"200000", "200001", "200002", "200003", "200004", "300001"}
	if got := transactionIDs(res.Transactions); !reflect.DeepEqual(got, want) {
		t.Fatalf("transactions %v, want %v", got, want)
	}
	if res.Environment != iapverify.EnvironmentProduction || res.Endpoint != "transaction_history" || res.Requests != 3 ||
		res.Revision() != "rev-6" || res.Last() != res.Pages[2] || len(clk.sleeps) != 0 {
		t.Fatalf("result %+v, revision %q, sleeps %v", res, res.Revision(), clk.sleeps)
	}
	var queries []string
	for _, s := range rec.sent {
		queries = append(queries, strings.SplitN(s, "?", 2)[1:]...)
	}
	if !reflect.DeepEqual(queries, []string{"revision=rev-2", "revision=rev-4"}) {
		t.Fatalf("sent %v", rec.sent)
	}
	// Each page's entitlements cover that page; the whole history's come from all of them.
	e, err := c.Verifier.ComputeEntitlements(res.EntitlementInput(), nowMs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := e.Entitlement("pro"); !e.Valid || p == nil || !p.Active || p.State != iapverify.StateOwned ||
		len(e.Delivery.ToDeliver) != 6 {
		t.Fatalf("entitlements over all pages: %s", e.JSON)
	}
	if p := res.Pages[0].Entitlement("pro"); p == nil || p.Active {
		t.Fatalf("the first page alone should not grant pro: %s", res.Pages[0].Raw)
	}
	if at, ok := res.Transactions[0].PurchasedAt(); !ok || at.UnixMilli() != *res.Transactions[0].PurchaseDateMs {
		t.Fatalf("PurchasedAt %v %v", at, ok)
	}
	s := f.finish(t)
	if got := s.requests("Production"); len(got) != 3 || len(s.requests("Sandbox")) != 0 {
		t.Fatalf("the fake got %v", s.Requests)
	}
}

func TestRetriesA429AtAppleRetryAfter(t *testing.T) {
	t.Parallel()
	retryAt := int64(nowMs + 7_000) // Apple's Retry-After: a UNIX time in milliseconds
	f := startFake(t, map[string]any{
		"transactions": map[string]any{"Production": []any{purchase("500001", coins, "500001", 0)}},
		"failures":     []any{map[string]any{"count": 1, "retry_after_ms": retryAt}},
	})
	c, rec, clk := newClient(t, newSigner(t, f.production, f.sandbox, nil))

	res, err := c.Do(context.Background(), `{"endpoint": "transaction_info", "transaction_id": "500001"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(clk.sleeps, []time.Duration{7 * time.Second}) {
		t.Fatalf("slept %v, want exactly 7s", clk.sleeps)
	}
	if res.Requests != 2 || len(res.Pages) != 1 || res.Last().Action != iapverify.ActionAccept ||
		transactionIDs(res.Transactions)[0] != "500001" {
		t.Fatalf("result %+v", res)
	}
	// A new request, with a token issued after the wait, for the second try.
	if len(rec.tokens) != 2 || rec.tokens[0] == rec.tokens[1] || rec.sent[0] != rec.sent[1] {
		t.Fatalf("sent %v", rec.sent)
	}
	if s := f.finish(t); len(s.requests("Production")) != 2 {
		t.Fatalf("the fake got %v", s.Requests)
	}
}

func TestFallsBackToSandboxOnce(t *testing.T) {
	t.Parallel()
	f := startFake(t, map[string]any{
		"transactions": map[string]any{"Sandbox": []any{purchase("700001", coins, "700001", 0)}},
	})
	c, _, _ := newClient(t, newSigner(t, f.production, f.sandbox, nil))

	call := map[string]any{"endpoint": "transaction_history", "environment": "Production", "transaction_id": "700001"}
	res, err := c.Do(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if res.Environment != iapverify.EnvironmentSandbox || res.Requests != 2 || len(res.Pages) != 1 ||
		!reflect.DeepEqual(transactionIDs(res.Transactions), []string{"700001"}) {
		t.Fatalf("result %+v", res)
	}
	// Known nowhere: production, then sandbox once, then stop. Never back to production.
	call["transaction_id"] = "799999"
	res, err = c.Do(context.Background(), call)
	var e *apiclient.Error
	if !errors.As(err, &e) || !errors.Is(err, apiclient.ErrReject) || errors.Is(err, apiclient.ErrGiveUp) ||
		e.Result.Environment != iapverify.EnvironmentSandbox || e.Result.Verdict != iapverify.VerdictRejectedByApple ||
		res.Requests != 2 || len(res.Pages) != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	s := f.finish(t)
	if got := s.requests("Production"); !reflect.DeepEqual(got, []string{
		"GET /inApps/v2/history/700001", "GET /inApps/v2/history/799999"}) {
		t.Fatalf("production got %v", got)
	}
	if got := s.requests("Sandbox"); !reflect.DeepEqual(got, []string{
		"GET /inApps/v2/history/700001", "GET /inApps/v2/history/799999"}) {
		t.Fatalf("sandbox got %v", got)
	}
}

func TestAdvancedCommerceCalls(t *testing.T) {
	t.Parallel()
	subscription := purchase("800001", pro, "800000", 0)
	subscription["type"], subscription["expiresDate"] = "Auto-Renewable Subscription", signedMs+30*86_400_000
	f := startFake(t, map[string]any{"transactions": map[string]any{"Production": []any{subscription}}})
	c, _, _ := newClient(t, newSigner(t, f.production, f.sandbox, nil))
	requestInfo := map[string]any{"requestReferenceId": "7E3FB20B-4CDB-47CC-936D-99D65F608138"}

	// Cancel: the changed transaction and its renewal info, verified, auto-renew now off.
	call := map[string]any{"endpoint": "advanced_commerce_cancel_subscription", "transaction_id": "800001",
		"body": map[string]any{"requestInfo": requestInfo, "storefront": "USA"}}
	res, err := c.Do(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(transactionIDs(res.Transactions), []string{"800001"}) || len(res.RenewalInfo) != 1 ||
		res.RenewalInfo[0].OriginalTransactionID != "800000" || res.RenewalInfo[0].AutoRenewStatus == nil ||
		*res.RenewalInfo[0].AutoRenewStatus || res.Pages[0].SignedItems != 2 {
		t.Fatalf("cancel: %s", res.Pages[0].Raw)
	}
	// A refund request answers with the transaction alone.
	call = map[string]any{"endpoint": "advanced_commerce_request_refund", "transaction_id": "800001",
		"body": map[string]any{"requestInfo": requestInfo, "refundRiskingPreference": true,
			"items": []any{map[string]any{"SKU": "news", "refundReason": "LEGAL", "refundType": "FULL", "revoke": true}}}}
	if res, err = c.Do(context.Background(), call); err != nil || len(res.Transactions) != 1 || len(res.RenewalInfo) != 0 {
		t.Fatalf("refund: %v %+v", err, res)
	}
	s := f.finish(t)
	if got := s.requests("Production"); !reflect.DeepEqual(got, []string{
		"POST /advancedCommerce/v1/subscription/cancel/800001", "POST /advancedCommerce/v1/transaction/requestRefund/800001"}) {
		t.Fatalf("production got %v", got)
	}
}

func TestNotificationHistoryPages(t *testing.T) {
	t.Parallel()
	notification := func(kind, uuid, id string, minute int64) map[string]any {
		tr := purchase(id, coins, id, minute)
		tr["bundleId"], tr["environment"] = "com.example.fake", "Production"
		return map[string]any{"type": kind, "uuid": uuid, "signed_date": signedMs + minute*60_000, "transaction": tr}
	}
	f := startFake(t, map[string]any{"notifications": map[string]any{"Production": []any{
		notification("ONE_TIME_CHARGE", "aaaaaaaa-0000-4000-8000-000000000001", "900001", 1),
		notification("ONE_TIME_CHARGE", "aaaaaaaa-0000-4000-8000-000000000002", "900002", 2),
		notification("SOMETHING_NEW", "aaaaaaaa-0000-4000-8000-000000000003", "900003", 3),
	}}})
	c, rec, _ := newClient(t, newSigner(t, f.production, f.sandbox, nil))

	res, err := c.Do(context.Background(), map[string]any{"endpoint": "notification_history",
		"body": map[string]any{"startDate": signedMs, "endDate": signedMs + 3_600_000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 2 || len(res.Notifications) != 3 || len(res.Transactions) != 3 {
		t.Fatalf("result %+v", res)
	}
	n := res.Notifications
	if n[0].NotificationType != iapverify.NotificationOneTimeCharge || n[0].Effect != iapverify.EffectOneTimePurchase ||
		n[2].NotificationType != "SOMETHING_NEW" || n[2].Effect != iapverify.EffectUnknown || n[2].NotificationSubtype() != "" {
		t.Fatalf("notifications %+v", n)
	}
	if at, ok := n[1].SignedAt(); !ok || !at.Equal(time.UnixMilli(signedMs+2*60_000)) {
		t.Fatalf("SignedAt %v %v", at, ok)
	}
	if len(rec.sent) != 2 || !strings.HasSuffix(rec.sent[1], "/inApps/v1/notifications/history?paginationToken=n-2") {
		t.Fatalf("sent %v", rec.sent)
	}
}

func TestWrongKeyIsFixConfiguration(t *testing.T) {
	t.Parallel()
	f := startFake(t, map[string]any{})
	c, _, clk := newClient(t, newSigner(t, f.production, f.sandbox, map[string]any{"key_id": "OTHERKEY12"}))

	res, err := c.Do(context.Background(), map[string]any{"endpoint": "transaction_info", "transaction_id": "1"})
	var e *apiclient.Error
	if !errors.Is(err, apiclient.ErrFixConfiguration) || !errors.As(err, &e) || e.Result.HTTPStatus != 401 ||
		e.Attempt != 1 || res.Requests != 1 || len(clk.sleeps) != 0 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	f.checked = true
	if s := f.finish(t); len(s.Errors) != 1 || !strings.Contains(s.Errors[0], "bad token header") {
		t.Fatalf("the fake saw %v", s.Errors)
	}
}

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

func TestUnreachableIsA503(t *testing.T) {
	down := closedURL(t)
	c, rec, clk := newClient(t, newSigner(t, down, down, nil))

	res, err := c.Do(context.Background(), map[string]any{"endpoint": "transaction_info", "transaction_id": "1"})
	var e *apiclient.Error
	if !errors.Is(err, apiclient.ErrGiveUp) || !errors.As(err, &e) || e.Err == nil || e.Attempt != 5 ||
		e.Result.HTTPStatus != 503 || e.Result.Verdict != iapverify.VerdictTemporarilyUnavailable {
		t.Fatalf("err %v", err)
	}
	// The library's back-off for attempts 1-4, then give_up at attempt 5.
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !reflect.DeepEqual(clk.sleeps, want) ||
		res.Requests != 5 || len(rec.sent) != 5 {
		t.Fatalf("slept %v, sent %d", clk.sleeps, len(rec.sent))
	}
}

func TestDeadlineCoversTheWaits(t *testing.T) {
	down := closedURL(t)
	c, _, _ := newClient(t, newSigner(t, down, down, nil))
	c.Sleep, c.Timeout = nil, 200*time.Millisecond // a real wait: the first back-off is 1 s

	start := time.Now()
	_, err := c.Do(context.Background(), map[string]any{"endpoint": "transaction_info", "transaction_id": "1"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Timeout = 0
	if _, err := c.Do(ctx, map[string]any{"endpoint": "transaction_info", "transaction_id": "1"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	c, _, _ := newClient(t, newSigner(t, srv.URL, srv.URL, nil))
	c.HTTPClient = nil // http.DefaultClient would follow it; the client must not

	_, err := c.Do(context.Background(), map[string]any{"endpoint": "transaction_info", "transaction_id": "1"})
	var e *apiclient.Error
	if !errors.Is(err, apiclient.ErrReject) || !errors.As(err, &e) || e.Result.HTTPStatus != http.StatusFound || hits != 1 {
		t.Fatalf("err %v, %d requests", err, hits)
	}
}

func TestBadCalls(t *testing.T) {
	down := closedURL(t)
	c, rec, _ := newClient(t, newSigner(t, down, down, nil))
	for _, call := range []any{nil, "[1]", `{"endpoint": "transaction_lottery"}`,
		map[string]any{"endpoint": "transaction_info", "transaction_id": "a/../b"}} {
		if _, err := c.Do(context.Background(), call); !errors.Is(err, iapverify.ErrInvalidArgument) {
			t.Errorf("%v: want ErrInvalidArgument, got %v", call, err)
		}
	}
	if _, err := (&apiclient.Client{}).Do(context.Background(), "{}"); !errors.Is(err, iapverify.ErrInvalidArgument) {
		t.Errorf("no signer: %v", err)
	}
	if len(rec.sent) != 0 {
		t.Fatalf("sent %v", rec.sent)
	}
}
