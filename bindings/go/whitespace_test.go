package iapverify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The core's one whitespace rule for a compact JWS (docs/storekit2.md): whitespace around the
// token is not part of it, from Go as from C, the CLI, Python and Lua; inside it, malformed.
func TestJWSWhitespaceRuleIsTheCores(t *testing.T) {
	v, err := NewVerifier([]byte(`{"bundle_id":"*","environments":["Sandbox"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	raw, _ := os.ReadFile(filepath.Join(root, "Tests", "IAPVerifyTests", "Fixtures", "jws", "transaction_autorenew_sandbox_2022-11.jws"))
	token := strings.TrimSpace(string(raw))
	for _, wrapped := range []string{token + "\n", " \t" + token + "\r\n"} {
		r, err := v.VerifyJWS([]byte(wrapped), 1893456000000, nil)
		if err != nil || !r.Valid {
			t.Fatalf("%q: %+v %v", wrapped[len(wrapped)-2:], r, err)
		}
	}
	dot := strings.Index(token, ".")
	r, err := v.VerifyJWS([]byte(token[:dot+1]+"\n"+token[dot+1:]), 1893456000000, nil)
	if err != nil || r.Verdict != "malformed" {
		t.Fatalf("whitespace inside: %+v %v", r, err)
	}
}
