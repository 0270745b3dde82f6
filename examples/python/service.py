"""A purchase service that keeps every subscriber current: the app creates an order, buys in the
App Store, then sends the receipt (or, with StoreKit 2, the transaction id); Apple then tells the
service about renewals, refunds and expiries through App Store Server Notifications V2, and the
service reads what it missed from the App Store Server API. iapverify decides what each answer
means; the ledger stores what Apple signed and delivers each purchase exactly once.

    python service.py                   # front and worker in one process, SQLite in ./purchases.db
    DATABASE_URL=postgresql://... python service.py front --port 8080   # any number of fronts
    DATABASE_URL=postgresql://... python service.py worker              # and of workers

The HTTP API (http_api.py, FastAPI under uvicorn) is described in README.md, with the deployment.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import logging
import os
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass
from typing import Callable, Optional, Union

import iapverify
from ledger import Job, Ledger

PRODUCTION_URL = "https://buy.itunes.apple.com/verifyReceipt"
SANDBOX_URL = "https://sandbox.itunes.apple.com/verifyReceipt"
GIVE_UP_DELAY_MS = 15 * 60 * 1000            # after the library's `give_up` on a configuration problem, a new round later
OUTAGE_RETRY_MS = 60 * 1000                  # while Apple is unreachable or failing: try again this often (capped backoff)
GIVE_UP_AFTER_MS = 3 * 24 * 3600 * 1000      # a job still temporary this long after it was stored ends as given_up
LEASE_MS = 5 * 60 * 1000                     # renewed while a job runs (heartbeat); see README.md
BATCH = 5
# Apple unreachable (refused, reset, timeout, HTTP error) is the same situation as its status 21005
# ("the receipt server was temporarily unable to provide the receipt"): asking the library about
# this body gives the same backoff and the same give_up after the last attempt.
UNREACHABLE_BODY = b'{"status": 21005}'
# StoreKit 2 jobs share the queue with receipts: their `receipt` column is a prefix and the
# transaction id (a base64 receipt never contains a colon). STOREKIT2: the app sent only an id,
# which proves nothing (ids are guessable): the purchase is the sender's only if its
# appAccountToken names them. STOREKIT2_SIGNED: the app sent the signed transaction StoreKit 2
# gave it, verified before the job was stored: possession is the proof.
STOREKIT2 = "storekit2:"
STOREKIT2_SIGNED = "storekit2-signed:"
MAX_PAGES = 1000   # a history longer than this is refused, not followed forever
# Recovery jobs (one per environment) read Apple's notification history and ask about overdue
# subscriptions; consumption jobs answer a CONSUMPTION_REQUEST. Both share the queue.
RECOVERY = "recovery:"
CONSUMPTION = "consumption:"
RECOVERY_EVERY_MS = 60 * 60 * 1000           # how often the history is read when all is well
HISTORY_OVERLAP_MS = 10 * 60 * 1000          # each read starts this much before the last one ended
HISTORY_MAX_BACK_MS = 179 * 24 * 3600 * 1000 # Apple keeps 180 days of notification history
RENEWAL_SLACK_MS = 60 * 60 * 1000            # a renewal this late without news is asked about
MAX_RESPONSE_BYTES = 32 * 1024 * 1024        # an answer from Apple larger than this is refused
# Apple's two servers, spelled as Apple spells environments (iapverify.ServerEnvironment). Jobs
# stored by release 0.1 of this example say "production"/"sandbox": read in any case.
ENVIRONMENTS = (iapverify.ServerEnvironment.PRODUCTION.value, iapverify.ServerEnvironment.SANDBOX.value)


def server_environment(name: str) -> str:
    """"Production" or "Sandbox" for a server environment given in any case; else ValueError."""
    for env in ENVIRONMENTS:
        if isinstance(name, str) and name.lower() == env.lower():
            return env
    raise ValueError(f"environment must be Production or Sandbox, not {name!r}")

log = logging.getLogger("purchases")


class JSONLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, event and its fields (ids, verdicts, outcomes)."""

    def format(self, record: logging.LogRecord) -> str:
        doc = {"ts": round(record.created, 3), "level": record.levelname.lower(), "event": record.getMessage()}
        doc.update(getattr(record, "fields", {}))
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(doc, default=str)


def log_event(level: int, event: str, **fields) -> None:
    log.log(level, event, extra={"fields": {k: v for k, v in fields.items() if v is not None}})


def setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.getLogger("uvicorn.access").disabled = True   # requests are logged by the service itself


class Refused(Exception):
    """A purchase that belongs to someone else, or a request that cannot be applied."""

    def __init__(self, verdict: str, reason: str):
        super().__init__(reason)
        self.verdict, self.reason = verdict, reason


@dataclass(frozen=True)
class Answer:
    """What Apple's answers for one receipt came to, before the ledger is touched."""
    kind: str                     # accept | later | give_up | fix_configuration | reject
    environment: str              # the host that answered: Production or Sandbox
    attempt: int
    body: bytes = b""             # accept: the body to settle
    delay_ms: int = 0             # later: the library's retry_after_ms
    why: str = ""
    verdict: str = ""
    transactions: Optional[tuple] = None  # StoreKit 2: the verified transactions of every page
    renewals: Optional[tuple] = None      # and their renewal infos
    invalid: bool = False                 # reject: refused by the library's own checks, Apple never asked
    claimed_id: Optional[str] = None      # StoreKit 2: the transaction id the app claimed
    proven: bool = False                  # and whether it sent the signed transaction as proof


def job_id(user_id: str, receipt: str) -> str:
    """One queue entry per user and receipt, whoever stores it."""
    return hashlib.sha256(f"{user_id}:{receipt}".encode()).hexdigest()


class Metrics:
    """What an operator graphs, in Prometheus' text format (GET /metrics). Each service has its own
    registry, so several in one process (tests) do not mix; the queue is read from the database
    when scraped, so any front reports the whole queue."""

    def __init__(self, ledger: Ledger):
        from prometheus_client import CollectorRegistry, Counter, Histogram
        from prometheus_client.core import GaugeMetricFamily
        self.registry = CollectorRegistry()
        self.verdicts = Counter("iapverify_verdicts", "Verdicts given, per entry point",
                                ["entry_point", "verdict"], registry=self.registry)
        self.apple_calls = Counter("apple_calls", "Calls to Apple, per API and outcome",
                                   ["api", "outcome"], registry=self.registry)
        self.notification_lag = Histogram("notification_lag_seconds", "Received minus signed, per notification",
                                           ["source"], registry=self.registry,
                                           buckets=(1, 5, 30, 60, 300, 1800, 3600, 6 * 3600, 86400, 7 * 86400))
        self.refusals = Counter("ownership_refusals", "Purchases refused because another user owns them",
                                ["entry_point"], registry=self.registry)
        self.claim_refusals = Counter("claim_refusals", "Claims refused before Apple was asked, per reason",
                                      ["entry_point", "reason"], registry=self.registry)
        self.http = Histogram("http_request_duration_seconds", "HTTP requests by route, method and status",
                              ["route", "method", "status"], registry=self.registry,
                              buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.deliveries = Counter("deliveries", "Purchases delivered (each transaction once)", registry=self.registry)
        self.revocations = Counter("revocations", "Deliveries taken back (refunds, revocations)", registry=self.registry)

        class Queue:
            def collect(self):
                counts = ledger.queue_counts(ledger.now())
                depth = GaugeMetricFamily("queue_jobs", "Jobs in the work queue", labels=["state"])
                for state in ("pending", "due", "leased"):
                    depth.add_metric([state], counts[state])
                yield depth
                yield GaugeMetricFamily("queue_oldest_due_wait_seconds", "How long the oldest due job has waited",
                                        value=counts["oldest_due_wait_ms"] / 1000)
                yield GaugeMetricFamily("queue_given_up_jobs", "Jobs given up (a user paid and did not get it)",
                                        value=counts["given_up"])
                # Every worker's job outcomes, from the database: any front reports them, no worker port needed.
                finished = GaugeMetricFamily("jobs_finished", "Jobs ended, per outcome (all workers)", labels=["outcome"])
                for outcome, n in counts["finished"].items():
                    finished.add_metric([outcome], n)
                yield finished

        class Pool:
            def collect(self):
                stats = ledger._pool.get_stats() if getattr(ledger, "_pool", None) is not None else {}
                for key, what in (("pool_size", "Database connections open"),
                                  ("pool_available", "Database connections idle in the pool"),
                                  ("requests_waiting", "Requests waiting for a database connection")):
                    yield GaugeMetricFamily(f"db_{key}", what, value=stats.get(key, 0))
        self.registry.register(Queue())
        self.registry.register(Pool())

    def text(self) -> bytes:
        from prometheus_client import generate_latest
        return generate_latest(self.registry)


class PurchaseService:
    def __init__(self, config: dict, ledger: Ledger, shared_secret: str = "", apple_base_url: Optional[str] = None,
                 clock: Optional[Callable[[], int]] = None, timeout_s: float = 10.0, lease_ms: int = LEASE_MS,
                 give_up_after_ms: int = GIVE_UP_AFTER_MS, worker_id: Optional[str] = None,
                 signer_config: Optional[dict] = None, api_base_url: Union[str, dict, None] = None,
                 token_clock: Optional[Callable[[], int]] = None, heartbeat_ms: Optional[int] = None,
                 recovery_every_ms: int = RECOVERY_EVERY_MS, renewal_slack_ms: int = RENEWAL_SLACK_MS,
                 consumption_consent: bool = True, retention: Optional[dict] = None):
        """signer_config enables the StoreKit 2 flow and the recovery jobs. api_base_url (tests only)
        sends those calls to a fake App Store Server API: one URL, or {"Production": ...,
        "Sandbox": ...} (keys in any case). Every decision uses the database's clock (ledger.now()); `clock` (tests
        only) replaces it. Bearer tokens are issued at token_clock() (default: this host's real
        clock, which is what Apple checks them against). timeout_s bounds each call to Apple as a
        whole (connecting, sending, reading), not each read. retention maps a product id to the
        answer given to Apple's Retention Messaging realtime requests about it: the fields of the
        library's realtime_response signature kind (message_identifier, alternate_product_id,
        promotional_offer)."""
        self.config = config
        self.retention = dict(retention or {})
        self.verifier = iapverify.Verifier(config)
        self.environments = [e for e in config.get("environments", ["Production"]) if e in ENVIRONMENTS]
        self.signers: dict = {}
        if isinstance(api_base_url, dict):
            api_base_url = {server_environment(k): v for k, v in api_base_url.items()}
        if signer_config is not None:
            for environment in ENVIRONMENTS:
                base = api_base_url.get(environment) if isinstance(api_base_url, dict) else api_base_url
                self.signers[environment] = iapverify.Signer(dict(signer_config, test_base_url=base.rstrip("/"))
                                                             if base else signer_config)
        self.token_clock = token_clock
        self.ledger = ledger
        if clock is not None:
            ledger.clock = clock
        self.secret = shared_secret
        self.urls = ({"Production": apple_base_url.rstrip("/") + "/production/verifyReceipt",
                      "Sandbox": apple_base_url.rstrip("/") + "/sandbox/verifyReceipt"} if apple_base_url
                     else {"Production": PRODUCTION_URL, "Sandbox": SANDBOX_URL})
        self.timeout_s = timeout_s
        self.lease_ms = lease_ms
        self.heartbeat_ms = heartbeat_ms if heartbeat_ms is not None else lease_ms // 3
        self.give_up_after_ms = give_up_after_ms
        self.recovery_every_ms = recovery_every_ms
        self.renewal_slack_ms = renewal_slack_ms
        self.consumption_consent = consumption_consent
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.metrics = Metrics(ledger)
        self.last_pass: Optional[float] = None   # when the worker loop last started a pass (monotonic)

    def clock(self) -> int:
        """Now, by the database's clock."""
        return self.ledger.now()

    # -- the front: what the app calls ----------------------------------------------------------

    def create_order(self, user_id: str, product_id: str) -> str:
        order_id = uuid.uuid4().hex
        with self.ledger.transaction() as db:   # created_ms by the database's clock: it is matched to purchases
            self.ledger.create_order_in(db, order_id, user_id, product_id, self.ledger.now(db))
        return order_id

    def submit_receipt(self, user_id: str, receipt: str, environment: str = "Production", attempt: int = 1) -> dict:
        """Verifies through Apple (the /verifyReceipt host `environment` first) and delivers, or
        queues the receipt. Returns what happened, for the app."""
        return self._submit(user_id, receipt, server_environment(environment), attempt)

    def _submit(self, user_id: str, receipt: str, environment: str, attempt: int) -> dict:
        """What the front does for a receipt or a StoreKit 2 transaction (`receipt` is then
        STOREKIT2 + its id): ask Apple once, then settle, refuse, or queue for a worker."""
        answer = self._ask(receipt, environment, attempt)
        key = job_id(user_id, receipt)
        entry = "storekit2" if receipt.startswith((STOREKIT2, STOREKIT2_SIGNED)) else "receipt"
        if answer.invalid:   # garbage, another app's or a forged receipt: refused before Apple, nothing stored
            self.metrics.verdicts.labels(entry, answer.verdict).inc()
            self.metrics.claim_refusals.labels(entry, answer.verdict).inc()
            log_event(logging.INFO, "refused", entry_point=entry, user_id=user_id, verdict=answer.verdict, reason=answer.why)
            return {"status": "invalid", "verdict": answer.verdict, "reason": answer.why}
        if answer.kind == "accept":
            def settle(db) -> dict:
                self.ledger.wake_waiting(db, self.ledger.now(db))   # Apple answers again: wake who waited
                result = self._settle(db, user_id, answer)
                if result["status"] == "accepted":
                    self.ledger.supersede(db, key, self.ledger.now(db))
                return result
            result = self.ledger.run(settle)
            self.metrics.verdicts.labels(entry, result.get("verdict", "valid")).inc()
            return result
        if answer.kind == "reject":
            self.metrics.verdicts.labels(entry, answer.verdict or "rejected").inc()
            log_event(logging.INFO, "refused", entry_point=entry, user_id=user_id, verdict=answer.verdict, reason=answer.why)
            return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
        if answer.kind == "later":
            next_attempt, delay = answer.attempt + 1, answer.delay_ms
        else:  # give_up: a new round soon; fix_configuration: kept until the secret is fixed
            if answer.kind == "fix_configuration":
                log_event(logging.ERROR, "fix_configuration", reason=answer.why)  # an operator must act
            next_attempt, delay = 1, OUTAGE_RETRY_MS if answer.kind == "give_up" else GIVE_UP_DELAY_MS

        def store(db) -> None:
            now = self.ledger.now(db)
            self.ledger.enqueue(db, key, user_id, receipt, answer.environment, next_attempt, now + delay, now, answer.why)
        self.ledger.run(store)
        self.metrics.verdicts.labels(entry, "temporarily_unavailable").inc()
        log_event(logging.INFO, "queued", entry_point=entry, user_id=user_id, job=key[:16], why=answer.why,
                  retry_after_ms=delay)
        return {"status": "pending", "retry_after_ms": delay, "why": answer.why}

    def submit_transaction(self, user_id: str, transaction_id: str, environment: str = "Production",
                           attempt: int = 1) -> dict:
        """StoreKit 2: the app sends the id of a transaction it just finished. The service reads the
        customer's whole transaction history from the App Store Server API (every page, every
        signed item verified), delivers what is new exactly once, and answers with the
        entitlements; or queues the call when Apple says later. Returns what happened, for the app."""
        if not self.signers:
            raise ValueError("the StoreKit 2 flow needs a signer config (APPLE_API_KEY_FILE)")
        if not transaction_id:
            raise ValueError("transaction_id must not be empty")
        return self._submit(user_id, STOREKIT2 + transaction_id, server_environment(environment), attempt)

    def submit_signed_transaction(self, user_id: str, signed_transaction: str) -> dict:
        """StoreKit 2, the proof an app should send: the signed transaction (JWS) StoreKit 2 gave it.
        The library verifies it first (Apple's signature and chain, this app, an accepted
        environment); a token that fails is refused at once (status `invalid`, Apple never asked).
        Then as submit_transaction, with the verified id and environment, and the purchase goes to
        the sender unless its appAccountToken or an earlier owner says otherwise."""
        if not self.signers:
            raise ValueError("the StoreKit 2 flow needs a signer config (APPLE_API_KEY_FILE)")
        r = self.verifier.verify_jws(signed_transaction.encode(), now_ms=self.clock(), options={"kind": "transaction"})
        txn = r.transaction if r.valid else None
        if txn is None or not txn.transaction_id:
            verdict = r.verdict if not r.valid else "malformed"
            reason = r.reason if not r.valid else "not a signed transaction"
            self.metrics.verdicts.labels("storekit2", verdict).inc()
            self.metrics.claim_refusals.labels("storekit2", verdict).inc()
            log_event(logging.INFO, "refused", entry_point="storekit2", user_id=user_id, verdict=verdict, reason=reason)
            return {"status": "invalid", "verdict": verdict, "reason": reason}
        environment = str(getattr(r.environment, "value", r.environment))
        if environment not in ENVIRONMENTS:   # Xcode or LocalTesting: no App Store Server API to ask
            return {"status": "invalid", "verdict": "environment_rejected",
                    "reason": f"a {environment} transaction has no App Store Server history"}
        return self._submit(user_id, STOREKIT2_SIGNED + txn.transaction_id, environment, 1)

    def entitlements(self, user_id: str) -> dict:
        """What the user is entitled to now: the library's compute_entitlements over every
        statement Apple signed about the user's purchases, at the database's now."""
        with self.ledger.transaction() as db:
            now = self.ledger.now(db)
            statements = self.ledger.user_statements(db, user_id)
        result = self.verifier.compute_entitlements(statements, now_ms=now)
        if not result.valid:   # a stored statement the library cannot read: say so, grant nothing
            log_event(logging.ERROR, "entitlements_unreadable", user_id=user_id, verdict=result.verdict, reason=result.reason)
            raise RuntimeError(f"stored statements of {user_id} are unreadable: {result.reason}")
        return {"user_id": user_id, "now_ms": now,
                "entitlements": [entitlement_view(e) for e in result.raw["entitlements"]]}

    # -- App Store Server Notifications V2 ----------------------------------------------------------

    def handle_realtime_request(self, signed_payload: str) -> tuple[int, dict]:
        """Apple's Retention Messaging realtime request: a subscriber is about to cancel, and Apple
        asks what to show them. Returns (HTTP status, body). 200 with the answer (the same one
        again for a request Apple repeats; {} when there is nothing to offer for the product or the
        request is a replay); 400 when the token is forged, foreign or not a realtime request."""
        now = self.clock()
        r = self.verifier.verify_jws(signed_payload.encode(), now_ms=now, options={"kind": "realtime_request"})
        self.metrics.verdicts.labels("realtime_request", r.verdict).inc()
        if not r.valid or r.realtime_request is None:
            log_event(logging.WARNING, "realtime_request_refused", verdict=r.verdict, reason=r.reason)
            return 400, {"status": "refused", "verdict": r.verdict, "reason": r.reason}
        request = r.realtime_request
        if request["action"] == "ignore_stale":
            log_event(logging.WARNING, "realtime_request_stale", request_identifier=request["request_identifier"])
            return 200, {}
        with self.ledger.transaction() as db:
            answer = self.ledger.realtime_answer(db, request["request_identifier"])
        if answer is not None:
            return 200, json.loads(answer)
        rule = self.retention.get(request["product_id"])
        signer = self.signers.get(r.environment) or next(iter(self.signers.values()), None)
        body: dict = {}
        if rule and signer:
            # Each answer its own nonce: a promotional offer's signature is good for one use.
            signed = signer.sign({"kind": "realtime_response", "nonce": str(uuid.uuid4()), **rule}, now_ms=now)
            body = json.loads(signed.body or "{}")
        with self.ledger.transaction() as db:
            if not self.ledger.record_realtime(db, request["request_identifier"], request["original_transaction_id"],
                                               request["product_id"], json.dumps(body), now):
                body = json.loads(self.ledger.realtime_answer(db, request["request_identifier"]) or "{}")
        log_event(logging.INFO, "realtime_request_answered", request_identifier=request["request_identifier"],
                  product_id=request["product_id"], answer=next(iter(body), "nothing"))
        return 200, body

    def handle_notification(self, signed_payload: str, source: str = "push") -> tuple[int, dict]:
        """Verifies a notification and applies it in one database transaction. Returns (HTTP
        status for Apple, body). 200: applied, duplicate, stale or kept as data; 400: forged,
        foreign or not a notification; 409: its appAccountToken names another user than the one
        who owns the purchase. Nothing is written unless the answer is 200."""
        probe = self.verifier.verify_jws(signed_payload.encode(), now_ms=self.clock())
        if not probe.valid or probe.kind != "notification":
            verdict = probe.verdict if not probe.valid else "malformed"
            reason = probe.reason if not probe.valid else f"a {probe.kind}, not a notification"
            self.metrics.verdicts.labels("notification", verdict).inc()
            log_event(logging.WARNING, "notification_refused", source=source, verdict=verdict, reason=reason)
            return 400, {"status": "refused", "verdict": verdict, "reason": reason}
        n = probe.notification
        txn, renewal = n.get("transaction"), n.get("renewal_info")
        original = (txn or {}).get("original_transaction_id") or (renewal or {}).get("original_transaction_id")
        environment = (txn or {}).get("environment") or (renewal or {}).get("environment") or probe.environment

        def apply(db) -> tuple[int, dict]:
            now = self.ledger.now(db)
            if original:
                self.ledger.lock_subscription(db, original)
            if self.ledger.has_notification(db, n["notification_uuid"]):
                return 200, {"status": "ignore_duplicate", "notification_uuid": n["notification_uuid"]}
            owner = self._owner_for(db, txn, original, claimant=None) if original else None
            if owner:
                self.ledger.lock_user(db, owner)
            sub = self.ledger.subscription(db, original) if original else {}
            options: dict = {"seen_notification_uuids": self.ledger.seen_notifications(db, original)}
            if sub.get("last_signed_date_ms") is not None:
                options["last_signed_date_ms"] = int(sub["last_signed_date_ms"])
            r = self.verifier.verify_jws(signed_payload.encode(), now_ms=now, options=options)
            if not r.valid:   # it verified a moment ago: only the clock moved; Apple sends it again
                raise RuntimeError(f"notification {n['notification_uuid']} no longer verifies: {r.reason}")
            action = r.notification["action"]
            if action == "ignore_duplicate":
                return 200, {"status": action, "notification_uuid": n["notification_uuid"]}
            if owner and original:
                self.ledger.claim_owner(db, original, owner, self._via(txn, owner), now)
            # A stale notification's statements are still merged: each is kept only if Apple signed
            # it later than what is stored, so a late copy never undoes a newer one, and a
            # transaction seen only here is not lost. An unknown type grants nothing: kept as data.
            if action in ("apply", "send_consumption_info", "ignore_stale"):
                self._merge(db, [txn] if txn else [], [renewal] if renewal else [], now)
            self.ledger.record_notification(db, {
                **{k: n.get(k) for k in ("notification_uuid", "notification_type", "subtype", "signed_date_ms")},
                "original_transaction_id": original, "transaction_id": (txn or {}).get("transaction_id"),
                "user_id": owner, "received_ms": now, "action": action, "source": source,
                "signed_payload": signed_payload})
            if original:
                applied = action in ("apply", "send_consumption_info")
                self.ledger.note_news(db, original, environment, now, n.get("signed_date_ms") if applied else None)
            if action == "send_consumption_info" and txn and self.signers:
                env = environment if environment in ENVIRONMENTS else ENVIRONMENTS[0]
                self.ledger.enqueue(db, job_id("apple", CONSUMPTION + txn["transaction_id"]), owner or "",
                                    CONSUMPTION + txn["transaction_id"], env, 1, now, now, "consumption requested")
            body = {"status": action, "notification_uuid": n["notification_uuid"], "user_id": owner}
            if owner:
                planned = self._plan(db, owner, now)
                body.update(delivered=planned["delivered"], revoked=planned["revoked"])
            return 200, body

        try:
            status, body = self.ledger.run(apply)
        except Refused as e:
            self.metrics.verdicts.labels("notification", e.verdict).inc()
            self.metrics.refusals.labels("notification").inc()
            log_event(logging.WARNING, "notification_refused", source=source, notification_uuid=n["notification_uuid"],
                      original_transaction_id=original, verdict=e.verdict, reason=e.reason)
            return 409, {"status": "refused", "verdict": e.verdict, "reason": e.reason}
        self.metrics.verdicts.labels("notification", "valid").inc()
        if body["status"] != "ignore_duplicate" and n.get("signed_date_ms"):
            self.metrics.notification_lag.labels(source).observe(max(0, self.clock() - n["signed_date_ms"]) / 1000)
        log_event(logging.INFO, "notification", source=source, notification_uuid=n["notification_uuid"],
                  notification_type=n["notification_type"], subtype=n.get("subtype"), action=body["status"],
                  original_transaction_id=original, transaction_id=(txn or {}).get("transaction_id"),
                  user_id=body.get("user_id"), delivered=body.get("delivered"), revoked=body.get("revoked"))
        return status, body

    # -- ownership: a purchase for A never grants B ---------------------------------------------------

    @staticmethod
    def _token_user(txn: Optional[dict]) -> Optional[str]:
        """The user a transaction's appAccountToken names. A Family Sharing member's transaction
        is not theirs to name: it maps through its own original transaction instead."""
        if not txn or txn.get("in_app_ownership_type") == "FAMILY_SHARED":
            return None
        token = txn.get("app_account_token")
        return str(token).lower() if token else None

    def _via(self, txn: Optional[dict], owner: str) -> str:
        return "app_account_token" if self._token_user(txn) == owner else "first_claim"

    def _owner_for(self, db, txn: Optional[dict], original: str, claimant: Optional[str]) -> Optional[str]:
        """Who owns the purchase `original`: the user already recorded, else the one its
        appAccountToken names, else the claimant (the user submitting it). Raises Refused when
        the token, the record and the claimant disagree."""
        token_user = self._token_user(txn)
        recorded = self.ledger.owner(db, original)
        if token_user and recorded and token_user != recorded:
            raise Refused("owned_by_another_user", f"transaction {original}: its appAccountToken names another user"
                                                   " than the one who owns it")
        owner = recorded or token_user or claimant
        if claimant and owner != claimant:
            raise Refused("owned_by_another_user", f"transaction {original} belongs to another user")
        return owner

    # -- the worker: retries what the queue holds -------------------------------------------------

    def ensure_recovery_jobs(self) -> None:
        """One recurring recovery job per environment the config accepts (a worker calls this when
        it starts). The first run reads history from when the service first started."""
        if not self.signers:
            return

        def add(db) -> None:
            now = self.ledger.now(db)
            for env in self.environments:
                key = env.lower()      # the job's and the mark's names, as release 0.1 stored them
                self.ledger.set_mark(db, "history:" + key, now, only_if_missing=True)
                self.ledger.enqueue(db, job_id("apple", RECOVERY + key), "", RECOVERY + key, env, 1, now, now,
                                    "scheduled")
        self.ledger.run(add)

    def run_due_jobs(self, limit: int = BATCH, stop: Optional[threading.Event] = None) -> list[dict]:
        """One pass: claims up to `limit` due jobs and runs them one by one. Once `stop` is set, the
        jobs not started yet are given back instead of waiting for their leases to end. The whole
        batch's leases are renewed while it runs (the heartbeat), so a slow Apple never lets
        another worker take a job this one still works on."""
        jobs = self.ledger.claim(self.worker_id, None, self.lease_ms, limit)
        if not jobs:
            return []
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(jobs[0], done), daemon=True)
        beat.start()
        results = []
        try:
            for job in jobs:
                if stop is not None and stop.is_set():
                    self.ledger.release(job, self.clock())
                else:
                    results.append(self.run_job(job))
        finally:
            done.set()
            beat.join()
        return results

    def _heartbeat(self, job: Job, done: threading.Event) -> None:
        while not done.wait(self.heartbeat_ms / 1000):
            try:
                self.ledger.heartbeat(job, self.lease_ms)
            except Exception as e:  # the database is away: the lease may lapse; the late outcome is then not written
                log_event(logging.WARNING, "heartbeat_failed", job=job.id, error=f"{type(e).__name__}")

    def retry_pending(self) -> list[dict]:
        """Every job due now, in batches (POST /jobs/retry: an operator who knows Apple is back, or a
        cron job when no worker runs); the purchases waiting out an outage are made due first."""
        self.ledger.run(lambda db: self.ledger.wake_waiting(db, self.ledger.now(db)))
        results: list[dict] = []
        while True:
            batch = self.run_due_jobs(100)
            results += batch
            if not batch:
                return results

    def run_job(self, job: Job) -> dict:
        """One attempt for a claimed job. Its outcome is written with its effects, in one database
        transaction, and only while the lease is still ours; otherwise nothing is written."""
        if job.receipt.startswith(RECOVERY):
            return self._run_recovery(job)
        if job.receipt.startswith(CONSUMPTION):
            return self._run_consumption(job)
        answer = self._ask(job.receipt, server_environment(job.endpoint), job.attempt)

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            now = self.ledger.now(db)
            if answer.kind == "accept":
                # Apple answers again: the purchases that waited out an outage are due now.
                self.ledger.wake_waiting(db, now)
                result = self._settle(db, job.user_id, answer)
                if result["status"] == "accepted":
                    self.ledger.finish(db, job, "delivered", ",".join(result["delivered"]) or "nothing new", now)
                else:
                    self.ledger.finish(db, job, "rejected", f"{result['verdict']}: {result['reason']}", now)
                return result
            if answer.kind == "reject":
                self.ledger.finish(db, job, "rejected", f"{answer.verdict}: {answer.why}", now)
                return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
            return self._reschedule(db, job, answer, now)
        result = self.ledger.run(record)
        log_event(logging.INFO, "job", job=job.id[:16], user_id=job.user_id, tries=job.tries, status=result["status"],
                  why=result.get("why") or result.get("reason"))
        return result

    def _reschedule(self, db, job: Job, answer: "Answer", now: int) -> dict:
        if answer.kind == "later":
            self.ledger.reschedule(db, job, answer.environment, answer.attempt + 1, now + answer.delay_ms, answer.why)
            return {"status": "pending", "retry_after_ms": answer.delay_ms, "why": answer.why}
        if answer.kind == "give_up" and now - job.created_ms >= self.give_up_after_ms and not job.receipt.startswith(RECOVERY):
            self.ledger.finish(db, job, "given_up", f"still {answer.why} after {job.tries} tries", now)
            return {"status": "given_up", "why": answer.why}
        # give_up (Apple unreachable or failing after the library's back-off of 1, 2, 4, 8 s): keep
        # trying every OUTAGE_RETRY_MS while the outage lasts (and sooner: the first call that
        # Apple answers wakes every waiting job). fix_configuration: the same attempt much later,
        # never given up for it: the receipt is fine, our secret is not.
        attempt = 1 if answer.kind == "give_up" else answer.attempt
        delay = OUTAGE_RETRY_MS if answer.kind == "give_up" else GIVE_UP_DELAY_MS
        self.ledger.reschedule(db, job, answer.environment, attempt, now + delay, answer.why)
        return {"status": "pending", "retry_after_ms": delay, "why": answer.why}

    def work(self, stop: threading.Event, poll_s: float = 1.0, batch: int = BATCH) -> None:
        """The worker loop: a pass, then a pause when nothing was due. A failing pass (database
        down, ...) is logged; the jobs it held come back when their leases end."""
        try:
            self.ensure_recovery_jobs()
        except Exception as e:
            log_event(logging.ERROR, "recovery_jobs_not_scheduled", error=f"{type(e).__name__}")
        while not stop.is_set():
            self.last_pass = time.monotonic()   # the worker's liveness (a stuck pass stops moving it)
            try:
                if self.run_due_jobs(batch, stop):
                    continue
            except Exception as e:  # keep the worker alive; the queue keeps the work
                log_event(logging.ERROR, "worker_pass_failed", worker=self.worker_id, error=f"{type(e).__name__}: {e}")
            stop.wait(poll_s)

    def health(self) -> dict:
        """The operator's view of the queue (GET /jobs): counts and ages, not for the public."""
        return {"ok": True, "ledger": self.ledger.kind, "jobs": self.ledger.queue_counts(self.clock())}

    def ready(self, timeout_s: float = 1.0) -> dict:
        """Readiness: the database answers within timeout_s (raises otherwise). No business counts."""
        self.ledger.ping(timeout_s)
        return {"ok": True, "ledger": self.ledger.kind}

    # -- recovery: what Apple said while nobody listened ----------------------------------------------

    def _run_recovery(self, job: Job) -> dict:
        """Reads Apple's notification history since the last read (less an overlap) and applies
        each notification through handle_notification, so a pushed notification and its recovered
        copy apply once; the mark moves on only when every page was read. Then asks Get All
        Subscription Statuses about subscriptions past their expected renewal with no news (one
        that fails is asked again next run). On Apple's retry_later the job runs again at the
        library's delay, from the same mark; otherwise at the next period."""
        env = server_environment(job.endpoint)
        with self.ledger.transaction() as db:
            now = self.ledger.now(db)
            covered = self.ledger.mark(db, "history:" + env.lower()) or now
        start = max(covered - HISTORY_OVERLAP_MS, now - HISTORY_MAX_BACK_MS)
        applied = {"recovered": 0, "statuses": 0}
        answer = self._read_history(env, start, now, job.attempt, applied)
        if answer.kind == "accept":
            with self.ledger.transaction() as db:
                overdue = [o for o, e in self.ledger.overdue_subscriptions(db, now, self.renewal_slack_ms, 100)
                           if (e if e in ENVIRONMENTS else ENVIRONMENTS[0]) == env]
            for original in overdue:
                checked = self._check_subscription(original, env, 1, now)
                if checked.kind == "accept":
                    applied["statuses"] += 1
                else:
                    log_event(logging.WARNING, "status_check_failed", original_transaction_id=original,
                              environment=env, verdict=checked.verdict, reason=checked.why)
                    if checked.kind != "reject":
                        break   # Apple is busy or down: the rest waits for the next run

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            t = self.ledger.now(db)
            if answer.kind == "accept":
                self.ledger.set_mark(db, "history:" + env.lower(), now)
                self.ledger.reschedule(db, job, env, 1, t + self.recovery_every_ms,
                                       f"recovered {applied['recovered']}, checked {applied['statuses']}")
                return {"status": "recovered", **applied}
            if answer.kind == "reject":   # logged, and tried again at the next run
                log_event(logging.ERROR, "recovery_refused", environment=env, verdict=answer.verdict, reason=answer.why)
                self.ledger.reschedule(db, job, env, 1, t + self.recovery_every_ms, f"{answer.verdict}: {answer.why}")
                return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
            return self._reschedule(db, job, answer, t)
        result = self.ledger.run(record)
        log_event(logging.INFO, "recovery", environment=env, status=result["status"], **applied)
        return result

    def _read_history(self, env: str, start: int, end: int, attempt: int, applied: dict) -> "Answer":
        page: dict = {}
        for _ in range(MAX_PAGES):
            call = {"endpoint": "notification_history", "environment": env,
                    "body": {"startDate": start, "endDate": end}, **page}
            result, body, why = self._api_call(call, attempt)
            if result.action not in ("next_page", "accept"):
                return self._decide(result, env, attempt, b"", why)
            # The library verified every signed item of the page; each notification now goes
            # through the same path as a pushed one (its UUID makes a second copy a duplicate).
            for item in json.loads(body).get("notificationHistory", []):
                status, outcome = self.handle_notification(item["signedPayload"], source="history")
                if status == 200 and outcome["status"] != "ignore_duplicate":
                    applied["recovered"] += 1
            if result.action == "accept":
                return Answer("accept", env, attempt)
            page = dict(result.next_page or {})
        return Answer("reject", env, attempt, verdict="malformed", why=f"more than {MAX_PAGES} pages of history")

    def _check_subscription(self, original: str, env: str, attempt: int, now: int) -> "Answer":
        result, _, why = self._api_call({"endpoint": "subscription_statuses", "environment": env,
                                         "transaction_id": original}, attempt)
        if result.action != "accept":
            return self._decide(result, env, attempt, b"", why)

        def apply(db) -> None:
            t = self.ledger.now(db)
            self.ledger.lock_subscription(db, original)
            owner = self.ledger.owner(db, original)
            if owner:
                self.ledger.lock_user(db, owner)
            self._merge(db, result.transactions, result.renewal_info, t)
            self.ledger.mark_checked(db, original, t)
            if owner:
                self._plan(db, owner, t)
        self.ledger.run(apply)
        return Answer("accept", env, attempt)

    def _run_consumption(self, job: Job) -> dict:
        """Answers Apple's CONSUMPTION_REQUEST with the send-consumption call."""
        transaction_id = job.receipt[len(CONSUMPTION):]
        with self.ledger.transaction() as db:
            delivered = db.query("SELECT 1 FROM deliveries WHERE transaction_id = ? AND revoked_ms IS NULL",
                                 (transaction_id,))
        body = {"customerConsented": True, "sampleContentProvided": False,
                "deliveryStatus": "DELIVERED" if delivered else "UNDELIVERED_OTHER"}
        env = server_environment(job.endpoint)
        if not self.consumption_consent:
            answer = Answer("reject", env, job.attempt, verdict="not_sent",
                            why="consumption data is not sent without the customer's consent (CONSUMPTION_CONSENT=0)")
        else:
            result, _, why = self._api_call({"endpoint": "consumption_info", "environment": env,
                                             "transaction_id": transaction_id, "body": body}, job.attempt)
            answer = self._decide(result, env, job.attempt, b"", why)

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            now = self.ledger.now(db)
            if answer.kind in ("accept", "reject"):
                outcome = "delivered" if answer.kind == "accept" else "rejected"
                self.ledger.finish(db, job, outcome, body["deliveryStatus"] if outcome == "delivered" else answer.why, now)
                return {"status": "sent" if outcome == "delivered" else "rejected", "transaction_id": transaction_id}
            return self._reschedule(db, job, answer, now)
        return self.ledger.run(record)

    # -- shared by both ---------------------------------------------------------------------------

    def _api_call(self, call: dict, attempt: int):
        """One App Store Server API call, built and interpreted by the library. Returns (result, body)."""
        env = call["environment"]
        status, retry_after, body, why = self._send(
            self.signers[env].api_request(call, now_ms=self.token_clock() if self.token_clock else None))
        result = self.verifier.interpret_api_response(
            body, endpoint=call["endpoint"], http_status=status, environment=env,
            retry_after=retry_after, attempt=attempt, now_ms=self.clock())
        self.metrics.apple_calls.labels(call["endpoint"], why.split(":")[0] or result.action).inc()
        return result, body, why or f"http {status}"

    def _ask(self, receipt: str, environment: str, attempt: int) -> Answer:
        if receipt.startswith(STOREKIT2):
            return self._ask_history(receipt[len(STOREKIT2):], environment, attempt, proven=False)
        if receipt.startswith(STOREKIT2_SIGNED):
            return self._ask_history(receipt[len(STOREKIT2_SIGNED):], environment, attempt, proven=True)
        # The library checks the receipt itself first (signature, Apple's chain, this app, an
        # accepted environment): Apple is asked only about receipts that pass, and a string that is
        # not one is refused at once instead of being queued and re-sent for days.
        local = self.verifier.verify_receipt(receipt, now_ms=self.clock())
        if not local.valid:
            return Answer("reject", environment, attempt, verdict=local.verdict, why=local.reason, invalid=True)
        return self._ask_apple(receipt, environment, attempt)

    def _ask_history(self, transaction_id: str, environment: str, attempt: int, proven: bool) -> Answer:
        """Every page of the transaction history, each verified by the library. On the library's
        next_page the next page is asked for; on retry_sandbox the sandbox host, once (the library
        never answers retry_sandbox from sandbox, and this never goes back); anything else ends it.
        A retry starts again from the first page: the pages already read are not kept."""
        transactions: list[dict] = []
        renewals: list[dict] = []
        page: dict = {}       # the library's next_page ({"revision": ...}), merged into the next call
        switched = False
        for _ in range(MAX_PAGES):
            call = {"endpoint": "transaction_history", "environment": environment, "transaction_id": transaction_id, **page}
            result, _, why = self._api_call(call, attempt)
            if result.action in ("next_page", "accept"):
                transactions += result.transactions
                renewals += result.renewal_info
                if result.action == "accept":
                    return Answer("accept", environment, attempt, transactions=tuple(transactions),
                                  renewals=tuple(renewals), claimed_id=transaction_id, proven=proven)
                page = dict(result.next_page or {})
                if not page:
                    return Answer("reject", environment, attempt, verdict="malformed", why="next_page without a page")
            elif result.action == "retry_sandbox" and not switched:
                environment, switched, transactions, renewals, page = "Sandbox", True, [], [], {}
            elif result.action == "retry_sandbox":
                return Answer("reject", environment, attempt, verdict=result.verdict, why="retry_sandbox from sandbox")
            else:
                return self._decide(result, environment, attempt, b"", why)
        return Answer("reject", environment, attempt, verdict="malformed", why=f"more than {MAX_PAGES} pages of history")

    def _send(self, request) -> tuple[int, Optional[str], bytes, str]:
        """Sends an App Store Server API request exactly as the library built it. Returns (HTTP
        status, Retry-After, body, why). Apple unreachable (refused, reset, past the deadline) is
        reported as an HTTP 503 without a body: the library then gives its backoff, as for 503."""
        try:
            status, headers, body = http_call(request.method, request.url, dict(request.headers), request.body,
                                              self.timeout_s)
            return status, headers.get("retry-after"), body, "" if status < 400 else f"http {status}"
        except (OSError, http.client.HTTPException, ValueError) as e:
            return 503, None, b"", describe_failure(e)

    def _ask_apple(self, receipt: str, environment: str, attempt: int) -> Answer:
        for _ in range(3):  # at most production -> sandbox -> production; the library never loops
            try:
                body = self._call_apple(environment, receipt)
            except (OSError, http.client.HTTPException, ValueError) as e:  # refused, reset, deadline, HTTP 5xx
                why = describe_failure(e)
                self.metrics.apple_calls.labels("verifyReceipt", why.split(":")[0]).inc()
                return self._decide(self.verifier.interpret_response(UNREACHABLE_BODY, environment=environment,
                                                                     attempt=attempt, now_ms=self.clock()),
                                    environment, attempt, b"", why)
            result = self.verifier.interpret_response(body, environment=environment, attempt=attempt,
                                                      now_ms=self.clock())
            self.metrics.apple_calls.labels("verifyReceipt", result.action).inc()
            if result.action == "retry_sandbox":
                environment = "Sandbox"
            elif result.action == "retry_production":
                environment = "Production"
            else:
                return self._decide(result, environment, attempt, body, str(result.status))
        return Answer("reject", environment, attempt, verdict="wrong_environment", why="environment ping-pong")

    @staticmethod
    def _decide(result, environment: str, attempt: int, body: bytes, why: str) -> Answer:
        if result.action == "accept":
            return Answer("accept", environment, attempt, body=body)
        if result.action == "retry_later":
            return Answer("later", environment, attempt, delay_ms=int(result.retry_after_ms or 1000), why=why)
        if result.action == "give_up":
            return Answer("give_up", environment, attempt, why=why)
        if result.action == "fix_configuration":
            return Answer("fix_configuration", environment, attempt, why=f"fix_configuration: {result.reason}")
        return Answer("reject", environment, attempt, verdict=result.verdict, why=result.reason)

    def _settle(self, db, user_id: str, answer: Answer) -> dict:
        """Inside one database transaction: keep what Apple signed about the user's purchases,
        then plan with the library over everything stored for the user, and record the plan.

        A transaction that belongs to another user (its appAccountToken, or an earlier claim) is
        refused and logged; if nothing is left, the submission is rejected."""
        self.ledger.lock_user(db, user_id)
        now = self.ledger.now(db)
        if answer.transactions is not None:
            transactions, renewals = list(answer.transactions), list(answer.renewals or ())
            if not answer.proven:   # an id alone: the claimed purchase's appAccountToken must name the sender
                claimed = next((t for t in transactions if t.get("transaction_id") == answer.claimed_id), None)
                # (a token naming someone else is refused below, as owned by another user)
                if claimed is None or self._token_user(claimed) is None:
                    self.metrics.claim_refusals.labels("storekit2", "claim_not_proven").inc()
                    log_event(logging.WARNING, "claim_not_proven", user_id=user_id, transaction_id=answer.claimed_id)
                    return {"status": "rejected", "verdict": "claim_not_proven",
                            "reason": "a transaction id alone proves nothing unless the purchase's appAccountToken "
                                      "names you: send the signed transaction StoreKit 2 gave the app"}
        else:
            result = self.verifier.interpret_response(answer.body, environment=answer.environment, attempt=answer.attempt,
                                                      now_ms=now)
            if result.action != "accept":  # accepted a moment ago; only the clock moved
                return {"status": "rejected", "verdict": result.verdict, "reason": result.reason}
            receipt = result.raw.get("receipt") or {}
            transactions, renewals = receipt.get("in_app") or [], receipt.get("pending_renewal_info") or []
        mine, refused = set(), []
        for original in sorted({t.get("original_transaction_id") or t["transaction_id"] for t in transactions}):
            txn = next((t for t in transactions if (t.get("original_transaction_id") or t["transaction_id"]) == original
                        and self._token_user(t)), None)
            try:
                owner = self._owner_for(db, txn, original, claimant=user_id)
            except Refused as e:
                refused.append(original)
                log_event(logging.WARNING, "purchase_refused", user_id=user_id, original_transaction_id=original,
                          reason=e.reason)
                continue
            if self.ledger.claim_owner(db, original, owner, self._via(txn, owner), now) != user_id:
                refused.append(original)   # another request claimed it first, a moment ago
                log_event(logging.WARNING, "purchase_refused", user_id=user_id, original_transaction_id=original,
                          reason="claimed by another user first")
                continue
            mine.add(original)
        if refused:
            self.metrics.refusals.labels("storekit2" if answer.transactions is not None else "receipt").inc()
        if transactions and not mine:
            return {"status": "rejected", "verdict": "owned_by_another_user",
                    "reason": "every purchase in it belongs to another user"}
        self._merge(db, [t for t in transactions if (t.get("original_transaction_id") or t["transaction_id"]) in mine],
                    [r for r in renewals if r.get("original_transaction_id") in mine], now)
        planned = self._plan(db, user_id, now)
        return {"status": "accepted", **planned, "refused": refused}

    def _merge(self, db, transactions: list, renewals: list, now: int) -> None:
        for t in transactions:
            original = t.get("original_transaction_id") or t["transaction_id"]
            self.ledger.merge_statement(db, "transaction", t["transaction_id"], original, t, now)
            if t.get("expires_date_ms") is not None:
                self.ledger.note_news(db, original, t.get("environment"), now)
        for r in renewals:
            self.ledger.merge_statement(db, "renewal_info", r["original_transaction_id"], r["original_transaction_id"], r, now)

    def _plan(self, db, user_id: str, now: int) -> dict:
        """The library's plan over everything stored for the user, recorded in this transaction:
        deliveries (the primary key keeps each to one), revocations, paid orders, and when each
        subscription should renew next (for the recovery job)."""
        used, orders = self.ledger.user_state(db, user_id)
        statements = self.ledger.user_statements(db, user_id)
        result = self.verifier.compute_entitlements(statements, now_ms=now,
                                                    options={"delivered_transaction_ids": used, "orders": orders})
        if not result.valid:
            raise RuntimeError(f"stored statements of {user_id} are unreadable: {result.reason}")
        delivered, revoked, paid = self.ledger.apply(db, user_id, result.delivery, now)
        # Counted when the transaction commits is what an operator means; a rollback (rare: the
        # database retries it) may count one twice. Deliveries themselves stay exactly once.
        self.metrics.deliveries.inc(len(delivered))
        self.metrics.revocations.inc(len(revoked))
        for e in result.entitlements:
            if e.original_transaction_id and e.expires_date_ms is not None:
                renewing = e.active and e.will_renew is not False
                self.ledger.expect_renewal(db, e.original_transaction_id, e.expires_date_ms if renewing else None)
        if delivered or revoked:
            log_event(logging.INFO, "delivery", user_id=user_id, delivered=delivered, revoked=revoked, paid=paid)
        return {"delivered": delivered, "revoked": revoked,
                "entitlements": {e.id: e.active for e in result.entitlements},
                "orders": {o["order_id"]: "paid" if o["order_id"] in paid else "pending" for o in orders},
                "paid": paid}

    def _call_apple(self, environment: str, receipt: str) -> bytes:
        request = json.dumps({"receipt-data": receipt, "password": self.secret, "exclude-old-transactions": False}).encode()
        status, _, body = http_call("POST", self.urls[environment], {"Content-Type": "application/json"}, request,
                                    self.timeout_s)
        if status != 200:
            raise http.client.HTTPException(f"http {status}")
        return body


def entitlement_view(e: dict) -> dict:
    """What the app needs of an entitlement: access, state, expiry and renewal intent."""
    keys = ("id", "active", "state", "product_id", "original_transaction_id", "expires_date_ms", "will_renew",
            "renews_to", "period", "ownership", "expiration_reason", "revocation_type", "price_increase")
    return {k: e.get(k) for k in keys}


def describe_failure(e: BaseException) -> str:
    if isinstance(e, TimeoutError) or "timed out" in str(e):
        return "timeout"
    if isinstance(e, http.client.HTTPException) and str(e).startswith("http "):
        return str(e)
    return f"unreachable: {type(e).__name__}"


def http_call(method: str, url: str, headers: dict, body: Optional[bytes], deadline_s: float,
              max_bytes: int = MAX_RESPONSE_BYTES) -> tuple[int, dict, bytes]:
    """One HTTP exchange that ends by `deadline_s` from now whatever the peer does: each socket
    operation gets only the time left, so an Apple that sends a byte a second still ends at the
    deadline (a per-read timeout would wait forever). Returns (status, lower-case headers, body)."""
    end = time.monotonic() + deadline_s

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("timed out: the call's deadline passed")
        return remaining
    parts = urllib.parse.urlsplit(url)
    conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    kwargs = {"context": ssl.create_default_context()} if parts.scheme == "https" else {}
    conn = conn_type(parts.hostname, parts.port, timeout=left(), **kwargs)
    try:
        conn.connect()
        sock = conn.sock   # kept: the connection lets go of it once the response owns it
        sock.settimeout(left())
        conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body=body, headers=headers)
        sock.settimeout(left())
        response = conn.getresponse()
        chunks, size = [], 0
        while True:
            sock.settimeout(left())
            chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise ValueError(f"the answer is larger than {max_bytes} bytes")
            chunks.append(chunk)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, b"".join(chunks)
    finally:
        conn.close()


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
                        help="purchase claims one client address may send per minute (per front)")
    parser.add_argument("--health-port", "--metrics-port", dest="health_port", type=port_number, default=None,
                        help="worker: serve /livez, /readyz and /metrics on this port")
    parser.add_argument("--retention", default=None,
                        help="JSON file: product id -> the answer to Apple's realtime requests about it")
    args = parser.parse_args(argv)
    if args.heartbeat_ms is not None and args.heartbeat_ms >= args.lease_ms:
        parser.error(f"argument --heartbeat-ms: must be below --lease-ms ({args.lease_ms}), or a lease ends before it is renewed")
    setup_logging()
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
    ledger = Ledger(sqlite_path=args.sqlite_path, pool_size=args.pool_size,
                    clock=file_clock(clock_path) if clock_path else None)
    service = PurchaseService(config, ledger, os.environ.get("APPLE_SHARED_SECRET", ""), os.environ.get("APPLE_BASE_URL"),
                              timeout_s=args.apple_timeout_s, lease_ms=args.lease_ms, heartbeat_ms=args.heartbeat_ms,
                              give_up_after_ms=args.give_up_after_ms, signer_config=signer_config,
                              api_base_url=api_base, recovery_every_ms=args.recovery_every_ms,
                              consumption_consent=os.environ.get("CONSUMPTION_CONSENT", "1") != "0",
                              retention=json.load(open(args.retention)) if args.retention else None)
    service.ensure_recovery_jobs()   # with a signer: the recurring history reads, due at once the first time
    stop = threading.Event()
    if args.role == "worker":
        signal.signal(signal.SIGTERM, lambda *_: stop.set())  # finish the job in hand, then exit
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        if args.health_port is not None:
            worker_health(service, args.host, args.health_port, live_within_s=max(60.0, service.lease_ms / 1000))
        print(f"worker {service.worker_id} ({ledger.kind} ledger)", flush=True)
        service.work(stop, args.poll_ms / 1000, args.batch)
        return
    import http_api
    limits = http_api.Limits(**{k: v for k, v in (("body_timeout_s", args.body_timeout_s),
                                                  ("head_timeout_s", args.head_timeout_s),
                                                  ("max_concurrency", args.max_concurrency),
                                                  ("claims_per_user", args.claims_per_user),
                                                  ("claims_per_address", args.claims_per_address)) if v is not None})
    auth = http_api.auth_from_env()
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


def receipt_text(der: bytes) -> str:
    """What an app sends: the receipt file, base64-encoded."""
    return base64.b64encode(der).decode()
