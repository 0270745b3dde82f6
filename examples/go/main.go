// A small receipt service in Go: verify a receipt file and print its entitlements, or serve
// POST /verify over net/http.
//
//	go run . -config config.json receipt.der          # print the entitlements
//	go run . -config config.json -serve 127.0.0.1:8080  # POST a receipt to /verify
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	iapverify "github.com/iapverify/iapverify/bindings/go"
)

func main() {
	configPath := flag.String("config", "", "verifier config JSON file (required)")
	now := flag.Int64("now", 0, "the time in Unix ms (default: this host's clock)")
	serve := flag.String("serve", "", "serve POST /verify on this address instead")
	flag.Parse()
	if *configPath == "" || (*serve == "" && flag.NArg() != 1) {
		fmt.Fprintln(os.Stderr, "usage: example -config config.json (RECEIPT | -serve ADDR)")
		os.Exit(2)
	}
	config, err := os.ReadFile(*configPath)
	if err != nil {
		log.Fatal(err)
	}
	v, err := iapverify.NewVerifier(config)
	if errors.Is(err, iapverify.ErrConfig) {
		log.Fatalf("fix the config: %v", err)
	} else if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	clock := func() int64 {
		if *now != 0 {
			return *now
		}
		return time.Now().UnixMilli()
	}

	if *serve != "" {
		http.HandleFunc("/verify", func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			if err != nil || r.Method != http.MethodPost {
				http.Error(w, `{"error":"POST the receipt"}`, http.StatusBadRequest)
				return
			}
			res, err := v.VerifyReceipt(body, clock(), nil)
			if err != nil {
				http.Error(w, fmt.Sprintf(`{"error":%q}`, err.Error()), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			if !res.Valid {
				w.WriteHeader(http.StatusForbidden)
			}
			_ = json.NewEncoder(w).Encode(map[string]interface{}{"verdict": res.Verdict, "entitlements": res.Entitlements})
		})
		log.Printf("listening on %s", *serve)
		log.Fatal(http.ListenAndServe(*serve, nil))
	}

	receipt, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	res, err := v.VerifyReceipt(receipt, clock(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("verdict: %s (%s)\n", res.Verdict, res.Reason)
	for _, e := range res.Entitlements {
		expires := "-"
		if e.ExpiresDateMs != nil {
			expires = time.UnixMilli(*e.ExpiresDateMs).UTC().Format(time.RFC3339)
		}
		fmt.Printf("  %-40s active=%-5v state=%-14s expires=%s\n", e.ID, e.Active, e.State, expires)
	}
	if !res.Valid {
		os.Exit(1)
	}
}
