"""A purchase service that keeps every subscriber current: the app creates an order, buys in the
App Store, then sends the receipt (or, with StoreKit 2, the transaction id); Apple then tells the
service about renewals, refunds and expiries through App Store Server Notifications V2, and the
service reads what it missed from the App Store Server API. iapverify decides what each answer
means; the ledger stores what Apple signed and delivers each purchase exactly once.

    python service.py                   # front and worker in one process, SQLite in ./purchases.db
    DATABASE_URL=postgresql://... python service.py front --port 8080   # any number of fronts
    DATABASE_URL=postgresql://... python service.py worker              # and of workers

The rooms: purchases.py (what the app sends, ownership, the settling transaction), notifications.py
(what Apple pushes), jobs.py (the worker), apple.py (asking Apple), work_queue.py (the queue's
kinds and schedule), observability.py (logs and metrics), ledger.py (what is stored;
ledger_database.py and ledger_schema.py under it), http_api.py (the HTTP API, FastAPI under
uvicorn; http_server.py its socket and connections). This file puts them together and is the
command line; README.md describes the API and the deployment.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Callable, Optional, Union

import iapverify
from apple import ENVIRONMENTS, PRODUCTION_URL, SANDBOX_URL, Apple, server_environment
from jobs import RECOVERY_EVERY_MS, RENEWAL_SLACK_MS, Worker
from ledger import Job, Ledger
from notifications import Notifications
from observability import Metrics, log_event, setup_logging
from purchases import ORDER_TTL_MS, Purchases, Refused, entitlement_view
from work_queue import (BATCH, CONSUMPTION, GIVE_UP_AFTER_MS, GIVE_UP_DELAY_MS, LEASE_MS, OUTAGE_RETRY_MS, RECEIPT,
                        RECOVERY, STOREKIT2, STOREKIT2_SIGNED, job_id)

__all__ = ["PurchaseService", "Refused", "entitlement_view", "job_id", "serve", "worker_health", "BATCH",
           "GIVE_UP_AFTER_MS", "GIVE_UP_DELAY_MS", "LEASE_MS", "OUTAGE_RETRY_MS", "RECEIPT", "STOREKIT2", "STOREKIT2_SIGNED", "RECOVERY",
           "CONSUMPTION"]


class PurchaseService:
    """The service's rooms, put together: what the app calls (Purchases), what Apple pushes
    (Notifications), the worker (Worker), all asking Apple through one Apple and writing to one
    Ledger. Its methods are what http_api.py and the command line use."""

    def __init__(self, config: dict, ledger: Ledger, shared_secret: str = "", apple_base_url: Optional[str] = None,
                 clock: Optional[Callable[[], int]] = None, timeout_s: float = 10.0, lease_ms: int = LEASE_MS,
                 give_up_after_ms: int = GIVE_UP_AFTER_MS, worker_id: Optional[str] = None,
                 signer_config: Optional[dict] = None, api_base_url: Union[str, dict, None] = None,
                 heartbeat_ms: Optional[int] = None,
                 recovery_every_ms: int = RECOVERY_EVERY_MS, renewal_slack_ms: int = RENEWAL_SLACK_MS,
                 consumption_consent: bool = True, retention: Optional[dict] = None, order_ttl_ms: int = ORDER_TTL_MS):
        """signer_config enables the StoreKit 2 flow and the recovery jobs. api_base_url (tests only)
        sends those calls to a fake App Store Server API: one URL, or {"Production": ...,
        "Sandbox": ...} (keys in any case). Every decision uses the database's clock (ledger.now()), and so
        do the bearer tokens; `clock` (tests only) replaces it. timeout_s bounds each call to Apple
        as a whole (connecting, sending, reading), not each read; a history read page after page
        has its apple.HISTORY_DEADLINE_S. retention: see Notifications. order_ttl_ms: a pending
        order expires this long after it was made."""
        self.config = config
        self.verifier = iapverify.Verifier(config)
        self.signer: Optional[iapverify.Signer] = None
        if signer_config is not None:
            if isinstance(api_base_url, dict):   # the signer's test_base_url: one URL, or one per environment
                signer_config = dict(signer_config, test_base_url={server_environment(k): v.rstrip("/")
                                                                   for k, v in api_base_url.items() if v})
            elif api_base_url:
                signer_config = dict(signer_config, test_base_url=api_base_url.rstrip("/"))
            self.signer = iapverify.Signer(signer_config)
        self.ledger = ledger
        if clock is not None:
            ledger.clock = clock
        self.metrics = Metrics(ledger)
        urls = ({"Production": apple_base_url.rstrip("/") + "/production/verifyReceipt",
                 "Sandbox": apple_base_url.rstrip("/") + "/sandbox/verifyReceipt"} if apple_base_url
                else {"Production": PRODUCTION_URL, "Sandbox": SANDBOX_URL})
        self.apple = Apple(self.verifier, self.signer, urls, shared_secret, timeout_s, self.metrics, self.clock)
        self.purchases = Purchases(config, self.verifier, ledger, self.apple, self.metrics, self.signer is not None,
                                   order_ttl_ms)
        self.notifications = Notifications(self.verifier, ledger, self.purchases, self.metrics, self.signer, retention)
        environments = [e for e in config.get("environments", ["Production"]) if e in ENVIRONMENTS]
        self.worker = Worker(ledger, self.apple, self.purchases, self.notifications, environments,
                             lease_ms=lease_ms, heartbeat_ms=heartbeat_ms, give_up_after_ms=give_up_after_ms,
                             recovery_every_ms=recovery_every_ms, renewal_slack_ms=renewal_slack_ms,
                             consumption_consent=consumption_consent, worker_id=worker_id)

    def clock(self) -> int:
        """Now, by the database's clock."""
        return self.ledger.now()

    # -- the app's calls (purchases.py) -------------------------------------------------------------

    def create_order(self, user_id: str, product_id: str) -> str:
        return self.purchases.create_order(user_id, product_id)

    def submit_receipt(self, user_id: str, receipt: str, environment: str = "Production", attempt: int = 1) -> dict:
        return self.purchases.submit_receipt(user_id, receipt, environment, attempt)

    def submit_transaction(self, user_id: str, transaction_id: str, environment: str = "Production",
                           attempt: int = 1) -> dict:
        return self.purchases.submit_transaction(user_id, transaction_id, environment, attempt)

    def submit_signed_transaction(self, user_id: str, signed_transaction: str) -> dict:
        return self.purchases.submit_signed_transaction(user_id, signed_transaction)

    def entitlements(self, user_id: str) -> dict:
        return self.purchases.entitlements(user_id)

    # -- Apple's pushes (notifications.py) ------------------------------------------------------------

    def handle_notification(self, signed_payload: str, source: str = "push") -> tuple[int, dict]:
        return self.notifications.handle_notification(signed_payload, source)

    def handle_realtime_request(self, signed_payload: str) -> tuple[int, dict]:
        return self.notifications.handle_realtime_request(signed_payload)

    # -- the worker (jobs.py) -----------------------------------------------------------------------

    def ensure_recovery_jobs(self) -> None:
        self.worker.ensure_recovery_jobs()

    def run_due_jobs(self, limit: int = BATCH, stop: Optional[threading.Event] = None) -> list[dict]:
        return self.worker.run_due_jobs(limit, stop)

    def run_job(self, job: Job) -> dict:
        return self.worker.run_job(job)

    def retry_pending(self) -> list[dict]:
        return self.worker.retry_pending()

    def work(self, stop: threading.Event, poll_s: float = 1.0, batch: int = BATCH) -> None:
        self.worker.work(stop, poll_s, batch)

    @property
    def last_pass(self) -> Optional[float]:
        return self.worker.last_pass

    @last_pass.setter
    def last_pass(self, value: Optional[float]) -> None:
        self.worker.last_pass = value

    # -- health -------------------------------------------------------------------------------------

    def health(self) -> dict:
        """The operator's view of the queue (GET /jobs): counts and ages, not for the public."""
        return {"ok": True, "ledger": self.ledger.kind, "jobs": self.ledger.queue_counts(self.clock())}

    def ready(self, timeout_s: float = 1.0) -> dict:
        """Readiness: the database answers within timeout_s (raises otherwise). No business counts."""
        self.ledger.ping(timeout_s)
        return {"ok": True, "ledger": self.ledger.kind}


def serve(service: PurchaseService, host: str, port: int, retry_every_s: Optional[float] = 5.0, **kwargs):
    """The HTTP front (http_api.py) in a background thread; with retry_every_s, a worker thread too."""
    from http_api import serve as serve_http
    return serve_http(service, host, port, retry_every_s, **kwargs)


def file_clock(path: str) -> Callable[[], int]:
    """Tests only: the time is the integer in this file, so leases and backoff move when a test says."""
    def read() -> int:
        with open(path) as f:
            return int(f.read())
    return read


def positive(kind: type) -> Callable[[str], Union[int, float]]:
    """An argparse type: a number above zero (`--batch -5` or `--lease-ms 0` stop the start with a message)."""
    def parse(text: str) -> Union[int, float]:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a {'whole ' if kind is int else ''}number, not {text!r}")
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
        return value
    return parse


def proxy_list(text: str) -> tuple:
    """--trusted-proxies: addresses or networks, comma-separated (127.0.0.1,10.0.0.0/8)."""
    import ipaddress
    try:
        return tuple(str(ipaddress.ip_network(part.strip(), strict=False)) for part in text.split(",") if part.strip())
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def port_number(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 0 to 65535, not {text!r}")
    return int(text)


def worker_health(service: PurchaseService, host: str, port: int, live_within_s: float):
    """A worker's own small HTTP server: /livez (its loop started a pass within live_within_s),
    /readyz (the database answers within a second) and /metrics (its counters)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from prometheus_client import CONTENT_TYPE_LATEST

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body, kind = 404, b'{"error": "not found"}', "application/json"
            if self.path == "/livez":
                last = service.last_pass
                live = last is not None and time.monotonic() - last < live_within_s
                status, body = (200, b'{"ok": true}') if live else (503, b'{"ok": false, "error": "the worker loop is stuck"}')
            elif self.path in ("/readyz", "/health"):
                try:
                    status, body = 200, json.dumps(service.ready()).encode()
                except Exception:
                    status, body = 503, b'{"ok": false, "error": "the database does not answer"}'
            elif self.path == "/metrics":
                status, body, kind = 200, service.metrics.text(), CONTENT_TYPE_LATEST
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    if os.environ.get("SERVICE_PROFILE"):   # make service-bench: where the CPU goes (profiling.py)
        import profiling
        profiling.start(os.environ["SERVICE_PROFILE"])
    try:
        run(sys.argv[1:])
    except SystemExit:
        raise
    except Exception as e:   # one JSON line an operator's log search finds, not a traceback
        setup_logging()
        log_event(logging.ERROR, "startup_failed", error=f"{type(e).__name__}: {e}"[:1000])
        raise SystemExit(1)


def run(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("role", nargs="?", choices=["all", "front", "worker"], default="all",
                        help="all: front and worker in one process (the default, and the one for SQLite)")
    parser.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.json"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port_number, default=8080)
    parser.add_argument("--sqlite-path", default="purchases.db", help="without DATABASE_URL")
    parser.add_argument("--pool-size", type=positive(int), default=10, help="PostgreSQL connections per process")
    parser.add_argument("--db-timeout-s", type=positive(float), default=5.0,
                        help="the longest a request waits for a database connection before it fails")
    parser.add_argument("--lease-ms", type=positive(int), default=LEASE_MS)
    parser.add_argument("--heartbeat-ms", type=positive(int), default=None, help="lease renewal period (default: lease / 3)")
    parser.add_argument("--batch", type=positive(int), default=BATCH, help="jobs a worker claims at once")
    parser.add_argument("--poll-ms", type=positive(int), default=1000, help="a worker's pause when nothing is due")
    parser.add_argument("--apple-timeout-s", type=positive(float), default=10.0, help="deadline of each call to Apple, whole")
    parser.add_argument("--give-up-after-ms", type=positive(int), default=GIVE_UP_AFTER_MS)
    parser.add_argument("--recovery-every-ms", type=positive(int), default=RECOVERY_EVERY_MS,
                        help="how often the worker reads Apple's notification history")
    parser.add_argument("--allow-sandbox", action="store_true", default=os.environ.get("ALLOW_SANDBOX") == "1",
                        help="also accept Sandbox purchases (App Review buys in the sandbox); ALLOW_SANDBOX=1")
    parser.add_argument("--body-timeout-s", type=positive(float), default=None, help="the whole request body must arrive within")
    parser.add_argument("--head-timeout-s", type=positive(float), default=None,
                        help="a request's line and headers must arrive within")
    parser.add_argument("--max-concurrency", type=positive(int), default=None, help="connections and requests at once")
    parser.add_argument("--claims-per-user", type=positive(int), default=None,
                        help="purchase claims a user may send per minute (per front)")
    parser.add_argument("--claims-per-address", type=positive(int), default=None,
                        help="purchase claims one client address may send per minute (per front; behind a trusted proxy)")
    parser.add_argument("--orders-per-user", type=positive(int), default=None, help="orders a user may make per minute")
    parser.add_argument("--orders-per-address", type=positive(int), default=None,
                        help="orders one client address may make per minute (behind a trusted proxy)")
    parser.add_argument("--order-ttl-ms", type=positive(int), default=ORDER_TTL_MS,
                        help="a pending order expires this long after it was made")
    parser.add_argument("--max-connections", type=positive(int), default=None, help="connections a front holds at once")
    parser.add_argument("--connections-per-address", type=positive(int), default=None,
                        help="connections one client address may hold at once (a trusted proxy: no cap)")
    parser.add_argument("--apple-concurrency", type=positive(int), default=None,
                        help="calls to Apple a front's API makes at once; a claim beyond is queued (202)")
    parser.add_argument("--trusted-proxies", type=proxy_list, default=None,
                        help="comma-separated addresses or networks whose X-Forwarded-For is believed (nginx's)")
    parser.add_argument("--health-port", "--metrics-port", dest="health_port", type=port_number, default=None,
                        help="worker: serve /livez, /readyz and /metrics on this port")
    parser.add_argument("--retention", default=None,
                        help="JSON file: product id -> the answer to Apple's realtime requests about it")
    args = parser.parse_args(argv)
    if args.heartbeat_ms is not None and args.heartbeat_ms >= args.lease_ms:
        parser.error(f"argument --heartbeat-ms: must be below --lease-ms ({args.lease_ms}), or a lease ends before it is renewed")
    setup_logging()
    import http_api
    auth = http_api.auth_from_env() if args.role != "worker" else None   # a front without its secrets: stop now
    with open(args.config) as f:
        config = json.load(f)
    if not os.environ.get("APPLE_SHARED_SECRET"):
        log_event(logging.WARNING, "no_shared_secret",
                  reason="APPLE_SHARED_SECRET is not set: Apple refuses auto-renewable receipts without it")
    if args.allow_sandbox and "Sandbox" not in config.get("environments", []):
        config["environments"] = list(config.get("environments", ["Production"])) + ["Sandbox"]
        log_event(logging.WARNING, "sandbox_accepted", reason="--allow-sandbox: sandbox purchases grant access")
    clock_path = os.environ.get("SERVICE_CLOCK_FILE")
    signer_config = None
    if os.environ.get("APPLE_API_KEY_FILE"):  # the StoreKit 2 flow: {"private_key_pem", "key_id", "issuer_id", "bundle_id"}
        with open(os.environ["APPLE_API_KEY_FILE"]) as f:
            signer_config = json.load(f)
    api_base = os.environ.get("APPLE_API_BASE_URL")
    if api_base and api_base.startswith("{"):
        api_base = json.loads(api_base)
    ledger = Ledger(sqlite_path=args.sqlite_path, pool_size=args.pool_size, pool_timeout_s=args.db_timeout_s,
                    clock=file_clock(clock_path) if clock_path else None)
    service = PurchaseService(config, ledger, os.environ.get("APPLE_SHARED_SECRET", ""), os.environ.get("APPLE_BASE_URL"),
                              timeout_s=args.apple_timeout_s, lease_ms=args.lease_ms, heartbeat_ms=args.heartbeat_ms,
                              give_up_after_ms=args.give_up_after_ms, signer_config=signer_config,
                              api_base_url=api_base, recovery_every_ms=args.recovery_every_ms,
                              consumption_consent=os.environ.get("CONSUMPTION_CONSENT", "1") != "0",
                              retention=json.load(open(args.retention)) if args.retention else None,
                              order_ttl_ms=args.order_ttl_ms)
    service.ensure_recovery_jobs()   # with a signer: the recurring history reads, due at once the first time
    stop = threading.Event()
    if args.role == "worker":
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # finish the job in hand, then exit
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        if args.health_port is not None:
            worker_health(service, args.host, args.health_port, live_within_s=max(60.0, service.worker.lease_ms / 1000))
        print(f"worker {service.worker.worker_id} ({ledger.kind} ledger)", flush=True)
        service.work(stop, args.poll_ms / 1000, args.batch)
        return
    assert auth is not None
    limits = http_api.Limits(**{k: getattr(args, k) for k in (
        "body_timeout_s", "head_timeout_s", "max_concurrency", "claims_per_user", "claims_per_address", "orders_per_user",
        "orders_per_address", "max_connections", "connections_per_address", "apple_concurrency", "trusted_proxies")
        if getattr(args, k) is not None})
    sock = http_api.bind(args.host, args.port)
    server = http_api.make_server(http_api.create_app(service, auth, limits), sock, limits)
    worker = None
    if args.role == "all":
        worker = threading.Thread(target=service.work, args=(stop, args.poll_ms / 1000, args.batch), daemon=True)
        worker.start()
    host, port = sock.getsockname()[:2]
    print(f"{args.role} listening on {host}:{port} ({ledger.kind} ledger)", flush=True)
    server.run(sockets=[sock])   # until SIGTERM or SIGINT: uvicorn finishes the requests in hand
    stop.set()
    if worker is not None:
        worker.join(60)           # the worker finishes the job in hand and gives back the rest


if __name__ == "__main__":
    main()
