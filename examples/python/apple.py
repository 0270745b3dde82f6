"""Asking Apple: /verifyReceipt for receipts and the App Store Server API for the rest. The
library builds every request and says what every answer means. The App Store Server API is sent
by the binding's own client (iapverify.http: pages, the sandbox fallback, the deadline); this
module sends /verifyReceipt itself (http_call: the client does not send it), and turns what the
library says into an `Answer` the rest of the service acts on."""
from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Optional, Union

import httpx
import iapverify
import iapverify.http
from work_queue import RECEIPT, STOREKIT2, STOREKIT2_SIGNED

PRODUCTION_URL = "https://buy.itunes.apple.com/verifyReceipt"
SANDBOX_URL = "https://sandbox.itunes.apple.com/verifyReceipt"
MAX_RESPONSE_BYTES = 32 * 1024 * 1024        # an answer from Apple larger than this is no answer
# A history comes in pages, all read in one call of the client: its whole deadline (or the
# service's timeout_s if longer). A StoreKit 2 claim's history is read while the app waits; the
# notification history, by the worker's recovery job, may be long after an outage.
HISTORY_DEADLINE_S = {"transaction_history": 60.0, "notification_history": 600.0}
# Apple's two servers, spelled as Apple spells environments (iapverify.ServerEnvironment). Jobs
# stored by release 0.1 of this example say "production"/"sandbox": read in any case.
ENVIRONMENTS = (iapverify.ServerEnvironment.PRODUCTION.value, iapverify.ServerEnvironment.SANDBOX.value)


def server_environment(name: str) -> str:
    """"Production" or "Sandbox" for a server environment given in any case; else ValueError."""
    for env in ENVIRONMENTS:
        if isinstance(name, str) and name.lower() == env.lower():
            return env
    raise ValueError(f"environment must be Production or Sandbox, not {name!r}")


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


class Apple:
    """Apple's servers as the service sees them. `clock` is the service's (the database's) now.

    The App Store Server API is called through the binding's own client (iapverify.http), which
    follows pages and the sandbox fallback; it is never left to sleep (max_wait_s=0): a retry_later
    ends the call, and the work queue runs the job again at the library's delay with the next
    attempt. `timeout_s` is the whole deadline of a one-answer call; a history, read page after
    page, has its HISTORY_DEADLINE_S (or `timeout_s` if longer). /verifyReceipt, which the client
    does not send, goes through `http_call` below."""

    def __init__(self, verifier: iapverify.Verifier, signer: Optional[iapverify.Signer], urls: dict,
                 shared_secret: str, timeout_s: float, metrics, clock: Callable[[], int]):
        self.verifier, self.urls, self.secret = verifier, urls, shared_secret
        self.timeout_s, self.metrics, self.clock = timeout_s, metrics, clock
        # The client's now_ms serves both the bearer token and the answer's interpretation (a
        # Retry-After date is counted from it): the database's clock, as for every decision.
        self.client = None if signer is None else iapverify.http.Client(
            signer, verifier, timeout_s=timeout_s, deadline_s=timeout_s, now_ms=clock,
            max_response_bytes=MAX_RESPONSE_BYTES)

    @property
    def has_server_api(self) -> bool:
        """Whether the App Store Server API can be called (a signer is configured)."""
        return self.client is not None

    def api_call(self, call: dict, attempt: int) -> Union[iapverify.http.CallResult, Answer]:
        """One App Store Server API call to its end, every page and the sandbox fallback
        included. Returns the client's CallResult when Apple accepted it, else the Answer it comes
        to (later, give_up, fix_configuration, reject)."""
        assert self.client is not None, "the App Store Server API needs a signer"
        env = server_environment(call["environment"])
        deadline_s = max(self.timeout_s, HISTORY_DEADLINE_S.get(call["endpoint"], 0.0))
        try:
            done = self.client.call(call, attempt=attempt, max_wait_s=0, deadline_s=deadline_s)
        except iapverify.http.APICallError as e:
            why = call_failure(e)
            self.metrics.apple_calls.labels(call["endpoint"], why.split(":")[0]).inc()
            return self.api_failure(e, env, why)
        self.metrics.apple_calls.labels(call["endpoint"], "accept").inc()
        return done

    def api_failure(self, e: iapverify.http.APICallError, environment: str, why: str) -> Answer:
        """What a call the client ended without accept comes to. The client's DeadlineError after
        a retry_later carries the library's delay; a deadline that passed between two pages is
        Apple too slow: a new round later, as after give_up."""
        env = server_environment(e.call.get("environment", environment))
        result = e.result
        if out_of_time(e):
            return Answer("give_up", env, e.attempt, why=why)
        if result is None or result.action in ("next_page", "accept"):   # a page token the client refused
            return Answer("reject", env, e.attempt, verdict="malformed", why=str(e))
        if result.action == "retry_sandbox":   # from sandbox, or a second time: the client stops there
            return Answer("reject", env, e.attempt, verdict=result.verdict, why="retry_sandbox from sandbox")
        return self.decide(result, env, e.attempt, b"", why)

    def ask(self, kind: str, subject: str, environment: str, attempt: int, checked: bool = False) -> Answer:
        """What Apple says about a claim: a receipt (RECEIPT) or a StoreKit 2 transaction id.
        checked: the receipt already passed check_receipt."""
        if kind in (STOREKIT2, STOREKIT2_SIGNED):
            return self.ask_history(subject, environment, attempt, proven=kind == STOREKIT2_SIGNED)
        assert kind == RECEIPT, kind
        refused = None if checked else self.check_receipt(subject, environment, attempt)
        return refused or self.ask_verify_receipt(subject, environment, attempt)

    def check_receipt(self, receipt: str, environment: str, attempt: int) -> Optional[Answer]:
        """The library checks the receipt itself first (signature, Apple's chain, this app, an
        accepted environment): Apple is asked only about receipts that pass, and a string that is
        not one is refused at once instead of being queued and re-sent for days. None: it passed."""
        local = self.verifier.verify_receipt(receipt, now_ms=self.clock())
        if not local.valid:
            return Answer("reject", environment, attempt, verdict=local.verdict, why=local.reason, invalid=True)
        return None

    def ask_history(self, transaction_id: str, environment: str, attempt: int, proven: bool) -> Answer:
        """Every page of the transaction history, each verified by the library (the client asks
        for the next page on next_page, and the sandbox host, once, on retry_sandbox). A retry
        starts again from the first page."""
        done = self.api_call({"endpoint": "transaction_history", "environment": environment,
                              "transaction_id": transaction_id}, attempt)
        if isinstance(done, Answer):
            return done
        return Answer("accept", server_environment(done.environment), attempt, transactions=tuple(done.transactions),
                      renewals=tuple(done.renewal_info), claimed_id=transaction_id, proven=proven)

    def ask_verify_receipt(self, receipt: str, environment: str, attempt: int) -> Answer:
        """/verifyReceipt, production first: the library says what each answer means, an HTTP
        status other than 200 or no answer at all included (http_status), and whether to ask the
        other host."""
        for _ in range(3):  # at most production -> sandbox -> production; the library never loops
            status, body, why = self.post_verify_receipt(environment, receipt)
            result = self.verifier.interpret_response(body, environment=environment, attempt=attempt,
                                                      http_status=status, now_ms=self.clock())
            why = why or str(result.status)
            outcome = result.action if status == 200 else why.split(":")[0]   # timeout, unreachable, http 503
            self.metrics.apple_calls.labels("verifyReceipt", outcome).inc()
            if result.action == "retry_sandbox":
                environment = "Sandbox"
            elif result.action == "retry_production":
                environment = "Production"
            else:
                return self.decide(result, environment, attempt, body, why)
        return Answer("reject", environment, attempt, verdict="wrong_environment", why="environment ping-pong")

    @staticmethod
    def decide(result, environment: str, attempt: int, body: bytes, why: str) -> Answer:
        if result.action == "accept":
            return Answer("accept", environment, attempt, body=body)
        if result.action == "retry_later":
            return Answer("later", environment, attempt, delay_ms=int(result.retry_after_ms or 1000), why=why)
        if result.action == "give_up":
            return Answer("give_up", environment, attempt, why=why)
        if result.action == "fix_configuration":
            return Answer("fix_configuration", environment, attempt, why=f"fix_configuration: {result.reason}")
        return Answer("reject", environment, attempt, verdict=result.verdict, why=result.reason)

    def post_verify_receipt(self, environment: str, receipt: str) -> tuple[int, bytes, str]:
        """One POST to a /verifyReceipt host. Returns (HTTP status, body, why): the status is 0
        when Apple did not answer at all (refused, reset, past the deadline, too large), and why
        is "" for a 200."""
        request = json.dumps({"receipt-data": receipt, "password": self.secret, "exclude-old-transactions": False}).encode()
        try:
            status, _, body = http_call("POST", self.urls[environment], {"Content-Type": "application/json"}, request,
                                        self.timeout_s)
        except (OSError, http.client.HTTPException, ValueError) as e:
            return 0, b"", describe_failure(e)
        if not 100 <= status <= 599:   # not a status the library reads: as no answer
            return 0, b"", f"unreachable: HTTP status {status}"
        return status, body, "" if status == 200 else f"http {status}"


def describe_failure(e: BaseException) -> str:
    """"timeout" or "unreachable: <error>" for a call Apple did not answer (the error of
    http_call, or the httpx error behind the client's APICallError)."""
    if isinstance(e, (TimeoutError, httpx.TimeoutException)) or "timed out" in str(e):
        return "timeout"
    return f"unreachable: {type(e).__name__}"


def out_of_time(e: iapverify.http.APICallError) -> bool:
    """The call's deadline passed between two requests (the pages of a long history), not after
    a retry_later the host is to wait out itself."""
    return isinstance(e, iapverify.http.DeadlineError) and (e.result is None or e.result.action != "retry_later")


def call_failure(e: iapverify.http.APICallError) -> str:
    """Why an App Store Server API call ended without accept, in the words of describe_failure
    (also the outcome of the apple_calls metric): no answer, an HTTP error status, or the
    library's action on an answer that came."""
    if e.__cause__ is not None:
        return describe_failure(e.__cause__)
    if out_of_time(e) or e.result is None:
        return "deadline"
    if e.result.http_status not in (None, 200):
        return f"http {e.result.http_status}"
    return str(e.result.action)


def http_call(method: str, url: str, headers: dict, body: Optional[bytes], deadline_s: float,
              max_bytes: int = MAX_RESPONSE_BYTES) -> tuple[int, dict, bytes]:
    """One HTTP exchange (a /verifyReceipt POST) that ends by `deadline_s` from now whatever the
    peer does: each socket operation gets only the time left, so an Apple that sends a byte a
    second still ends at the deadline (a per-read timeout would wait forever). Returns (status,
    lower-case headers, body)."""
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
