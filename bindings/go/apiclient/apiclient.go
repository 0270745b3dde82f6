// Package apiclient sends App Store Server API calls with net/http and follows what the library
// says about each answer: it is the loop of docs/server-api.md ("The whole loop") for Go.
//
// A Client builds each request with iapverify.Signer.NewRequest (a fresh bearer token every
// time), sends it as built, without following redirects, and hands the answer to
// iapverify.Verifier.InterpretAPIResponse. Then it does what the result's Action says:
//
//   - accept: stop; Do returns the pages it collected.
//   - next_page: keep the page and send the call again with APIResult.NextPage's token.
//   - retry_later: wait RetryAfterMs (Client.Sleep, which honours ctx), then send the same call
//     again with attempt + 1. The library says give_up from attempt 5 on.
//   - retry_sandbox: send the call to the sandbox host, once; never back to production.
//   - give_up, fix_configuration, reject (or an action this package does not know): stop with an
//     *Error that carries the last result.
//
// When Apple cannot be reached (a connection error, a client timeout, a body cut short), the
// library is told it answered HTTP 503 with no body, so the usual back-off and give_up apply.
package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	iapverify "github.com/iapverify/iapverify/bindings/go"
)

// Client follows App Store Server API calls to their end. Signer and Verifier are required; the
// other fields are optional. A Client is safe for concurrent use if its fields are not changed.
type Client struct {
	Signer   *iapverify.Signer
	Verifier *iapverify.Verifier

	// HTTPClient sends the requests; nil means http.DefaultClient. Its CheckRedirect is replaced:
	// redirects are never followed (a 3xx goes to the library, which rejects it).
	HTTPClient *http.Client
	// Timeout, when above 0, bounds each Do as a whole: every page, retry and wait.
	Timeout time.Duration
	// Now is the clock for the tokens and the answers; nil means time.Now.
	Now func() time.Time
	// Sleep waits d, or until ctx ends and then returns ctx.Err(); nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error

	// OCSPResponses and Extra go with every answer, as in iapverify.APIResponseOptions
	// (OCSP answers for the signing certificates; delivered_transaction_ids, orders, renewal_info).
	OCSPResponses [][]byte
	Extra         map[string]any
}

// Result is what Do collected from the accepted answers of one call.
type Result struct {
	Endpoint    string                      // the call's endpoint
	Environment iapverify.ServerEnvironment // the host that answered: Production or Sandbox
	// Deprecations are the old spellings the call used (a lower-case "environment"), as the
	// answers' Deprecations say, once each.
	Deprecations []string
	// Transactions, RenewalInfo and Notifications are every page's, in order. Each page's own
	// Entitlements cover that page only; compute them over all pages with EntitlementInput.
	Transactions  []iapverify.Transaction
	RenewalInfo   []iapverify.RenewalInfo
	Notifications []iapverify.APINotification
	// Pages are the accepted answers in order: next_page ones, then the accepting one.
	Pages []*iapverify.APIResult
	// Requests counts the HTTP requests sent, retries and the sandbox one included.
	Requests int

	rawTransactions []json.RawMessage
	rawRenewals     []json.RawMessage
}

// Last is the accepting answer (the last page); nil when there is none.
func (r *Result) Last() *iapverify.APIResult {
	if r == nil || len(r.Pages) == 0 {
		return nil
	}
	return r.Pages[len(r.Pages)-1]
}

// Revision is the last page's "revision" (unsigned data): store it and pass it as the call's
// revision next time to get only what changed. "" when the answer had none.
func (r *Result) Revision() string {
	last := r.Last()
	if last == nil || len(last.Unsigned) == 0 {
		return ""
	}
	var u struct {
		Revision string `json:"revision"`
	}
	_ = json.Unmarshal(last.Unsigned, &u)
	return u.Revision
}

// EntitlementInput is {"transactions": [...], "renewal_info": [...]} with every page's items as
// the library wrote them, for Verifier.ComputeEntitlements: the entitlements of the whole history.
func (r *Result) EntitlementInput() []byte {
	input := struct {
		Transactions []json.RawMessage `json:"transactions"`
		RenewalInfo  []json.RawMessage `json:"renewal_info"`
	}{append([]json.RawMessage{}, r.rawTransactions...), append([]json.RawMessage{}, r.rawRenewals...)}
	text, _ := json.Marshal(input) // raw JSON from the library: cannot fail
	return text
}

func (r *Result) add(page *iapverify.APIResult) {
	r.Pages = append(r.Pages, page)
	r.Transactions = append(r.Transactions, page.Transactions...)
	r.RenewalInfo = append(r.RenewalInfo, page.RenewalInfo...)
	r.Notifications = append(r.Notifications, page.Notifications...)
	var raw struct {
		Transactions []json.RawMessage `json:"transactions"`
		RenewalInfo  []json.RawMessage `json:"renewal_info"`
	}
	_ = json.Unmarshal(page.Raw, &raw) // Raw is the library's result document
	r.rawTransactions = append(r.rawTransactions, raw.Transactions...)
	r.rawRenewals = append(r.rawRenewals, raw.RenewalInfo...)
}

// Error is a call that ended without an accepting answer: Action is give_up, fix_configuration,
// reject, or one this package does not follow. Result is the answer that decided it.
type Error struct {
	Action  iapverify.Action
	Result  *iapverify.APIResult
	Attempt int // the attempt of that answer (1 for the first try of a page or host)
	// Err is why Apple could not be reached when the deciding answer was the 503 that stands for
	// it (errors.Is and errors.As see it); nil otherwise.
	Err error

	detail string
}

// Sentinels for errors.Is: an *Error matches the one with its Action.
var (
	ErrGiveUp           = &Error{Action: iapverify.ActionGiveUp}
	ErrFixConfiguration = &Error{Action: iapverify.ActionFixConfiguration}
	ErrReject           = &Error{Action: iapverify.ActionReject}
)

func (e *Error) Error() string {
	msg := "apiclient: " + string(e.Action)
	if e.Result != nil {
		msg = fmt.Sprintf("apiclient: %s on %s, attempt %d: %s (%s): %s", e.Result.Endpoint, e.Result.Environment,
			e.Attempt, e.Action, e.Result.Verdict, e.Result.Reason)
	}
	if e.detail != "" {
		msg += ": " + e.detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is matches the sentinel with the same Action (ErrGiveUp, ErrFixConfiguration, ErrReject).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Result == nil && t.Err == nil && t.Action == e.Action
}

func (e *Error) Unwrap() error { return e.Err }

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func invalid(msg string) error {
	return &iapverify.Error{Code: -1, Name: "IAPV_E_INVALID_ARGUMENT", Message: msg}
}

// callObject reads a call as NewRequest does: JSON text or a value encoding/json marshals.
func callObject(call any) (map[string]json.RawMessage, error) {
	var text []byte
	switch c := call.(type) {
	case []byte:
		text = c
	case json.RawMessage:
		text = c
	case string:
		text = []byte(c)
	case nil:
		return nil, invalid("the call is nil; pass {\"endpoint\": ...}")
	default:
		var err error
		if text, err = json.Marshal(c); err != nil {
			return nil, invalid("the call cannot be encoded as JSON: " + err.Error())
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(text, &m); err != nil || m == nil {
		return nil, invalid("the call is not a JSON object")
	}
	return m, nil
}

func member(m map[string]json.RawMessage, key, fallback string) string {
	var s string
	if raw, ok := m[key]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	return fallback
}

func withMember(m map[string]json.RawMessage, key string, value any) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	text, _ := json.Marshal(value)
	out[key] = text
	return out
}

// Do sends call ({"endpoint": ..., "environment": ..., ids, "query", "body"}; JSON text or any
// value encoding/json marshals to such an object, as Signer.NewRequest takes it) and follows the
// answers until one accepts. It returns the collected pages, or an error:
//
//   - an *Error (matching ErrGiveUp, ErrFixConfiguration or ErrReject) when an answer says stop;
//   - ctx's error (errors.Is(err, context.DeadlineExceeded), ...) when ctx or Timeout ended first;
//   - an *iapverify.Error for a call the library refuses (ErrInvalidArgument) or an answer too
//     large to read (ErrTooLarge).
//
// With an error, the Result still holds the pages accepted before it (and Requests).
func (c *Client) Do(ctx context.Context, call any) (*Result, error) {
	if c.Signer == nil || c.Verifier == nil {
		return nil, invalid("apiclient.Client needs a Signer and a Verifier")
	}
	original, err := callObject(call)
	if err != nil {
		return nil, err
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	now, wait := c.Now, c.Sleep
	if now == nil {
		now = time.Now
	}
	if wait == nil {
		wait = sleep
	}
	hc := c.httpClient()

	cur := original
	endpoint := member(original, "endpoint", "")
	// As written (the library notes an old spelling in each answer's Deprecations), and as the
	// host it names.
	written := member(original, "environment", string(iapverify.EnvironmentProduction))
	environment := serverEnvironment(written)
	res := &Result{Endpoint: endpoint, Environment: environment}
	seen := map[string]bool{} // paging tokens already sent: a repeated one would loop
	sandboxTried := environment == iapverify.EnvironmentSandbox
	attempt := 1
	for {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("apiclient: %s on %s: %w", endpoint, environment, err)
		}
		req, err := c.Signer.NewRequest(ctx, cur, now())
		if err != nil {
			return res, err
		}
		res.Requests++
		status, retryAfter, body, unreachable, err := send(ctx, hc, req)
		if err != nil && err == ctx.Err() {
			return res, fmt.Errorf("apiclient: %s on %s: %w", endpoint, environment, err)
		} else if err != nil {
			return res, err
		}
		r, err := c.Verifier.InterpretAPIResponse(body, iapverify.APIResponseOptions{
			Endpoint: endpoint, Environment: iapverify.ServerEnvironment(written), HTTPStatus: status, RetryAfter: retryAfter,
			Attempt: attempt, OCSPResponses: c.OCSPResponses, Extra: c.Extra,
		}, now())
		if err != nil {
			return res, err
		}
		res.note(r.Deprecations)
		stop := func(detail string) (*Result, error) {
			return res, &Error{Action: r.Action, Result: r, Attempt: attempt, Err: unreachable, detail: detail}
		}
		switch r.Action {
		case iapverify.ActionAccept:
			res.add(r)
			return res, nil
		case iapverify.ActionNextPage:
			var key, token string
			switch {
			case r.NextPage != nil && r.NextPage.Revision != "":
				key, token = "revision", r.NextPage.Revision
			case r.NextPage != nil && r.NextPage.PaginationToken != "":
				key, token = "pagination_token", r.NextPage.PaginationToken
			default:
				return stop("next_page without a paging token")
			}
			if seen[key+"\x00"+token] {
				return stop("Apple sent the paging token " + strconv.Quote(token) + " twice")
			}
			seen[key+"\x00"+token] = true
			res.add(r)
			cur = withMember(cur, key, token)
			if key == "revision" {
				delete(cur, "pagination_token")
			} else {
				delete(cur, "revision")
			}
			attempt = 1
		case iapverify.ActionRetryLater:
			if err := wait(ctx, r.RetryAfter()); err != nil {
				return res, fmt.Errorf("apiclient: %s on %s, waiting to retry: %w", endpoint, environment, err)
			}
			attempt++
		case iapverify.ActionRetrySandbox:
			if sandboxTried {
				return stop("already asked the sandbox host")
			}
			// Ask the sandbox host the original call: a production paging token means nothing there.
			sandboxTried, environment, written, attempt = true, iapverify.EnvironmentSandbox, string(iapverify.EnvironmentSandbox), 1
			cur = withMember(original, "environment", written)
			*res = Result{Endpoint: endpoint, Environment: environment, Requests: res.Requests, Deprecations: res.Deprecations}
			seen = map[string]bool{}
		default: // give_up, fix_configuration, reject, and any action newer than this package
			return stop("")
		}
	}
}

// serverEnvironment is the host a call's "environment" names, in any case ("sandbox" is
// Sandbox); anything else is kept for the library to refuse.
func serverEnvironment(written string) iapverify.ServerEnvironment {
	for _, e := range []iapverify.ServerEnvironment{iapverify.EnvironmentProduction, iapverify.EnvironmentSandbox} {
		if strings.EqualFold(written, string(e)) {
			return e
		}
	}
	return iapverify.ServerEnvironment(written)
}

// note keeps each deprecation once.
func (r *Result) note(deprecations []string) {
next:
	for _, d := range deprecations {
		for _, have := range r.Deprecations {
			if have == d {
				continue next
			}
		}
		r.Deprecations = append(r.Deprecations, d)
	}
}

func (c *Client) httpClient() *http.Client {
	base := c.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	hc := *base
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

// send sends req. Apple unreachable (no answer, or a body cut short) is HTTP 503 with no body,
// and the transport error is returned as unreachable; err is only ctx's end or a body too large.
func send(ctx context.Context, hc *http.Client, req *http.Request) (status int, retryAfter string, body []byte,
	unreachable error, err error) {
	resp, err := hc.Do(req)
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, iapverify.MaxAPIResponseBytes+1))
		resp.Body.Close()
		if err == nil {
			if int64(len(body)) > iapverify.MaxAPIResponseBytes {
				return 0, "", nil, nil, &iapverify.Error{Code: -3, Name: "IAPV_E_TOO_LARGE",
					Message: "the API answer is over " + strconv.FormatInt(iapverify.MaxAPIResponseBytes, 10) +
						" bytes (iapverify.MaxAPIResponseBytes)"}
			}
			return resp.StatusCode, resp.Header.Get("Retry-After"), body, nil, nil
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return 0, "", nil, nil, ctxErr
	}
	return http.StatusServiceUnavailable, "", nil, err, nil
}
