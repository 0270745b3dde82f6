"""Asking Apple: /verifyReceipt for receipts and the App Store Server API for the rest. The
library builds every request and says what every answer means; this module moves the bytes and
turns the library's action into an `Answer` the rest of the service acts on."""
from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Optional

import iapverify
from work_queue import RECEIPT, STOREKIT2, STOREKIT2_SIGNED

PRODUCTION_URL = "https://buy.itunes.apple.com/verifyReceipt"
SANDBOX_URL = "https://sandbox.itunes.apple.com/verifyReceipt"
# Apple unreachable (refused, reset, timeout, HTTP error) is the same situation as its status 21005
# ("the receipt server was temporarily unable to provide the receipt"): asking the library about
# this body gives the same backoff and the same give_up after the last attempt.
UNREACHABLE_BODY = b'{"status": 21005}'
MAX_PAGES = 1000   # a history longer than this is refused, not followed forever
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
    """Apple's servers as the service sees them. `clock` is the service's (the database's) now;
    bearer tokens are issued at `token_clock` (default: this host's real clock, which Apple checks)."""

    def __init__(self, verifier: iapverify.Verifier, signers: dict, urls: dict, shared_secret: str, timeout_s: float,
                 metrics, clock: Callable[[], int], token_clock: Optional[Callable[[], int]] = None):
        self.verifier, self.signers, self.urls, self.secret = verifier, signers, urls, shared_secret
        self.timeout_s, self.metrics, self.clock, self.token_clock = timeout_s, metrics, clock, token_clock

    def api_call(self, call: dict, attempt: int):
        """One App Store Server API call, built and interpreted by the library. Returns (result, body)."""
        env = call["environment"]
        status, retry_after, body, why = self.send(
            self.signers[env].api_request(call, now_ms=self.token_clock() if self.token_clock else None))
        result = self.verifier.interpret_api_response(
            body, endpoint=call["endpoint"], http_status=status, environment=env,
            retry_after=retry_after, attempt=attempt, now_ms=self.clock())
        self.metrics.apple_calls.labels(call["endpoint"], why.split(":")[0] or result.action).inc()
        return result, body, why or f"http {status}"


    def ask(self, kind: str, subject: str, environment: str, attempt: int) -> Answer:
        """What Apple says about a claim: a receipt (RECEIPT) or a StoreKit 2 transaction id."""
        if kind in (STOREKIT2, STOREKIT2_SIGNED):
            return self.ask_history(subject, environment, attempt, proven=kind == STOREKIT2_SIGNED)
        assert kind == RECEIPT, kind
        receipt = subject
        # The library checks the receipt itself first (signature, Apple's chain, this app, an
        # accepted environment): Apple is asked only about receipts that pass, and a string that is
        # not one is refused at once instead of being queued and re-sent for days.
        local = self.verifier.verify_receipt(receipt, now_ms=self.clock())
        if not local.valid:
            return Answer("reject", environment, attempt, verdict=local.verdict, why=local.reason, invalid=True)
        return self.ask_verify_receipt(receipt, environment, attempt)

    def ask_history(self, transaction_id: str, environment: str, attempt: int, proven: bool) -> Answer:
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
            result, _, why = self.api_call(call, attempt)
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
                return self.decide(result, environment, attempt, b"", why)
        return Answer("reject", environment, attempt, verdict="malformed", why=f"more than {MAX_PAGES} pages of history")

    def send(self, request) -> tuple[int, Optional[str], bytes, str]:
        """Sends an App Store Server API request exactly as the library built it. Returns (HTTP
        status, Retry-After, body, why). Apple unreachable (refused, reset, past the deadline) is
        reported as an HTTP 503 without a body: the library then gives its backoff, as for 503."""
        try:
            status, headers, body = http_call(request.method, request.url, dict(request.headers), request.body,
                                              self.timeout_s)
            return status, headers.get("retry-after"), body, "" if status < 400 else f"http {status}"
        except (OSError, http.client.HTTPException, ValueError) as e:
            return 503, None, b"", describe_failure(e)

    def ask_verify_receipt(self, receipt: str, environment: str, attempt: int) -> Answer:
        for _ in range(3):  # at most production -> sandbox -> production; the library never loops
            try:
                body = self.post_verify_receipt(environment, receipt)
            except (OSError, http.client.HTTPException, ValueError) as e:  # refused, reset, deadline, HTTP 5xx
                why = describe_failure(e)
                self.metrics.apple_calls.labels("verifyReceipt", why.split(":")[0]).inc()
                return self.decide(self.verifier.interpret_response(UNREACHABLE_BODY, environment=environment,
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
                return self.decide(result, environment, attempt, body, str(result.status))
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

    def post_verify_receipt(self, environment: str, receipt: str) -> bytes:
        request = json.dumps({"receipt-data": receipt, "password": self.secret, "exclude-old-transactions": False}).encode()
        status, _, body = http_call("POST", self.urls[environment], {"Content-Type": "application/json"}, request,
                                    self.timeout_s)
        if status != 200:
            raise http.client.HTTPException(f"http {status}")
        return body



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
