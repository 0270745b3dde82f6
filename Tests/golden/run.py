#!/usr/bin/env python3
"""The byte-for-byte behaviour guard: every fixture of the repository through every entry point
that reads it, with the config and options it needs, at fixed clocks, through the release library
(build/lib/libiapverify.so.1) and the release CLI (build/bin/iapverify). Each answer (the exact
result JSON, or the status and its message; for the CLI the exit code, stdout and stderr) is kept in
Tests/golden/outputs.jsonl, one case a line.

    python3 Tests/golden/run.py --check    compare the build with the file; print the first differences
    python3 Tests/golden/run.py --update   rewrite the file from the build

A refactoring must leave the file unchanged. A change of behaviour updates it in the same commit,
so the diff shows every answer it changed. ECDSA signatures are randomised, so the signature part
of what the signer makes is masked; everything else is compared as it is."""

import argparse
import base64
import ctypes
import difflib
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FX = "Tests/IAPVerifyTests/Fixtures"
OUTPUTS = "Tests/golden/outputs.jsonl"

# Fixed clocks: 2030-01-01, and 2020-09-13 (while most real receipts' subscriptions ran).
JAN2030 = 1893456000000
SEP2020 = 1600000000000


def text(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def data(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def files(pattern):
    """Repository-relative paths, sorted, so the case order never depends on the file system."""
    return sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pattern)))


def short(path):
    return path[len(FX) + 1:] if path.startswith(FX + "/") else path


# ---- the library -----------------------------------------------------------------------------

class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("reserved", ctypes.c_uint32), ("message", ctypes.c_char * 248)]


class Library:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        p, sz, i64, out, err = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(Error)
        for name, args in {
            "iapv_verifier_new": [ctypes.c_char_p, sz, out, err],
            "iapv_signer_new": [ctypes.c_char_p, sz, out, err],
            "iapv_verify_receipt": [p, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, out, err],
            "iapv_interpret_response": [p, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, out, err],
            "iapv_compute_entitlements": [p, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, out, err],
            "iapv_verify_jws": [p, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, out, err],
            "iapv_interpret_api_response": [p, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, out, err],
            "iapv_read_transaction_receipt": [ctypes.c_char_p, sz, out, err],
            "iapv_api_token": [p, i64, out, err],
            "iapv_api_request": [p, ctypes.c_char_p, sz, i64, out, err],
            "iapv_sign": [p, ctypes.c_char_p, sz, i64, out, err],
        }.items():
            f = getattr(lib, name)
            f.argtypes, f.restype = args, ctypes.c_int32
        lib.iapv_status_name.argtypes, lib.iapv_status_name.restype = [ctypes.c_int32], ctypes.c_char_p
        lib.iapv_result_json.argtypes, lib.iapv_result_json.restype = [p, ctypes.POINTER(sz)], ctypes.c_void_p
        lib.iapv_result_free.argtypes, lib.iapv_result_free.restype = [p], None
        lib.iapv_verifier_free.argtypes = lib.iapv_signer_free.argtypes = [p]
        self.lib = lib
        self.verifiers = {}
        self.signers = {}

    def failure(self, status, err):
        return "%s: %s" % (self.lib.iapv_status_name(status).decode(), err.message.decode("utf-8", "replace"))

    def handle(self, kind, config):
        """A verifier or signer per distinct config, built once; its status text if refused."""
        cache = self.verifiers if kind == "verifier" else self.signers
        if config not in cache:
            h, err = ctypes.c_void_p(), Error()
            status = getattr(self.lib, "iapv_%s_new" % kind)(config, len(config), ctypes.byref(h), ctypes.byref(err))
            cache[config] = h if status == 0 else self.failure(status, err)
        return cache[config]

    def answer(self, call, *args):
        r, err = ctypes.c_void_p(), Error()
        status = getattr(self.lib, call)(*args, ctypes.byref(r), ctypes.byref(err))
        if status != 0:
            return self.failure(status, err)
        n = ctypes.c_size_t()
        out = ctypes.string_at(self.lib.iapv_result_json(r, ctypes.byref(n)), n.value).decode("utf-8")
        self.lib.iapv_result_free(r)
        return "IAPV_OK\n" + out

    def run(self, case):
        entry = case["entry"]
        if entry == "config":
            h = self.handle("verifier", case["config"])
            return "IAPV_OK" if isinstance(h, ctypes.c_void_p) else h
        if entry == "transaction_receipt":
            return self.answer("iapv_read_transaction_receipt", case["input"], len(case["input"]))
        kind = "signer" if entry in ("api_token", "api_request", "sign") else "verifier"
        h = self.handle(kind, case["config"])
        if not isinstance(h, ctypes.c_void_p):
            return h
        if entry == "api_token":
            return self.answer("iapv_api_token", h, case["now"])
        if entry in ("api_request", "sign"):
            return self.answer("iapv_" + entry, h, case["input"], len(case["input"]), case["now"])
        opts = case.get("options")
        call = {"receipt": "iapv_verify_receipt", "response": "iapv_interpret_response",
                "entitlements": "iapv_compute_entitlements", "jws": "iapv_verify_jws",
                "api_response": "iapv_interpret_api_response"}[entry]
        return self.answer(call, h, case["input"], len(case["input"]), opts, len(opts or b""), case["now"])


# ---- the cases -------------------------------------------------------------------------------

def cfg(obj):
    return json.dumps(obj, sort_keys=True).encode()


def opt(obj):
    return None if obj is None else json.dumps(obj, sort_keys=True).encode()


def library_cases():
    apple_any = {"bundle_id": "*", "environments": ["Production", "Sandbox"]}
    apple_default = {"bundle_id": "*"}
    fake_pki_root = text(FX + "/fakepki/root.pem")
    jws_fake_root = text(FX + "/jwsfake/root.pem")
    store_kit = text(FX + "/xcode/StoreKitTestCertificate.pem")
    xcode_jws = text(FX + "/xcode/jws/StoreKitTestingInXcode_ES256_2023-10-19.pem")
    mock_ca = text(FX + "/jws/apple_library_mock/testCA.pem")
    fakeapple = json.loads(text("Tests/shared/fakeapple/verifier.json"))
    pro = {"type": "auto_renewable", "group": "pro", "entitlements": ["pro"]}
    jws_verifiers = {
        "apple": apple_any,
        "apple_default": apple_default,
        "fake": {"bundle_id": "com.example.fake", "environments": ["Sandbox"],
                 "trust": {"roots_pem": [jws_fake_root], "include_apple_roots": False},
                 "products": {"pro.monthly": pro, "pro.basic": pro}},
        "mock": {"bundle_id": "com.example", "environments": ["Sandbox"],
                 "trust": {"roots_pem": [mock_ca], "include_apple_roots": False}},
        "xcode": {"bundle_id": "*", "environments": ["Xcode"], "xcode": {"accept": True, "roots_pem": [xcode_jws]}},
        "fakeapple": fakeapple,
    }
    cases = []

    def add(cid, entry, config=None, data_=b"", options=None, now=JAN2030):
        cases.append({"id": cid, "entry": entry, "config": config, "input": data_, "options": options, "now": now})

    receipts = files(FX + "/receipts/*.der") + files(FX + "/xcode/*.der")
    hostile = json.loads(text(FX + "/hostile/cases.json"))["cases"]
    hostile_receipts = [FX + "/hostile/" + c["file"] for c in hostile if c["entry"] == "receipt"]
    fakepki = json.loads(text(FX + "/fakepki/cases.json"))

    # Receipts, real and Xcode: any app in both environments, the library's defaults, Xcode.
    for path in receipts:
        b = data(path)
        for now in (SEP2020, JAN2030):
            add("receipt/apple_any/%d/%s" % (now, short(path)), "receipt", cfg(apple_any), b, None, now)
        add("receipt/apple_default/%s" % short(path), "receipt", cfg(apple_default), b)
        add("receipt/xcode/%s" % short(path), "receipt",
            cfg({"bundle_id": "*", "environments": ["Xcode"], "xcode": {"accept": True, "roots_pem": [store_kit]}}), b)
    # The fake PKI, each case with its own config, options and clock, and under Apple's roots.
    for c in fakepki["cases"]:
        config = {"bundle_id": fakepki["bundle_id"], "trust": {"roots_pem": [fake_pki_root], "include_apple_roots": False}}
        for k, v in c["config"].items():
            if k == "trust":
                roots = [text(FX + "/fakepki/" + r[1:]) if r.startswith("@") else r for r in v.get("roots_pem", [])]
                config[k] = dict(v, roots_pem=roots)
            else:
                config[k] = v
        b = data(FX + "/fakepki/" + c["file"])
        add("receipt/fakepki/%s" % c["file"], "receipt", cfg(config), b, opt(c["options"] or None), c["now_ms"])
        add("receipt/apple_any/%s" % c["file"], "receipt", cfg(apple_any), b)
    # The hostile corpus, by its entry point.
    responses = {"bundle_id": "com.example.fake"}
    for c in hostile:
        path, b = FX + "/hostile/" + c["file"], data(FX + "/hostile/" + c["file"])
        e = c["entry"]
        if e == "receipt":
            add("receipt/hostile/%s" % c["file"], "receipt", cfg(apple_any), b)
        elif e in ("response", "entitlements"):
            add("%s/hostile/%s" % (e, c["file"]), e, cfg(responses), b, None, 3000)
        elif e == "config":
            add("config/hostile/%s" % c["file"], "config", b)
        elif e == "options":
            for entry, sample in (("receipt", receipts[0]), ("response", FX + "/hostile/j_good.json"),
                                  ("entitlements", FX + "/hostile/e_good.json"),
                                  ("jws", FX + "/jwsfake/valid_transaction.jws"),
                                  ("api_response", "Benchmarks/api/transaction_history_20.json")):
                add("options/%s/%s" % (entry, c["file"]), entry, cfg(apple_any), data(sample), b)
    # iOS 6 transaction receipts, and every receipt-shaped input read as one.
    for path in ["Tests/shared/transaction_receipt_ios6.b64"] + receipts + hostile_receipts[:20]:
        add("transaction_receipt/%s" % short(path), "transaction_receipt", None, data(path))
    # /verifyReceipt bodies: as Production and as Sandbox answers, for any app and for one.
    for path in files(FX + "/verifyreceipt/*.json"):
        b = data(path)
        for env in ("Production", "Sandbox"):
            add("response/apple_any/%s/%s" % (env, short(path)), "response", cfg(apple_any), b,
                opt({"environment": env}), SEP2020)
        add("response/fake/%s" % short(path), "response", cfg(responses), b, None, JAN2030)
    # StoreKit 2 JWS under every trust set, at the fixed clock.
    jws_files = files(FX + "/jws/*.jws") + files(FX + "/jws/apple_library_mock/*.jws") + \
        files(FX + "/jwsfake/*.jws") + files(FX + "/xcode/jws/*.jws") + ["Tests/shared/fakeapple/ocsp/transaction.jws"]
    for path in jws_files:
        b = data(path)
        for name, config in jws_verifiers.items():
            add("jws/%s/%s" % (name, short(path)), "jws", cfg(config), b)
    # The fake notification scenarios at their own clocks, with the previous signed date held.
    jf = json.loads(text(FX + "/jwsfake/cases.json"))
    last = None
    for s in jf["scenario"]:
        options = {"last_signed_date_ms": last} if last is not None else None
        add("jws/scenario/%s" % s["file"], "jws", cfg(jws_verifiers["fake"]), data(FX + "/jwsfake/" + s["file"]),
            opt(options), s["now_ms"])
        last = s["signed_date_ms"]
    for s in jf["singles"]:
        add("jws/single/%s" % s["file"], "jws", cfg(jws_verifiers["fake"]), data(FX + "/jwsfake/" + s["file"]), None, s["now_ms"])
    # OCSP answers for the fake Apple chain's leaf, under both revocation policies.
    token = data("Tests/shared/fakeapple/ocsp/transaction.jws").strip()
    for policy in ("off", "required"):
        config = cfg({"bundle_id": "com.example.fake", "revocation": policy,
                      "trust": {"include_apple_roots": False, "roots_pem": [text("Tests/shared/fakeapple/ocsp/root.pem")]}})
        add("jws/ocsp/%s/none" % policy, "jws", config, token, None, 1767229200000)
        for path in files("Tests/shared/fakeapple/ocsp/*.der") + ["Tests/shared/fakeapple/ocsp/leaf.pem"]:
            answer = base64.b64encode(data(path)).decode()
            add("jws/ocsp/%s/%s" % (policy, os.path.basename(path)), "jws", config, token,
                opt({"ocsp_responses": [answer]}), 1767229200000)
    # The cases every binding shares.
    for c in json.loads(text("Tests/shared/expectations.json"))["cases"]:
        add("shared/%s" % c["name"], c["kind"], cfg(c["config"]), data(FX + "/" + c["input"]), opt(c["options"] or None), c["now_ms"])
    # The manual's example configs and entitlement input.
    for path in files("docs/examples/*config*.json"):
        b = data(FX + "/receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der")
        add("receipt/docs/%s" % os.path.basename(path), "receipt", data(path), b, None, SEP2020)
    add("entitlements/docs/entitlement-input.json", "entitlements", data("docs/examples/catalog-config.json"),
        data("docs/examples/entitlement-input.json"), data("docs/examples/options.json"), 1700600000000)
    add("entitlements/docs/entitlement-input.json/any", "entitlements", cfg(apple_any),
        data("docs/examples/entitlement-input.json"), None, 1700600000000)
    # App Store Server API answers: every endpoint that returns signed items, and error statuses.
    for path in files("Benchmarks/api/*.json"):
        b = data(path)
        for status in (200, 401, 404, 429, 500):
            add("api_response/%d/%s" % (status, os.path.basename(path)), "api_response", cfg(fakeapple), b,
                opt({"endpoint": "transaction_history", "http_status": status, "retry_after": "30"}), 1700000000000)
        add("api_response/apple_any/%s" % os.path.basename(path), "api_response", cfg(apple_any), b,
            opt({"endpoint": "transaction_history", "http_status": 200}), 1700000000000)
    # The signer: token, requests and signatures (signatures masked).
    signer = data("Tests/shared/fakeapple/signer.json")
    add("api_token/fakeapple", "api_token", signer, now=1700000000123)
    nonce = "0F6E6A3C-1C2B-4D7A-9E8F-123456789ABC"
    for name, call in [
        ("transaction_info", {"endpoint": "transaction_info", "transaction_id": "2000000123"}),
        ("transaction_history", {"endpoint": "transaction_history", "transaction_id": "2000000123", "revision": "rev-1",
                                 "environment": "Sandbox", "query": {"sort": "DESCENDING", "productType": ["AUTO_RENEWABLE"]}}),
        ("order_lookup_sandbox", {"endpoint": "order_lookup", "order_id": "MQ1", "environment": "Sandbox"}),
        ("consumption_info", {"endpoint": "consumption_info", "transaction_id": "1", "body": {"customerConsented": True}}),
        ("test_notification", {"endpoint": "test_notification"}),
        ("unknown", {"endpoint": "nope"}),
        ("lowercase_env", {"endpoint": "list_images", "environment": "sandbox"}),
        ("advanced_commerce_revoke", {"endpoint": "advanced_commerce_revoke_subscription", "transaction_id": "2000000123",
                                      "body": {"requestInfo": {"requestReferenceId": nonce}, "refundRiskingPreference": True,
                                               "refundType": "FULL", "refundReason": "LEGAL", "storefront": "USA"}}),
        ("advanced_commerce_no_items", {"endpoint": "advanced_commerce_request_refund", "transaction_id": "2000000123",
                                        "body": {"requestInfo": {"requestReferenceId": nonce}, "refundRiskingPreference": True,
                                                 "items": []}}),
    ]:
        add("api_request/%s" % name, "api_request", signer, cfg(call), now=1700000000123)
    for name, req in [
        ("v1", {"kind": "promotional_offer_v1", "nonce": nonce, "product_id": "pro.monthly", "offer_identifier": "WINBACK1"}),
        ("v2", {"kind": "promotional_offer_v2", "nonce": nonce, "product_id": "pro.yearly", "offer_identifier": "SAVE20",
                "transaction_id": "2000000123"}),
        ("intro", {"kind": "introductory_offer_eligibility", "nonce": nonce, "product_id": "pro.monthly",
                   "allow_introductory_offer": False, "transaction_id": "2000000456"}),
        ("commerce", {"kind": "advanced_commerce_request", "nonce": nonce, "request": "{\"operation\":\"CREATE_SUBSCRIPTION\"}"}),
        ("no_nonce", {"kind": "promotional_offer_v1", "product_id": "p", "offer_identifier": "o"}),
    ]:
        add("sign/%s" % name, "sign", signer, cfg(req), now=1700000000123)
    return cases


def cli_cases():
    """What the CLI adds to the library: input sniffing, inspect, states, help and usage texts."""
    cases = []
    commands = ["receipt", "response", "entitlements", "jws", "api-request", "api-response", "sign",
                "ocsp-request", "inspect", "states"]
    cases.append(("cli/help", ["--help"]))
    cases.append(("cli/bare", []))
    cases.append(("cli/version", ["--version"]))
    for c in commands:
        cases.append(("cli/help/%s" % c, [c, "--help"]))
    cases.append(("cli/states/dot", ["states"]))
    cases.append(("cli/states/json", ["states", "--format", "json", "--pretty"]))
    receipts = files(FX + "/receipts/*.der") + files(FX + "/xcode/*.der") + ["Tests/shared/transaction_receipt_ios6.b64"]
    for path in receipts + files(FX + "/hostile/r_*.txt") + files(FX + "/hostile/r_t*.der")[:12]:
        cases.append(("cli/inspect/%s" % short(path), ["inspect", path]))
    sample = FX + "/receipts/sandbox_2020-07-22_com.revenuecat.sampleapp.der"
    jws = FX + "/jwsfake/valid_transaction.jws"
    cases += [
        ("cli/receipt/sample", ["receipt", sample, "--bundle-id", "com.revenuecat.sampleapp", "--now", "2030-01-01T00:00:00Z"]),
        ("cli/receipt/sample/any", ["receipt", sample, "--config", "docs/examples/sandbox-any-app.json", "--now", "1600000000000", "--pretty"]),
        ("cli/receipt/a_jws", ["receipt", jws, "--now", "1"]),
        ("cli/receipt/json", ["receipt", FX + "/hostile/j_good.json", "--now", "1"]),
        ("cli/receipt/seconds", ["receipt", sample, "--now", "1600000000"]),
        ("cli/receipt/bad_now", ["receipt", sample, "--now", "yesterday"]),
        ("cli/response/sample", ["response", FX + "/verifyreceipt/revenuecat_sandbox_status0_2020-07-22_paired.json",
                                 "--environment", "Sandbox", "--attempt", "2", "--bundle-id", "com.revenuecat.sampleapp", "--now", "1600000000000"]),
        ("cli/response/endpoint", ["response", FX + "/verifyreceipt/venice_status0_not_expired_edited.json", "--endpoint", "sandbox", "--now", "1600000000000"]),
        ("cli/response/bad_env", ["response", FX + "/verifyreceipt/venice_status0_not_expired_edited.json", "--environment", "Xcode", "--now", "1"]),
        ("cli/response/a_receipt", ["response", sample, "--now", "1"]),
        ("cli/entitlements/docs", ["entitlements", "docs/examples/entitlement-input.json", "--config", "docs/examples/catalog-config.json",
                                   "--options", "docs/examples/options.json", "--now", "1700600000000"]),
        ("cli/jws/fake", ["jws", jws, "--config", "Tests/shared/fakeapple/verifier.json", "--now", "1700000000000"]),
        ("cli/jws/a_receipt", ["jws", sample, "--now", "1"]),
        ("cli/ocsp-request/jws", ["ocsp-request", "Tests/shared/fakeapple/ocsp/transaction.jws", "--config",
                                  "Tests/shared/fakeapple/verifier.json", "--now", "1700000000000"]),
        ("cli/ocsp-request/receipt", ["ocsp-request", sample, "--now", "1600000000000"]),
        ("cli/api-response/history", ["api-response", "Benchmarks/api/transaction_history_20.json", "--config",
                                      "Tests/shared/fakeapple/verifier.json", "--options", "Tests/golden/api-options.json", "--now", "1700000000000"]),
        ("cli/api-request/no_signer", ["api-request", "Tests/golden/api-options.json"]),
        ("cli/sign/a_receipt", ["sign", sample, "--signer", "Tests/shared/fakeapple/signer.json", "--now", "1"]),
        ("cli/unknown_command", ["frobnicate"]),
        ("cli/missing_file", ["inspect", "Tests/golden/no-such-file.der"]),
    ]
    return cases


# ---- running and comparing -------------------------------------------------------------------

SIGNATURE = re.compile(r'("signature":")[A-Za-z0-9+/=_-]+(")')
JWS = re.compile(r'(eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.)[A-Za-z0-9_-]+')


def masked(out):
    """ECDSA signatures differ on every run: their bytes are masked, their presence is kept."""
    return JWS.sub(r"\1<signature>", SIGNATURE.sub(r"\1<signature>\2", out))


def run_all(lib_path, cli_path):
    lib = Library(lib_path)
    results = []
    for c in library_cases():
        out = lib.run(c)
        if c["entry"] in ("api_token", "api_request", "sign"):
            out = masked(out)
        results.append((c["id"], out))
    env = dict(os.environ, LC_ALL="C", COLUMNS="100")
    for cid, args in cli_cases():
        p = subprocess.run([cli_path] + args, cwd=ROOT, env=env, capture_output=True, stdin=subprocess.DEVNULL)
        out = "exit %d\n--- stdout\n%s--- stderr\n%s" % (p.returncode, p.stdout.decode("utf-8", "replace"),
                                                        p.stderr.decode("utf-8", "replace"))
        results.append((cid, out))
    ids = [cid for cid, _ in results]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        sys.exit("golden: duplicate case ids: %s" % dup[:5])
    return results


def readable(out):
    """An output split into lines for a diff; result JSON indented so the difference shows."""
    head, _, rest = out.partition("\n")
    if head == "IAPV_OK":
        try:
            return [head] + json.dumps(json.loads(rest), indent=1, ensure_ascii=False).splitlines()
        except ValueError:
            pass
    return out.splitlines()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare the build with %s" % OUTPUTS)
    mode.add_argument("--update", action="store_true", help="rewrite %s from the build" % OUTPUTS)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/lib/libiapverify.so.1"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/bin/iapverify"))
    ap.add_argument("--show", type=int, default=5, help="how many differing cases to print (default 5)")
    a = ap.parse_args()
    results = run_all(os.path.abspath(a.lib), os.path.abspath(a.cli))
    path = os.path.join(ROOT, OUTPUTS)
    if a.update:
        with open(path, "w", encoding="utf-8") as f:
            for cid, out in results:
                f.write(json.dumps({"id": cid, "out": out}, ensure_ascii=False) + "\n")
        print("golden: wrote %d cases to %s" % (len(results), OUTPUTS))
        return 0
    with open(path, encoding="utf-8") as f:
        want = [json.loads(line) for line in f]
    want_by_id = {w["id"]: w["out"] for w in want}
    got_by_id = dict(results)
    missing = [w["id"] for w in want if w["id"] not in got_by_id]
    extra = [cid for cid, _ in results if cid not in want_by_id]
    differ = [cid for cid, out in results if cid in want_by_id and want_by_id[cid] != out]
    for cid in differ[:a.show]:
        print("== %s" % cid)
        for line in difflib.unified_diff(readable(want_by_id[cid]), readable(got_by_id[cid]), "recorded", "now", lineterm="", n=2):
            print(line)
    if missing:
        print("golden: %d recorded cases no longer run, e.g. %s" % (len(missing), missing[:3]))
    if extra:
        print("golden: %d cases not recorded, e.g. %s" % (len(extra), extra[:3]))
    if differ or missing or extra:
        print("golden: FAIL: %d of %d cases differ from %s (python3 %s --update records a deliberate change)"
              % (len(differ), len(want), OUTPUTS, os.path.relpath(__file__, ROOT)))
        return 1
    print("golden: all %d cases give the recorded answers byte for byte" % len(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
