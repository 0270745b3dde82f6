"""Runs the service against a fake Apple on this machine, to try it by hand: receipts, StoreKit 2
transactions and App Store Server Notifications, with nothing sent to Apple.

    python examples/python/try_locally.py serve [--port 8080] [--dir DIR]
    python examples/python/try_locally.py fakes --dir DIR      # only the fakes: start fronts and workers yourself
    python examples/python/try_locally.py token alice          # a user token for the local service
    python examples/python/try_locally.py receipt 1001         # a receipt that pays transaction 1001
    python examples/python/try_locally.py transaction 2001     # the app's signed transaction 2001
    python examples/python/try_locally.py notification REFUND 1001   # {"signedPayload": ...} for it

`serve` starts a fake /verifyReceipt and a fake App Store Server API (Production and Sandbox) on
free ports of 127.0.0.1, and the service (front and worker, SQLite in DIR) with a config that
trusts only the repository's fake Apple-shaped PKI (Tests/shared/fakeapple), for the bundle
`com.example.fake`. The fake /verifyReceipt answers a receipt named N with one purchase of coins,
transaction N; the fake Server API knows StoreKit 2 transactions 2001 (coins) and 2002 (the
`pro` unlock). Secrets are fixed, local-only values, so the other commands need no running state.
Everything is signed with keys committed to this repository: never trust that PKI anywhere else.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKI = HERE.parents[1] / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(PKI))

BUNDLE_ID = "com.example.fake"
APP_APPLE_ID = 1234567890
COINS, PRO = "com.example.fake.coins", "com.example.fake.pro"
CATALOG = {COINS: {"type": "consumable"}, PRO: {"type": "non_consumable", "entitlements": ["pro"]}}
STOREKIT2 = {"2001": COINS, "2002": PRO}
USER_SECRET = "local-only-user-token-secret"        # fixed on purpose: this runs on your machine only
OPERATOR_TOKEN = "local-only-operator-token"
PURCHASED_MS = 1_767_225_600_000                      # 2026-01-01: when every fake purchase was made


def local_config() -> dict:
    from fake_receipts import fake_root_pem
    return {"bundle_id": BUNDLE_ID, "app_apple_id": APP_APPLE_ID, "environments": ["Production", "Sandbox"],
            "trust": {"include_apple_roots": False, "roots_pem": [fake_root_pem()]}, "products": CATALOG}


def transaction(transaction_id: str, product: str) -> dict:
    """A StoreKit 2 transaction as Apple signs it."""
    return {"transactionId": transaction_id, "originalTransactionId": transaction_id, "productId": product,
            "bundleId": BUNDLE_ID, "environment": "Production", "purchaseDate": PURCHASED_MS,
            "originalPurchaseDate": PURCHASED_MS, "quantity": 1, "inAppOwnershipType": "PURCHASED",
            "type": "Consumable" if product == COINS else "Non-Consumable", "signedDate": PURCHASED_MS,
            "transactionReason": "PURCHASE", "storefront": "USA"}


def verify_receipt_answer(name: str) -> bytes:
    """What the fake /verifyReceipt says about a receipt named `name`: one coins purchase, transaction
    `name`, bought a moment ago (so it pays the order the app made just before)."""
    now = str(int(time.time() * 1000) - 1000)
    item = {"quantity": "1", "product_id": COINS, "transaction_id": name, "original_transaction_id": name,
            "purchase_date_ms": now, "original_purchase_date_ms": now,
            "is_trial_period": "false", "in_app_ownership_type": "PURCHASED"}
    receipt = {"receipt_type": "Production", "adam_id": APP_APPLE_ID, "bundle_id": BUNDLE_ID,
               "application_version": "1.0", "original_application_version": "1.0",
               "receipt_creation_date_ms": now, "request_date_ms": now,
               "in_app": [item]}
    return json.dumps({"status": 0, "environment": "Production", "receipt": receipt}).encode()


def start_fakes(directory: Path):
    """The fake /verifyReceipt and the fake App Store Server API on free ports, the config in
    DIRECTORY/config.json; returns (fake Apple, fake API, the environment the service needs)."""
    from fake_apple import FakeApple
    from fakeapi import FakeAppleAPI
    apple = FakeApple()
    apple.answer_with(lambda endpoint, name, n: verify_receipt_answer(name) if name.isdigit() else b'{"status": 21002}')
    api = FakeAppleAPI(PKI)
    api.start()
    for transaction_id, product in STOREKIT2.items():
        api.add_transaction("Production", transaction(transaction_id, product))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(local_config(), indent=2))
    env = dict(APPLE_BASE_URL=apple.url, APPLE_API_KEY_FILE=str(PKI / "signer.json"),
               APPLE_API_BASE_URL=json.dumps({"Production": api.base_url, "Sandbox": api.sandbox_url}),
               SERVICE_USER_TOKEN_SECRET=USER_SECRET, SERVICE_OPERATOR_TOKEN=OPERATOR_TOKEN, APPLE_SHARED_SECRET="local")
    print(f"fake Apple: /verifyReceipt {apple.url}, Server API {api.base_url} (Sandbox {api.sandbox_url})", flush=True)
    return apple, api, env


def serve(port: int, directory: Path) -> None:
    apple, api, env = start_fakes(directory)
    os.environ.update(env)
    os.environ.pop("DATABASE_URL", None)
    import service
    try:
        service.run(["all", "--port", str(port), "--config", str(directory / "config.json"),
                     "--sqlite-path", str(directory / "purchases.db"), "--poll-ms", "200"])
    finally:
        api.stop()
        apple.close()


def fakes(directory: Path) -> None:
    """Only the fakes, for fronts and workers started by hand (README.md, "Several processes by
    hand"): writes DIRECTORY/env, the variables to export, and serves until Ctrl-C."""
    import shlex
    apple, api, env = start_fakes(directory)
    part = directory / "env.new"
    part.write_text("".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items()))
    os.replace(part, directory / "env")
    print(f"fakes ready: . {directory / 'env'}; the config is {directory / 'config.json'}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        api.stop()
        apple.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="the fake Apple and the service (Ctrl-C stops both)")
    run.add_argument("--port", type=int, default=8080)
    run.add_argument("--dir", type=Path, default=None, help="where the config and purchases.db go (default: a new temporary directory)")
    only = commands.add_parser("fakes", help="only the fake Apple, for fronts and workers you start (Ctrl-C stops it)")
    only.add_argument("--dir", type=Path, required=True, help="where the config and the env file go")
    commands.add_parser("token", help="a user token").add_argument("user")
    commands.add_parser("receipt", help="a base64 receipt the fake Apple answers with transaction NAME").add_argument("name")
    commands.add_parser("transaction", help="the signed transaction of 2001 or 2002").add_argument("transaction_id")
    note = commands.add_parser("notification", help='{"signedPayload": ...} of a notification about a coins transaction')
    note.add_argument("type", help="REFUND, CONSUMPTION_REQUEST, ...")
    note.add_argument("transaction_id")
    note.add_argument("--subtype", default=None)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port, args.dir or Path(tempfile.mkdtemp(prefix="iapverify-try-")))
    elif args.command == "fakes":
        fakes(args.dir)
    elif args.command == "token":
        from http_api import Auth
        print(Auth(USER_SECRET, OPERATOR_TOKEN).user_token(args.user, int(time.time() * 1000) + 86_400_000))
    elif args.command == "receipt":
        from fake_receipts import make_receipt
        print(make_receipt(args.name, bundle_id=BUNDLE_ID))
    elif args.command == "transaction":
        from fakeapi import sign_jws
        if args.transaction_id not in STOREKIT2:
            raise SystemExit(f"the fake Server API knows transactions {', '.join(STOREKIT2)}")
        print(sign_jws(transaction(args.transaction_id, STOREKIT2[args.transaction_id]), PKI))
    else:
        from fakeapi import sign_notification
        now = int(time.time() * 1000)
        txn = transaction(args.transaction_id, STOREKIT2.get(args.transaction_id, COINS))
        if args.type in ("REFUND", "REVOKE"):
            txn.update(revocationDate=now - 1000, revocationReason=0, signedDate=now - 1000)
        payload = sign_notification(args.type, args.subtype, uuid=str(uuid.uuid4()), signed_date=now,
                                    transaction=txn, fixtures_dir=PKI)
        print(json.dumps({"signedPayload": payload}))


if __name__ == "__main__":
    main()
