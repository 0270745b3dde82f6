// The host's side of the Go snippets in README.md and docs/*.md: the names they use without
// defining them (a verifier, a signer, the bytes a client sent, your store). Tests/docs/run_examples.py
// builds every snippet, each wrapped in a function, in one module with this file; nothing is run.
package main

import (
	"context"
	"time"

	iapverify "github.com/iapverify/iapverify/bindings/go"
)

var (
	v, verifier  *iapverify.Verifier
	signer       *iapverify.Signer
	r            *iapverify.Result
	api          *iapverify.APIResult
	ctx          = context.Background()
	configJSON   = []byte(`{"bundle_id": "com.example.app"}`)
	p8ConfigJSON []byte
	receipt      []byte
	token        []byte
	cached       [][]byte
	tid, nonce   string
)

func grant(e *iapverify.Entitlement) {}
func store(values ...any)            {}
func retryIn(d time.Duration)        {}
func remind(t time.Time)             {}
func queueForLater(id string) error  { return nil }

func main() {}
