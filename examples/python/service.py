"""A small purchase service: the app creates an order, buys in the App Store, then sends the
receipt; the service asks Apple's /verifyReceipt, lets iapverify decide, and delivers each
transaction exactly once through the ledger.

    python service.py --port 8080                 # SQLite in ./purchases.db
    DATABASE_URL=postgresql://... python service.py

Apple is reached through APPLE_BASE_URL when set (tests point it at a fake server), otherwise
through Apple's two hosts over TLS. The retry rules are the library's: production first, then
sandbox on 21007; temporary failures and timeouts are stored and retried by a periodic job after
the library's retry_after_ms.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import threading
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional

import iapverify
from ledger import Ledger, now_ms

PRODUCTION_URL = "https://buy.itunes.apple.com/verifyReceipt"
SANDBOX_URL = "https://sandbox.itunes.apple.com/verifyReceipt"
GIVE_UP_DELAY_MS = 15 * 60 * 1000   # after `give_up`, the periodic job tries again later
TIMEOUT_DELAY_MS = 5_000


class PurchaseService:
    def __init__(self, config: dict, ledger: Ledger, shared_secret: str = "", apple_base_url: Optional[str] = None,
                 clock: Callable[[], int] = now_ms, timeout_s: float = 10.0):
        self.verifier = iapverify.Verifier(config)
        self.ledger = ledger
        self.secret = shared_secret
        self.urls = ({"production": apple_base_url.rstrip("/") + "/production/verifyReceipt",
                      "sandbox": apple_base_url.rstrip("/") + "/sandbox/verifyReceipt"} if apple_base_url
                     else {"production": PRODUCTION_URL, "sandbox": SANDBOX_URL})
        self.clock = clock
        self.timeout_s = timeout_s

    def create_order(self, user_id: str, product_id: str) -> str:
        order_id = uuid.uuid4().hex
        self.ledger.create_order(order_id, user_id, product_id, self.clock())
        return order_id

    def submit_receipt(self, user_id: str, receipt: str, endpoint: str = "production", attempt: int = 1) -> dict:
        """Verifies through Apple and delivers. Returns what happened, for the app."""
        pending_id = hashlib.sha256(f"{user_id}:{receipt}".encode()).hexdigest()
        for _ in range(3):  # at most production -> sandbox -> production; the library never loops
            try:
                body = self._call_apple(endpoint, receipt)
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                return self._store(pending_id, user_id, receipt, endpoint, attempt, TIMEOUT_DELAY_MS, f"timeout: {e}")
            result = self.verifier.interpret_response(
                body, endpoint=endpoint, attempt=attempt, now_ms=self.clock(),
                options={"delivered_transaction_ids": self.ledger.delivered_ids(user_id),
                         "orders": self.ledger.pending_orders(user_id)})
            if result.action == "accept":
                delivered, revoked = self.ledger.apply(user_id, result.delivery, self.clock())
                return {"status": "accepted", "delivered": delivered, "revoked": revoked,
                        "entitlements": {e.id: e.active for e in result.entitlements},
                        "orders": {o.order_id: o.status for o in result.delivery.orders}}
            if result.action == "retry_sandbox":
                endpoint = "sandbox"
            elif result.action == "retry_production":
                endpoint = "production"
            elif result.action == "retry_later":
                return self._store(pending_id, user_id, receipt, endpoint, attempt + 1, result.retry_after_ms or 1000,
                                   str(result.status))
            elif result.action == "give_up":
                return self._store(pending_id, user_id, receipt, endpoint, 1, GIVE_UP_DELAY_MS, str(result.status))
            elif result.action == "fix_configuration":
                raise RuntimeError(f"Apple rejected our shared secret: {result.reason}")
            else:
                return {"status": "rejected", "verdict": result.verdict, "reason": result.reason}
        return {"status": "rejected", "verdict": "wrong_environment", "reason": "environment ping-pong"}

    def retry_pending(self) -> list[dict]:
        """The periodic job: retries every stored verification that is due."""
        return [self.submit_receipt(p["user_id"], p["receipt"], p["endpoint"], int(p["attempt"]))
                for p in self.ledger.take_due(self.clock())]

    def _store(self, pending_id: str, user_id: str, receipt: str, endpoint: str, attempt: int, delay_ms: int,
               why: str) -> dict:
        self.ledger.store_pending(pending_id, user_id, receipt, None, endpoint, attempt, self.clock() + delay_ms, why)
        return {"status": "pending", "retry_after_ms": delay_ms, "why": why}

    def _call_apple(self, endpoint: str, receipt: str) -> bytes:
        request = json.dumps({"receipt-data": receipt, "password": self.secret, "exclude-old-transactions": False}).encode()
        req = urllib.request.Request(self.urls[endpoint], data=request, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout_s) as response:  # system trust store for TLS
            return response.read()


def make_handler(service: PurchaseService):
    class Handler(BaseHTTPRequestHandler):
        def _json(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                if self.path == "/orders":
                    self._json(201, {"order_id": service.create_order(request["user_id"], request["product_id"])})
                elif self.path == "/receipts":
                    result = service.submit_receipt(request["user_id"], request["receipt"])
                    self._json({"accepted": 200, "pending": 202}.get(result["status"], 403), result)
                elif self.path == "/jobs/retry":
                    self._json(200, {"results": service.retry_pending()})
                else:
                    self._json(404, {"error": "unknown path"})
            except (KeyError, ValueError) as e:
                self._json(400, {"error": f"bad request: {e}"})
            except iapverify.IAPVerifyError as e:
                self._json(500, {"error": str(e)})

        def log_message(self, *args) -> None:
            pass

    return Handler


class Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog of 5 resets bursts of app requests
    daemon_threads = True


def serve(service: PurchaseService, host: str, port: int, retry_every_s: float = 5.0) -> ThreadingHTTPServer:
    server = Server((host, port), make_handler(service))
    stop = threading.Event()

    def job() -> None:
        while not stop.wait(retry_every_s):
            service.retry_pending()

    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Thread(target=job, daemon=True).start()
    server.stop_job = stop  # type: ignore[attr-defined]
    return server


def main() -> None:
    import os
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "config.json"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    service = PurchaseService(config, Ledger(), os.environ.get("APPLE_SHARED_SECRET", ""), os.environ.get("APPLE_BASE_URL"))
    server = serve(service, args.host, args.port)
    print(f"listening on {args.host}:{args.port} ({service.ledger.kind} ledger)")
    threading.Event().wait()


if __name__ == "__main__":
    main()


def receipt_text(der: bytes) -> str:
    """What an app sends: the receipt file, base64-encoded."""
    return base64.b64encode(der).decode()
