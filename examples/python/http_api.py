"""The HTTP API of the purchase service: FastAPI under uvicorn.

Every request body is checked against a schema (strict types, no unknown keys, ids of bounded
length) and answered with a short JSON reason when it fails: 400 for text that is not JSON, 413 for
a body over its limit, 408 for a body that does not arrive in time, 422 for JSON of the wrong shape.
Nothing internal (exception names, SQL, hosts) ever reaches a client: an unexpected failure is
logged and answered 503 "try again".

Who may ask what:
- the app's user endpoints need `Authorization: Bearer <user token>` (see `Auth`) and answer only
  about that user;
- the operator endpoints (`POST /jobs/retry`, `GET /metrics`) need `Authorization: Bearer
  <operator token>`;
- `POST /apple/notifications` is Apple's: the signature of the payload is its credential;
- `POST /apple/retention` is Apple's too (the Retention Messaging realtime URL), with the same
  credential: the signature of its payload.
- `GET /health` says only whether the database answers and how long the queue is.

The library and database calls block, so most endpoints are plain functions: FastAPI runs them
in its thread pool, and the event loop only moves bytes. Calls to Apple never run there: a claim
is checked on that pool, then asks Apple on one of the front's own `apple_concurrency` threads
(AppleSlots), or is queued for a worker (202) when all are taken. The entitlement read, the
request apps make most, is answered by http_middleware.EntitlementReads on the same pool without
FastAPI's routing layers. Liveness, readiness and /metrics are answered outside the request limit
(readiness and /metrics on two threads of their own).
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Callable, Literal, Optional, Union

from fastapi import FastAPI, Header, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, StringConstraints

from http_middleware import CLIENT, USER, VIA_PROXY, AccessLog, BodyLimits, EntitlementReads, RequestLimit
from http_server import ConnectionGuard, Proxies, RefusalLog, bind, guarded_protocol
from observability import log_event
from apple import server_environment
from purchases import Refused
from user_ids import canonical_user_id
from work_queue import RECEIPT, STOREKIT2, STOREKIT2_SIGNED

if TYPE_CHECKING:   # service.py imports this module to serve: no import circle at run time
    from service import PurchaseService

USER_ID = r"^[A-Za-z0-9_-]{1,64}$"            # a UUID (what the app sets as appAccountToken) fits
UserId = Annotated[str, StringConstraints(pattern=USER_ID)]
ProductId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._-]+$")]
TransactionId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z_-]+$")]


@dataclass(frozen=True)
class Limits:
    """Bounds on what one client can make a front do."""
    max_body_bytes: int = 64 * 1024             # orders, StoreKit 2 submissions
    max_receipt_bytes: int = 1024 * 1024        # a base64 receipt of a long purchase history
    max_notification_bytes: int = 256 * 1024    # Apple's signedPayload with its two nested tokens
    body_timeout_s: float = 10.0                # the whole body must arrive within this
    head_timeout_s: float = 10.0                # a request's line and headers must arrive within this
    max_concurrency: int = 200                  # requests in hand at once (probes excepted); beyond: 503
    max_connections: int = 4096                 # connections at once; beyond: closed when accepted
    connections_per_address: int = 50           # from one client address (not a trusted proxy's)
    keep_alive_s: float = 5.0                   # an idle keep-alive connection is closed after this
    # Claims (POST /receipts, /storekit2/transactions) each cost Apple quota: per minute, per front;
    # per authenticated user always, per client address only when a trusted proxy gave it.
    claims_per_user: int = 20
    claims_per_address: int = 300              # many honest users share a NAT's address
    orders_per_user: int = 30                   # POST /orders, the same way
    orders_per_address: int = 120
    apple_concurrency: int = 8                  # calls to Apple in flight from the API; a claim beyond: 202, queued
    trusted_proxies: tuple = ()                 # addresses or networks whose X-Forwarded-For is believed
    ready_timeout_s: float = 1.0                # readiness fails this fast when the database is away


class ClaimLimiter:
    """Fixed one-minute windows by the service's clock, per authenticated user and per client
    address: a user who guesses transaction ids, or one address trying many accounts, gets 429
    with Retry-After before Apple is asked. The address counts only when it is known to be the
    client's (a trusted proxy gave it): behind a balancer or a NAT many honest users share one
    peer address. In memory, per front (N fronts allow N times the rate)."""

    WINDOW_MS = 60_000

    def __init__(self, per_user: int, per_address: int):
        self.per_user, self.per_address = per_user, per_address
        self.window = -1
        self.counts: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def admit(self, user: str, address: Optional[str], now_ms: int) -> Optional[int]:
        """None when the claim may go on; otherwise the seconds until the window ends."""
        with self.lock:
            window = now_ms // self.WINDOW_MS
            if window != self.window:      # a new minute: every count starts again (and memory is freed)
                self.window, self.counts = window, {}
            over = False
            keys = (("user", user), self.per_user), (("address", address), self.per_address)
            for key, limit in keys if address is not None else keys[:1]:
                self.counts[key] = self.counts.get(key, 0) + 1
                over = over or self.counts[key] > limit
            return -(-((window + 1) * self.WINDOW_MS - now_ms) // 1000) if over else None


class AppleSlots:
    """The calls to Apple a front's API makes at once: at most `n`, on threads of their own, never
    on the thread pool that serves reads. take() does not wait: a claim that finds none free is
    queued for a worker (202 at once), so an Apple that accepts and never answers holds n threads
    of this pool, and nothing else."""

    def __init__(self, n: int):
        self.free = n
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="apple")

    def take(self) -> bool:
        with self.lock:
            if self.free <= 0:
                return False
            self.free -= 1
            return True

    def give_back(self) -> None:
        with self.lock:
            self.free += 1

    async def run(self, call, *args):
        """call(*args) on a slot taken with take(); the slot is given back when the call ends,
        not when the request does (a client that hangs up leaves the call running)."""
        try:
            future = self.pool.submit(call, *args)
        except BaseException:
            self.give_back()
            raise
        future.add_done_callback(lambda _: self.give_back())
        return await asyncio.wrap_future(future)


class Auth:
    """Bearer tokens for the example: `<user_id>.<expires_ms>.<hex HMAC-SHA256 of both>` made
    with the service's secret (your login service issues them; `user_token` shows how), and one
    operator token compared in constant time. Replace with your own identity provider; what
    matters is that the user comes from the credential, never from the body."""

    def __init__(self, user_secret: str, operator_token: str):
        if len(user_secret) < 16 or len(operator_token) < 16:
            raise ValueError("SERVICE_USER_TOKEN_SECRET and SERVICE_OPERATOR_TOKEN must each be at least 16 characters")
        self.secret = user_secret.encode()
        self.operator_token = operator_token.encode()

    def user_token(self, user_id: str, expires_ms: int) -> str:
        if not re.fullmatch(USER_ID, user_id):
            raise ValueError("user ids are 1-64 letters, digits, '-' or '_'")
        message = f"{user_id}.{expires_ms}"
        return message + "." + hmac.new(self.secret, message.encode(), hashlib.sha256).hexdigest()

    def user_of(self, authorization: Optional[str], now_ms: Union[int, Callable[[], int]]) -> Optional[str]:
        """The user a valid, unexpired token names (a UUID in lower case: user_ids), else None.
        now_ms may be a function (the database's clock): it is read only for a token whose
        signature holds, so a request without a valid token never waits on the database."""
        token = _bearer(authorization)
        parts = token.rsplit(".", 2) if token else []
        # ASCII digits only: str.isdigit() takes '²' and '٣', and int() then fails
        if len(parts) != 3 or not re.fullmatch(USER_ID, parts[0]) or not re.fullmatch(r"[0-9]{1,16}", parts[1]):
            return None
        expected = hmac.new(self.secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), parts[2].encode("utf-8", "replace")):
            return None
        if int(parts[1]) <= (now_ms() if callable(now_ms) else now_ms):
            return None
        return canonical_user_id(parts[0])

    def is_operator(self, authorization: Optional[str]) -> bool:
        token = _bearer(authorization)
        return token is not None and hmac.compare_digest(token.encode(), self.operator_token)


def _bearer(authorization: Optional[str]) -> Optional[str]:
    if not authorization or not authorization.startswith("Bearer ") or len(authorization) > 512:
        return None
    return authorization[len("Bearer "):].strip()


# -- the request bodies --------------------------------------------------------------------------

class Strict(BaseModel):
    # strict: 12345 is not a string, 1e999 is not an id; forbid: a misspelt key is an error
    model_config = ConfigDict(strict=True, extra="forbid")


class OrderRequest(Strict):
    product_id: ProductId
    user_id: Optional[UserId] = None      # optional; when given, it must be the token's user


class ReceiptRequest(Strict):
    receipt: Annotated[str, StringConstraints(min_length=1, pattern=r"^[A-Za-z0-9+/=\r\n]+$")]
    user_id: Optional[UserId] = None


class TransactionRequest(Strict):
    # The proof: the signed transaction StoreKit 2 gave the app. An id alone is accepted only for a
    # purchase whose appAccountToken names the user (ids are guessable).
    signed_transaction: Optional[Annotated[str, StringConstraints(min_length=1, max_length=16384,
                                                                  pattern=r"^[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+$")]] = None
    transaction_id: Optional[TransactionId] = None
    # Apple's spelling; the lower case of release 0.1 is still accepted (deprecated).
    environment: Literal["Production", "Sandbox", "production", "sandbox"] = "Production"
    user_id: Optional[UserId] = None


class NotificationRequest(Strict):
    model_config = ConfigDict(strict=True, extra="ignore")   # Apple may add keys
    signedPayload: Annotated[str, StringConstraints(min_length=1, pattern=r"^[A-Za-z0-9_.=-]+$")]


def error(status: int, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


# -- the app -------------------------------------------------------------------------------------

def create_app(service: PurchaseService, auth: Auth, limits: Limits = Limits()) -> "AccessLog":
    app = FastAPI(title="purchase service", docs_url=None, redoc_url=None, openapi_url=None)
    proxies = Proxies(limits.trusted_proxies)
    apple = AppleSlots(limits.apple_concurrency)
    probes = ThreadPoolExecutor(max_workers=2, thread_name_prefix="probes")   # readiness and /metrics

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return error(400, "the body is not valid JSON")
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        return error(422, "invalid request", field=where, problem=str(first.get("msg", "invalid"))[:200])

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # The details go to the log, never to the client: they name hosts, tables and code. Once:
        # Starlette raises the exception on after this answer, and AccessLog does not log it again.
        log_event(logging.ERROR, "request_failed", path=request.url.path, error=f"{type(exc).__name__}: {exc}"[:500])
        request.scope["iapv.logged"] = True
        return error(503, "temporarily unavailable, try again")

    def user(scope, authorization: Optional[str], claimed: Optional[str]) -> str:
        # The token is checked before the clock (the database's) is read: no token, no database.
        who = auth.user_of(authorization, service.clock)
        if who is None:
            raise _HTTPError(401, "a valid user token is required (Authorization: Bearer ...)")
        if claimed is not None and canonical_user_id(claimed) != who:
            raise _HTTPError(403, "user_id is not the authenticated user")
        scope[USER] = who
        return who

    def operator(authorization: Optional[str]) -> None:
        if not auth.is_operator(authorization):
            raise _HTTPError(401, "the operator token is required (Authorization: Bearer ...)")

    @app.exception_handler(_HTTPError)
    async def refused(request: Request, exc: "_HTTPError") -> JSONResponse:
        answer = error(exc.status, exc.message)
        answer.headers.update(exc.headers)
        return answer

    claims = ClaimLimiter(limits.claims_per_user, limits.claims_per_address)
    orders = ClaimLimiter(limits.orders_per_user, limits.orders_per_address)

    def admit(limiter: ClaimLimiter, who: str, request: Request, entry: str) -> None:
        # the address only when a trusted proxy said whose it is (see ClaimLimiter)
        address = request.scope.get(CLIENT) if request.scope.get(VIA_PROXY) else None
        wait_s = limiter.admit(who, address, service.clock())
        if wait_s is not None:
            service.metrics.claim_refusals.labels(entry, "rate_limited").inc()
            log_event(logging.WARNING, "claim_rate_limited", entry_point=entry, user_id=who, client=request.scope.get(CLIENT))
            what = "orders" if entry == "order" else "purchase claims"
            raise _HTTPError(429, f"too many {what}; try again in {wait_s} s", {"Retry-After": str(wait_s)})

    def outcome(result: dict) -> JSONResponse:
        # invalid: the library's own checks refused it (not a receipt, not this app's): a client error
        return JSONResponse(result, status_code={"accepted": 200, "pending": 202, "invalid": 400}.get(result["status"], 403))

    async def claim(who: str, kind: str, subject: str, environment: str) -> JSONResponse:
        """A checked claim: to Apple on one of the front's Apple slots, or queued (202) when none is free."""
        if apple.take():
            return outcome(await apple.run(service.purchases.submit, who, kind, subject, environment, 1, True))
        return outcome(await run_in_threadpool(service.purchases.queue_claim, who, kind, subject, environment))

    @app.post("/orders", status_code=201)
    def create_order(body: OrderRequest, request: Request, authorization: Annotated[Optional[str], Header()] = None) -> dict:
        who = user(request.scope, authorization, body.user_id)
        catalog = service.config.get("products")
        if catalog is not None and body.product_id not in catalog:   # an order nothing could ever pay
            raise _HTTPError(422, f"product_id {body.product_id!r} is not in the service's catalog")
        admit(orders, who, request, "order")
        return {"order_id": service.create_order(who, body.product_id)}

    @app.post("/receipts")
    async def submit_receipt(body: ReceiptRequest, request: Request,
                             authorization: Annotated[Optional[str], Header()] = None) -> JSONResponse:
        def check() -> tuple[str, Optional[dict]]:
            who = user(request.scope, authorization, body.user_id)
            admit(claims, who, request, "receipt")
            return who, service.purchases.check_receipt(who, body.receipt)
        who, refused = await run_in_threadpool(check)
        return outcome(refused) if refused else await claim(who, RECEIPT, body.receipt, "Production")

    @app.post("/storekit2/transactions")
    async def submit_transaction(body: TransactionRequest, request: Request,
                                 authorization: Annotated[Optional[str], Header()] = None) -> JSONResponse:
        def check() -> Union[JSONResponse, tuple[str, str, str, str]]:
            who = user(request.scope, authorization, body.user_id)
            if (body.signed_transaction is None) == (body.transaction_id is None):
                return error(422, "invalid request", field="signed_transaction",
                             problem="send signed_transaction (the app's signed transaction) or transaction_id, not both")
            if service.signer is None:
                return error(501, "StoreKit 2 is not configured on this service (APPLE_API_KEY_FILE)")
            admit(claims, who, request, "storekit2")
            if body.signed_transaction is None:
                return who, STOREKIT2, body.transaction_id or "", server_environment(body.environment)
            checked = service.purchases.check_signed_transaction(who, body.signed_transaction)
            return outcome(checked) if isinstance(checked, dict) else (who, STOREKIT2_SIGNED, *checked)
        checked = await run_in_threadpool(check)
        return checked if isinstance(checked, JSONResponse) else await claim(*checked)

    def entitlements(scope, user_id: str, authorization: Optional[str], if_none_match: str) -> tuple[int, dict, bytes]:
        """GET /users/{user_id}/entitlements, the request apps make most: answered by
        http_middleware.EntitlementReads on FastAPI's thread pool, without its routing and
        parameter layers (half the front's CPU per read). (status, headers, body)."""
        try:
            if not re.fullmatch(USER_ID, user_id):
                return 422, {}, json.dumps({"error": "invalid request", "field": "user_id",
                                            "problem": "1-64 letters, digits, '-' or '_'"}).encode()
            who = user(scope, authorization, user_id)
            doc = service.entitlements(who)
        except _HTTPError as e:
            return e.status, e.headers, json.dumps({"error": e.message}).encode()
        # The ETag covers what the app acts on, not the clock: it changes when access changes.
        # The entitlements are encoded once, for the tag and the body.
        listed = json.dumps(doc["entitlements"], sort_keys=True, separators=(",", ":"))
        tag = '"' + hashlib.sha256(listed.encode()).hexdigest()[:32] + '"'
        if tag in [t.strip() for t in if_none_match.split(",")]:
            return 304, {"ETag": tag}, b""
        body = f'{{"user_id":{json.dumps(doc["user_id"])},"now_ms":{int(doc["now_ms"])},"entitlements":{listed}}}'
        return 200, {"ETag": tag, "Cache-Control": "private, no-cache"}, body.encode()

    @app.post("/apple/notifications")
    def notification(body: NotificationRequest) -> JSONResponse:
        status, result = service.handle_notification(body.signedPayload)
        return JSONResponse(result, status_code=status)

    @app.post("/apple/retention")
    def realtime(body: NotificationRequest) -> JSONResponse:
        # Apple's Retention Messaging realtime URL: {"signedPayload": ...}, like a notification.
        status, result = service.handle_realtime_request(body.signedPayload)
        return JSONResponse(result, status_code=status)

    @app.get("/livez")
    async def livez() -> JSONResponse:
        # Liveness: the process answers, on the event loop, outside the request limit. Never the
        # database: a database outage must not make an orchestrator restart every front at once.
        return JSONResponse({"ok": True})

    @app.get("/readyz")
    @app.get("/health")
    async def ready() -> JSONResponse:
        # Outside the request limit and the API's thread pool: a front whose pool is busy (or
        # whose Apple is slow) still says whether it can serve.
        try:
            doc = await asyncio.get_running_loop().run_in_executor(probes, service.ready, limits.ready_timeout_s)
            return JSONResponse(doc)
        except Exception as e:  # the database is what a front needs: say so to the load balancer, fast
            log_event(logging.ERROR, "not_ready", error=f"{type(e).__name__}: {e}"[:500])
            return JSONResponse({"ok": False, "error": "the database does not answer"}, status_code=503)

    @app.get("/jobs")
    def jobs(request: Request, authorization: Annotated[Optional[str], Header()] = None) -> dict:
        operator(authorization)
        return service.health()

    @app.post("/jobs/retry")
    def retry(authorization: Annotated[Optional[str], Header()] = None) -> dict:
        operator(authorization)
        return {"results": service.retry_pending()}

    @app.get("/metrics")
    async def metrics(authorization: Annotated[Optional[str], Header()] = None) -> Response:
        # From memory: the database's gauges wait for it at most half a second (then stale).
        operator(authorization)
        text = await asyncio.get_running_loop().run_in_executor(probes, service.metrics.text)
        return Response(text, media_type="text/plain; version=0.0.4")

    refusals = RefusalLog()
    outer = AccessLog(None, service, auth, proxies, refusals)
    outer.app = RequestLimit(BodyLimits(EntitlementReads(app, entitlements), limits), limits.max_concurrency,
                             outer.connection_refused)
    outer.guard = ConnectionGuard(limits.max_connections, limits.connections_per_address, proxies,
                                  outer.connection_refused)
    return outer


class _HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: Optional[dict] = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


# -- running it ----------------------------------------------------------------------------------

def make_server(app: "AccessLog", sock: socket.socket, limits: Limits):
    """uvicorn with the front's own guards: no limit_concurrency (it counts connections, so idle
    or slow ones made every request 503, /livez included: RequestLimit counts requests instead,
    and http_server's ConnectionGuard caps connections per address), and no proxy_headers (uvicorn
    believes X-Forwarded-For from 127.0.0.1 by default: http_server.Proxies believes it only
    from --trusted-proxies)."""
    import uvicorn
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", proxy_headers=False,
                            http=guarded_protocol(app.guard, limits.head_timeout_s, app.bad_request),
                            limit_concurrency=None, timeout_keep_alive=limits.keep_alive_s,
                            timeout_graceful_shutdown=10, backlog=2048)
    return uvicorn.Server(config)


class ServerHandle:
    """A front serving in a background thread (tests and the single-process role)."""

    def __init__(self, server, sock: socket.socket, stop_worker: Optional[threading.Event] = None):
        self.server, self.sock, self.stop_worker = server, sock, stop_worker
        self.server_address = sock.getsockname()
        self.thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()

    def shutdown(self) -> None:
        if self.stop_worker is not None:
            self.stop_worker.set()
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()


def serve(service: PurchaseService, host: str, port: int, retry_every_s: Optional[float] = 5.0,
          auth: Optional[Auth] = None, limits: Limits = Limits()) -> ServerHandle:
    """The HTTP front in a background thread; with retry_every_s, a worker thread too.
    handle.shutdown() stops both."""
    sock = bind(host, port)
    server = make_server(create_app(service, auth or auth_from_env(), limits), sock, limits)
    stop = threading.Event()
    if retry_every_s is not None:
        threading.Thread(target=service.work, args=(stop, retry_every_s), daemon=True).start()
    return ServerHandle(server, sock, stop)


def auth_from_env() -> Auth:
    import os
    secret, operator = os.environ.get("SERVICE_USER_TOKEN_SECRET", ""), os.environ.get("SERVICE_OPERATOR_TOKEN", "")
    if not secret or not operator:   # a startup failure: service.main logs it as one JSON line
        raise ValueError("set SERVICE_USER_TOKEN_SECRET (signs user tokens) and SERVICE_OPERATOR_TOKEN "
                         "(for /jobs/retry and /metrics), each at least 16 random characters: "
                         "python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return Auth(secret, operator)


__all__ = ["Auth", "Limits", "Refused", "create_app", "serve", "bind", "make_server", "auth_from_env"]
