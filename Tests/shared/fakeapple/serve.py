#!/usr/bin/env python3
"""Runs the fake App Store Server API (fakeapi.FakeAppleAPI) as a process, for tests in other
languages.

    python3 Tests/shared/fakeapple/serve.py SCENARIO.json

It loads the scenario, starts both hosts on 127.0.0.1, prints one line

    <production base URL> <sandbox base URL>

and serves until its stdin closes. Then it prints one more line, a JSON object with what the fake
saw, and exits 0:

    {"errors": [...], "requests": [[environment, method, "path?query"], ...], "consumption": [...],
     "advanced_commerce": [[environment, "subscription/cancel", transaction id, body], ...]}

``errors`` lists every request the fake refused (a bad bearer token, an unknown path or query
parameter): a test that expects none asserts it is empty.

The scenario is a JSON object; every key is optional:

    {
      "page_size": 2,
      "transactions": {"Production": [PAYLOAD, ...], "Sandbox": [...]},
      "renewals": {"Production": [{"payload": PAYLOAD, "status": 1}, ...], "Sandbox": [...]},
      "notifications": {"Production": [{"type": "DID_RENEW", "subtype": null, "uuid": "...",
                                        "signed_date": MS, "transaction": PAYLOAD,
                                        "renewal": PAYLOAD}, ...], "Sandbox": [...]},
      "failures": [{"count": 1, "retry_after_ms": MS},
                   {"count": 2, "http_status": 500, "body": {...}, "headers": {...}}]
    }

A PAYLOAD is a transaction or renewal info in Apple's field names, as FakeAppleAPI.add_transaction
and set_renewal take it. ``failures`` answer the next well-formed calls, in order, whatever the
host: an entry with ``retry_after_ms`` is a 429 rate limit whose Retry-After header is that value
(Apple sends a UNIX time in milliseconds), any other entry answers ``http_status`` with ``body``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fakeapi import FakeAppleAPI, environment, sign_notification  # noqa: E402

KEYS = {"page_size", "transactions", "renewals", "notifications", "failures"}


def load(fake: FakeAppleAPI, scenario: dict) -> None:
    unknown = set(scenario) - KEYS
    if unknown:
        raise SystemExit(f"serve.py: unknown scenario keys {sorted(unknown)}")
    for key in ("transactions", "renewals", "notifications"):
        for env in scenario.get(key, {}):
            try:
                environment(env)
            except ValueError:
                raise SystemExit(f"serve.py: {key}: unknown environment {env!r} (Production or Sandbox)") from None
    for env, payloads in scenario.get("transactions", {}).items():
        for payload in payloads:
            fake.add_transaction(env, payload)
    for env, renewals in scenario.get("renewals", {}).items():
        for renewal in renewals:
            fake.set_renewal(env, renewal["payload"], status=renewal.get("status", 1))
    for env, notifications in scenario.get("notifications", {}).items():
        for n in notifications:
            signed = sign_notification(n["type"], n.get("subtype"), uuid=n["uuid"], signed_date=n["signed_date"],
                                       transaction=n.get("transaction"), renewal=n.get("renewal"), env=env,
                                       bundle_id=fake.bundle_id, fixtures_dir=fake.fixtures_dir)
            fake.add_notification(env, signed, n["signed_date"])
    for failure in scenario.get("failures", []):
        if "retry_after_ms" in failure:
            fake.rate_limit_next(failure.get("count", 1), failure["retry_after_ms"])
        else:
            fake.fail_next(failure.get("count", 1), failure["http_status"], failure.get("body"), failure.get("headers"))


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    scenario = json.loads(Path(sys.argv[1]).read_text())
    fake = FakeAppleAPI(HERE, page_size=scenario.get("page_size", 2))
    load(fake, scenario)
    fake.start()
    try:
        print(fake.base_url, fake.sandbox_url, flush=True)
        sys.stdin.read()                 # serve until the test closes our stdin (or exits)
    finally:
        fake.stop()
    print(json.dumps({"errors": fake.errors, "requests": [list(r) for r in fake.requests],
                      "consumption": [list(c) for c in fake.consumption],
                      "advanced_commerce": [list(a) for a in fake.advanced_commerce]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
