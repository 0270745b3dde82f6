"""A small purchase service: the app creates an order, buys in the App Store, then sends the
receipt (or, with StoreKit 2, the transaction id); the service asks Apple's /verifyReceipt (or the
App Store Server API's transaction history), lets iapverify decide, and delivers each transaction
exactly once through the ledger.

    python service.py                   # front and worker in one process, SQLite in ./purchases.db
    DATABASE_URL=postgresql://... python service.py front --port 8080   # any number of fronts
    DATABASE_URL=postgresql://... python service.py worker              # and of workers

Apple is reached through APPLE_BASE_URL when set (tests point it at a fake server), otherwise
through Apple's two hosts over TLS. The retry rules are the library's: production first, then
sandbox on 21007; temporary failures and timeouts are stored in the ledger's work queue and a
worker retries them after the library's retry_after_ms. The StoreKit 2 flow needs APPLE_API_KEY_FILE,
a JSON signer config (the .p8 key, key id, issuer id, bundle id); APPLE_API_BASE_URL points it at a
fake App Store Server API in tests. README.md describes the deployment.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import os
import signal
import socket
import sys
import threading
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional, Union

import iapverify
from ledger import Job, Ledger, now_ms

PRODUCTION_URL = "https://buy.itunes.apple.com/verifyReceipt"
SANDBOX_URL = "https://sandbox.itunes.apple.com/verifyReceipt"
GIVE_UP_DELAY_MS = 15 * 60 * 1000            # after the library's `give_up`, a new round of attempts later
GIVE_UP_AFTER_MS = 3 * 24 * 3600 * 1000      # a job still temporary this long after it was stored ends as given_up
LEASE_MS = 5 * 60 * 1000                     # longer than a batch can take (see README.md)
BATCH = 5
# Apple unreachable (refused, reset, timeout, HTTP error) is the same situation as its status 21005
# ("the receipt server was temporarily unable to provide the receipt"): asking the library about
# this body gives the same backoff and the same give_up after the last attempt.
UNREACHABLE_BODY = b'{"status": 21005}'
# StoreKit 2 jobs share the queue with receipts: their `receipt` column is this prefix and the
# transaction id (a base64 receipt never contains a colon).
STOREKIT2 = "storekit2:"
MAX_PAGES = 1000   # a history longer than this is refused, not followed forever


@dataclass(frozen=True)
class Answer:
    """What Apple's answers for one receipt came to, before the ledger is touched."""
    kind: str                     # accept | later | give_up | fix_configuration | reject
    endpoint: str
    attempt: int
    body: bytes = b""             # accept: the body to settle
    delay_ms: int = 0             # later: the library's retry_after_ms
    why: str = ""
    verdict: str = ""
    transactions: Optional[tuple] = None  # StoreKit 2: the verified transactions of every page


def job_id(user_id: str, receipt: str) -> str:
    """One queue entry per user and receipt, whoever stores it."""
    return hashlib.sha256(f"{user_id}:{receipt}".encode()).hexdigest()


class PurchaseService:
    def __init__(self, config: dict, ledger: Ledger, shared_secret: str = "", apple_base_url: Optional[str] = None,
                 clock: Callable[[], int] = now_ms, timeout_s: float = 10.0, lease_ms: int = LEASE_MS,
                 give_up_after_ms: int = GIVE_UP_AFTER_MS, worker_id: Optional[str] = None,
                 signer_config: Optional[dict] = None, api_base_url: Union[str, dict, None] = None,
                 token_clock: Optional[Callable[[], int]] = None):
        """signer_config enables the StoreKit 2 flow. api_base_url (tests only) sends its calls to
        a fake App Store Server API instead of Apple's hosts: one URL, or {"production": ...,
        "sandbox": ...}. The bearer tokens are issued at token_clock() (default: this host's real
        clock, which is what Apple checks them against), everything else at clock()."""
        self.verifier = iapverify.Verifier(config)
        self.signers: dict = {}
        if signer_config is not None:
            for environment in ("production", "sandbox"):
                base = api_base_url.get(environment) if isinstance(api_base_url, dict) else api_base_url
                self.signers[environment] = iapverify.Signer(dict(signer_config, test_base_url=base.rstrip("/"))
                                                             if base else signer_config)
        self.token_clock = token_clock
        self.ledger = ledger
        self.secret = shared_secret
        self.urls = ({"production": apple_base_url.rstrip("/") + "/production/verifyReceipt",
                      "sandbox": apple_base_url.rstrip("/") + "/sandbox/verifyReceipt"} if apple_base_url
                     else {"production": PRODUCTION_URL, "sandbox": SANDBOX_URL})
        self.clock = clock
        self.timeout_s = timeout_s
        self.lease_ms = lease_ms
        self.give_up_after_ms = give_up_after_ms
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"

    # -- the front: what the app calls ----------------------------------------------------------

    def create_order(self, user_id: str, product_id: str) -> str:
        order_id = uuid.uuid4().hex
        self.ledger.create_order(order_id, user_id, product_id, self.clock())
        return order_id

    def submit_receipt(self, user_id: str, receipt: str, endpoint: str = "production", attempt: int = 1) -> dict:
        """Verifies through Apple and delivers, or queues the receipt. Returns what happened, for the app."""
        return self._submit(user_id, receipt, endpoint, attempt)

    def _submit(self, user_id: str, receipt: str, endpoint: str, attempt: int) -> dict:
        """What the front does for a receipt or a StoreKit 2 transaction (`receipt` is then
        STOREKIT2 + its id): ask Apple once, then settle, refuse, or queue for a worker."""
        answer = self._ask(receipt, endpoint, attempt)
        key = job_id(user_id, receipt)
        if answer.kind == "accept":
            def settle(db) -> dict:
                result = self._settle(db, user_id, answer)
                if result["status"] == "accepted":
                    self.ledger.supersede(db, key, self.clock())
                return result
            return self.ledger.run(settle)
        if answer.kind == "reject":
            return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
        if answer.kind == "later":
            next_attempt, delay = answer.attempt + 1, answer.delay_ms
        else:  # give_up: a new round later; fix_configuration: kept until the secret is fixed
            if answer.kind == "fix_configuration":
                print(answer.why, file=sys.stderr, flush=True)  # an operator must fix APPLE_SHARED_SECRET
            next_attempt, delay = 1, GIVE_UP_DELAY_MS
        now = self.clock()
        self.ledger.run(lambda db: self.ledger.enqueue(db, key, user_id, receipt, answer.endpoint, next_attempt,
                                                       now + delay, now, answer.why))
        return {"status": "pending", "retry_after_ms": delay, "why": answer.why}

    def submit_transaction(self, user_id: str, transaction_id: str, environment: str = "production",
                           attempt: int = 1) -> dict:
        """StoreKit 2: the app sends the id of a transaction it just finished. The service reads the
        customer's whole transaction history from the App Store Server API (every page, every
        signed item verified), delivers what is new exactly once, and answers with the
        entitlements; or queues the call when Apple says later. Returns what happened, for the app."""
        if not self.signers:
            raise ValueError("the StoreKit 2 flow needs a signer config (APPLE_API_KEY_FILE)")
        if environment not in ("production", "sandbox") or not transaction_id:
            raise ValueError("environment must be production or sandbox, and transaction_id not empty")
        return self._submit(user_id, STOREKIT2 + transaction_id, environment, attempt)

    # -- the worker: retries what the queue holds -------------------------------------------------

    def run_due_jobs(self, limit: int = BATCH, stop: Optional[threading.Event] = None) -> list[dict]:
        """One pass: claims up to `limit` due jobs and runs them one by one. Once `stop` is set, the
        jobs not started yet are given back instead of waiting for their leases to end."""
        results = []
        for job in self.ledger.claim(self.worker_id, self.clock(), self.lease_ms, limit):
            if stop is not None and stop.is_set():
                self.ledger.release(job, self.clock())
            else:
                results.append(self.run_job(job))
        return results

    def retry_pending(self) -> list[dict]:
        """Every job due now, in batches (the single-process job and POST /jobs/retry)."""
        results: list[dict] = []
        while True:
            batch = self.run_due_jobs(100)
            results += batch
            if not batch:
                return results

    def run_job(self, job: Job) -> dict:
        """One attempt for a claimed job. Its outcome is written with its effects, in one database
        transaction, and only while the lease is still ours; otherwise nothing is written."""
        answer = self._ask(job.receipt, job.endpoint, job.attempt)

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            now = self.clock()
            if answer.kind == "accept":
                result = self._settle(db, job.user_id, answer)
                if result["status"] == "accepted":
                    self.ledger.finish(db, job, "delivered", ",".join(result["delivered"]) or "nothing new", now)
                else:
                    self.ledger.finish(db, job, "rejected", f"{result['verdict']}: {result['reason']}", now)
                return result
            if answer.kind == "reject":
                self.ledger.finish(db, job, "rejected", f"{answer.verdict}: {answer.why}", now)
                return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
            if answer.kind == "later":
                self.ledger.reschedule(db, job, answer.endpoint, answer.attempt + 1, now + answer.delay_ms, answer.why)
                return {"status": "pending", "retry_after_ms": answer.delay_ms, "why": answer.why}
            if answer.kind == "give_up" and now - job.created_ms >= self.give_up_after_ms:
                self.ledger.finish(db, job, "given_up", f"still {answer.why} after {job.tries} tries", now)
                return {"status": "given_up", "why": answer.why}
            # give_up: a new round of attempts later. fix_configuration: the same attempt later, never
            # given up for it: the receipt is fine, our secret is not.
            attempt = 1 if answer.kind == "give_up" else answer.attempt
            self.ledger.reschedule(db, job, answer.endpoint, attempt, now + GIVE_UP_DELAY_MS, answer.why)
            return {"status": "pending", "retry_after_ms": GIVE_UP_DELAY_MS, "why": answer.why}
        return self.ledger.run(record)

    def work(self, stop: threading.Event, poll_s: float = 1.0, batch: int = BATCH) -> None:
        """The worker loop: a pass, then a pause when nothing was due. A failing pass (database
        down, ...) is logged; the jobs it held come back when their leases end."""
        while not stop.is_set():
            try:
                if self.run_due_jobs(batch, stop):
                    continue
            except Exception as e:  # keep the worker alive; the queue keeps the work
                print(f"worker {self.worker_id}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            stop.wait(poll_s)

    def health(self) -> dict:
        return {"ok": True, "ledger": self.ledger.kind, "jobs": self.ledger.queue_counts(self.clock())}

    # -- shared by both ---------------------------------------------------------------------------

    def _ask(self, receipt: str, endpoint: str, attempt: int) -> Answer:
        if receipt.startswith(STOREKIT2):
            return self._ask_history(receipt[len(STOREKIT2):], endpoint, attempt)
        return self._ask_apple(receipt, endpoint, attempt)

    def _ask_history(self, transaction_id: str, environment: str, attempt: int) -> Answer:
        """Every page of the transaction history, each verified by the library. On the library's
        next_page the next page is asked for; on retry_sandbox the sandbox host, once (the library
        never answers retry_sandbox from sandbox, and this never goes back); anything else ends it.
        A retry starts again from the first page: the pages already read are not kept."""
        transactions: list[dict] = []
        page: dict = {}       # the library's next_page ({"revision": ...}), merged into the next call
        switched = False
        for _ in range(MAX_PAGES):
            call = {"endpoint": "transaction_history", "environment": environment, "transaction_id": transaction_id, **page}
            status, retry_after, body, why = self._send(
                self.signers[environment].api_request(call, now_ms=self.token_clock() if self.token_clock else None))
            result = self.verifier.interpret_api_response(
                body, endpoint="transaction_history", http_status=status, environment=environment,
                retry_after=retry_after, attempt=attempt, now_ms=self.clock())
            if result.action in ("next_page", "accept"):
                transactions += result.transactions
                if result.action == "accept":
                    return Answer("accept", environment, attempt, transactions=tuple(transactions))
                page = dict(result.next_page or {})
                if not page:
                    return Answer("reject", environment, attempt, verdict="malformed", why="next_page without a page")
            elif result.action == "retry_sandbox" and not switched:
                environment, switched, transactions, page = "sandbox", True, [], {}
            elif result.action == "retry_sandbox":
                return Answer("reject", environment, attempt, verdict=result.verdict, why="retry_sandbox from sandbox")
            else:
                return self._decide(result, environment, attempt, b"", why or f"http {status}")
        return Answer("reject", environment, attempt, verdict="malformed", why=f"more than {MAX_PAGES} pages of history")

    def _send(self, request) -> tuple[int, Optional[str], bytes, str]:
        """Sends an App Store Server API request exactly as the library built it. Returns (HTTP
        status, Retry-After, body, why). Apple unreachable (refused, reset, timeout) is reported
        as an HTTP 503 without a body: the library then gives its backoff, as for Apple's 503."""
        req = urllib.request.Request(request.url, data=request.body, headers=dict(request.headers), method=request.method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as response:  # system trust store for TLS
                return response.status, response.headers.get("Retry-After"), response.read(), ""
        except urllib.error.HTTPError as e:  # 4xx/5xx: Apple's answer all the same
            with e:
                return e.code, e.headers.get("Retry-After"), e.read(), f"http {e.code}"
        except (OSError, http.client.HTTPException, ValueError) as e:
            why = "timeout" if isinstance(e, TimeoutError) or "timed out" in str(e) else f"unreachable: {e}"
            return 503, None, b"", why

    def _ask_apple(self, receipt: str, endpoint: str, attempt: int) -> Answer:
        for _ in range(3):  # at most production -> sandbox -> production; the library never loops
            try:
                body = self._call_apple(endpoint, receipt)
            except (OSError, http.client.HTTPException, ValueError) as e:  # refused, reset, timeout, HTTP 5xx
                why = (f"http {e.code}" if isinstance(e, urllib.error.HTTPError)
                       else "timeout" if isinstance(e, TimeoutError) or "timed out" in str(e) else f"unreachable: {e}")
                return self._decide(self.verifier.interpret_response(UNREACHABLE_BODY, endpoint=endpoint, attempt=attempt,
                                                                     now_ms=self.clock()), endpoint, attempt, b"", why)
            result = self.verifier.interpret_response(body, endpoint=endpoint, attempt=attempt, now_ms=self.clock())
            if result.action == "retry_sandbox":
                endpoint = "sandbox"
            elif result.action == "retry_production":
                endpoint = "production"
            else:
                return self._decide(result, endpoint, attempt, body, str(result.status))
        return Answer("reject", endpoint, attempt, verdict="wrong_environment", why="environment ping-pong")

    @staticmethod
    def _decide(result, endpoint: str, attempt: int, body: bytes, why: str) -> Answer:
        if result.action == "accept":
            return Answer("accept", endpoint, attempt, body=body)
        if result.action == "retry_later":
            return Answer("later", endpoint, attempt, delay_ms=int(result.retry_after_ms or 1000), why=why)
        if result.action == "give_up":
            return Answer("give_up", endpoint, attempt, why=why)
        if result.action == "fix_configuration":
            return Answer("fix_configuration", endpoint, attempt, why=f"fix_configuration: {result.reason}")
        return Answer("reject", endpoint, attempt, verdict=result.verdict, why=result.reason)

    def _settle(self, db, user_id: str, answer: Answer) -> dict:
        """Inside one database transaction: read what the user has, plan with the library, record.

        StoreKit 2: the plan is made from the verified transactions of all pages together (the
        library's compute_entitlements), so a renewal on page 3 counts with a purchase on page 1."""
        used, orders = self.ledger.user_state(db, user_id)
        now = self.clock()
        options = {"delivered_transaction_ids": used, "orders": orders}
        if answer.transactions is not None:
            result = self.verifier.compute_entitlements({"transactions": list(answer.transactions)}, now_ms=now,
                                                        options=options)
            if not result.valid:
                return {"status": "rejected", "verdict": result.verdict, "reason": result.reason}
        else:
            result = self.verifier.interpret_response(answer.body, endpoint=answer.endpoint, attempt=answer.attempt,
                                                      now_ms=now, options=options)
        if answer.transactions is None and result.action != "accept":  # accepted a moment ago; only the clock moved
            return {"status": "rejected", "verdict": result.verdict, "reason": result.reason}
        delivered, revoked, paid = self.ledger.apply(db, user_id, result.delivery, now)
        return {"status": "accepted", "delivered": delivered, "revoked": revoked,
                "entitlements": {e.id: e.active for e in result.entitlements},
                "orders": {o["order_id"]: "paid" if o["order_id"] in paid else "pending" for o in orders},
                "paid": paid}

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

        def do_GET(self) -> None:
            if self.path != "/health":
                self._json(404, {"error": "unknown path"})
                return
            try:
                self._json(200, service.health())
            except Exception as e:  # the database is what a front needs: say so to the load balancer
                self._json(503, {"ok": False, "error": f"{type(e).__name__}: {e}"})

        def do_POST(self) -> None:
            try:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                if self.path == "/orders":
                    self._json(201, {"order_id": service.create_order(request["user_id"], request["product_id"])})
                elif self.path == "/receipts":
                    result = service.submit_receipt(request["user_id"], request["receipt"])
                    self._json({"accepted": 200, "pending": 202}.get(result["status"], 403), result)
                elif self.path == "/storekit2/transactions":
                    result = service.submit_transaction(str(request["user_id"]), str(request["transaction_id"]),
                                                        request.get("environment", "production"))
                    self._json({"accepted": 200, "pending": 202}.get(result["status"], 403), result)
                elif self.path == "/jobs/retry":
                    self._json(200, {"results": service.retry_pending()})
                else:
                    self._json(404, {"error": "unknown path"})
            except (KeyError, ValueError) as e:
                self._json(400, {"error": f"bad request: {e}"})
            except Exception as e:  # database down, library error: nothing was recorded, the app sends again
                self._json(503, {"error": f"{type(e).__name__}: {e}"})

        def log_message(self, *args) -> None:
            pass

    return Handler


class Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default backlog of 5 resets bursts of app requests
    daemon_threads = True


def serve(service: PurchaseService, host: str, port: int, retry_every_s: Optional[float] = 5.0) -> ThreadingHTTPServer:
    """The HTTP front in background threads; with retry_every_s, a worker thread too (the
    single-process setup). server.shutdown() stops both."""
    server = Server((host, port), make_handler(service))
    stop = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    if retry_every_s is not None:
        threading.Thread(target=service.work, args=(stop, retry_every_s), daemon=True).start()
    shutdown = server.shutdown

    def stop_all() -> None:
        stop.set()
        shutdown()
    server.shutdown = stop_all  # type: ignore[method-assign]
    return server


def file_clock(path: str) -> Callable[[], int]:
    """Tests only: the time is the integer in this file, so leases and backoff move when a test says."""
    def read() -> int:
        with open(path) as f:
            return int(f.read())
    return read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", nargs="?", choices=["all", "front", "worker"], default="all",
                        help="all: front and worker in one process (the default, and the one for SQLite)")
    parser.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--sqlite-path", default="purchases.db", help="without DATABASE_URL")
    parser.add_argument("--lease-ms", type=int, default=LEASE_MS)
    parser.add_argument("--batch", type=int, default=BATCH, help="jobs a worker claims at once")
    parser.add_argument("--poll-ms", type=int, default=1000, help="a worker's pause when nothing is due")
    parser.add_argument("--apple-timeout-s", type=float, default=10.0)
    parser.add_argument("--give-up-after-ms", type=int, default=GIVE_UP_AFTER_MS)
    args = parser.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    clock_path = os.environ.get("SERVICE_CLOCK_FILE")
    signer_config = None
    if os.environ.get("APPLE_API_KEY_FILE"):  # the StoreKit 2 flow: {"private_key_pem", "key_id", "issuer_id", "bundle_id"}
        with open(os.environ["APPLE_API_KEY_FILE"]) as f:
            signer_config = json.load(f)
    ledger = Ledger(sqlite_path=args.sqlite_path)
    service = PurchaseService(config, ledger, os.environ.get("APPLE_SHARED_SECRET", ""), os.environ.get("APPLE_BASE_URL"),
                              clock=file_clock(clock_path) if clock_path else now_ms, timeout_s=args.apple_timeout_s,
                              lease_ms=args.lease_ms, give_up_after_ms=args.give_up_after_ms,
                              signer_config=signer_config, api_base_url=os.environ.get("APPLE_API_BASE_URL"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # finish the job in hand, then exit
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.role == "worker":
        print(f"worker {service.worker_id} ({ledger.kind} ledger)", flush=True)
        service.work(stop, args.poll_ms / 1000, args.batch)
        return
    server = serve(service, args.host, args.port, args.poll_ms / 1000 if args.role == "all" else None)
    host, port = server.server_address[:2]
    print(f"{args.role} listening on {host}:{port} ({ledger.kind} ledger)", flush=True)
    stop.wait()
    server.shutdown()


if __name__ == "__main__":
    main()


def receipt_text(der: bytes) -> str:
    """What an app sends: the receipt file, base64-encoded."""
    return base64.b64encode(der).decode()
