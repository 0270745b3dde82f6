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

The library calls block, so the endpoints are plain functions: FastAPI runs them in its thread
pool, and the event loop only moves bytes.
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
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal, Optional

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, StringConstraints

from http_server import bind, first_request_timeout_protocol
from observability import log_event
from purchases import Refused

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
    max_concurrency: int = 200                  # connections and requests at once; beyond: 503
    keep_alive_s: float = 5.0                   # an idle keep-alive connection is closed after this
    # Claims (POST /receipts, /storekit2/transactions) each cost Apple quota: per minute, per front.
    claims_per_user: int = 20
    claims_per_address: int = 60
    ready_timeout_s: float = 1.0                # readiness fails this fast when the database is away


class ClaimLimiter:
    """Fixed one-minute windows by the service's clock, per user and per client address: a user
    who guesses transaction ids, or one address trying many accounts, gets 429 with Retry-After
    before Apple is asked. In memory, per front (N fronts allow N times the rate)."""

    WINDOW_MS = 60_000

    def __init__(self, per_user: int, per_address: int):
        self.per_user, self.per_address = per_user, per_address
        self.window = -1
        self.counts: dict[tuple[str, str], int] = {}
        self.lock = threading.Lock()

    def admit(self, user: str, address: str, now_ms: int) -> Optional[int]:
        """None when the claim may go on; otherwise the seconds until the window ends."""
        with self.lock:
            window = now_ms // self.WINDOW_MS
            if window != self.window:      # a new minute: every count starts again (and memory is freed)
                self.window, self.counts = window, {}
            over = False
            for key, limit in ((("user", user), self.per_user), (("address", address), self.per_address)):
                self.counts[key] = self.counts.get(key, 0) + 1
                over = over or self.counts[key] > limit
            return -(-((window + 1) * self.WINDOW_MS - now_ms) // 1000) if over else None


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

    def user_of(self, authorization: Optional[str], now_ms: int) -> Optional[str]:
        """The user a valid, unexpired token names, else None."""
        token = _bearer(authorization)
        parts = token.rsplit(".", 2) if token else []
        if len(parts) != 3 or not re.fullmatch(USER_ID, parts[0]) or not parts[1].isdigit():
            return None
        expected = hmac.new(self.secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), parts[2].encode()) or int(parts[1]) <= now_ms:
            return None
        return parts[0]

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

def create_app(service: PurchaseService, auth: Auth, limits: Limits = Limits()) -> FastAPI:
    app = FastAPI(title="purchase service", docs_url=None, redoc_url=None, openapi_url=None)

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
        # The details go to the log, never to the client: they name hosts, tables and code.
        log_event(logging.ERROR, "request_failed", path=request.url.path, error=f"{type(exc).__name__}: {exc}"[:500])
        return error(503, "temporarily unavailable, try again")

    def user(authorization: Optional[str], claimed: Optional[str]) -> str:
        who = auth.user_of(authorization, service.clock())
        if who is None:
            raise _HTTPError(401, "a valid user token is required (Authorization: Bearer ...)")
        if claimed is not None and claimed != who:
            raise _HTTPError(403, "user_id is not the authenticated user")
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

    def admit_claim(who: str, request: Request, entry: str) -> None:
        address = request.client.host if request.client else "unknown"
        wait_s = claims.admit(who, address, service.clock())
        if wait_s is not None:
            service.metrics.claim_refusals.labels(entry, "rate_limited").inc()
            log_event(logging.WARNING, "claim_rate_limited", entry_point=entry, user_id=who, client=address)
            raise _HTTPError(429, f"too many purchase claims; try again in {wait_s} s", {"Retry-After": str(wait_s)})

    def outcome(result: dict) -> JSONResponse:
        # invalid: the library's own checks refused it (not a receipt, not this app's): a client error
        return JSONResponse(result, status_code={"accepted": 200, "pending": 202, "invalid": 400}.get(result["status"], 403))

    @app.post("/orders", status_code=201)
    def create_order(body: OrderRequest, authorization: Annotated[Optional[str], Header()] = None) -> dict:
        who = user(authorization, body.user_id)
        catalog = service.config.get("products")
        if catalog is not None and body.product_id not in catalog:   # an order nothing could ever pay
            raise _HTTPError(422, f"product_id {body.product_id!r} is not in the service's catalog")
        return {"order_id": service.create_order(who, body.product_id)}

    @app.post("/receipts")
    def submit_receipt(body: ReceiptRequest, request: Request,
                       authorization: Annotated[Optional[str], Header()] = None) -> JSONResponse:
        who = user(authorization, body.user_id)
        admit_claim(who, request, "receipt")
        return outcome(service.submit_receipt(who, body.receipt))

    @app.post("/storekit2/transactions")
    def submit_transaction(body: TransactionRequest, request: Request,
                           authorization: Annotated[Optional[str], Header()] = None) -> JSONResponse:
        who = user(authorization, body.user_id)
        if (body.signed_transaction is None) == (body.transaction_id is None):
            return error(422, "invalid request", field="signed_transaction",
                         problem="send signed_transaction (the app's signed transaction) or transaction_id, not both")
        if service.signer is None:
            return error(501, "StoreKit 2 is not configured on this service (APPLE_API_KEY_FILE)")
        admit_claim(who, request, "storekit2")
        if body.signed_transaction is not None:
            return outcome(service.submit_signed_transaction(who, body.signed_transaction))
        return outcome(service.submit_transaction(who, body.transaction_id, body.environment))

    @app.get("/users/{user_id}/entitlements")
    def entitlements(user_id: str, request: Request,
                     authorization: Annotated[Optional[str], Header()] = None) -> Response:
        if not re.fullmatch(USER_ID, user_id):
            return error(422, "invalid request", field="user_id", problem="1-64 letters, digits, '-' or '_'")
        user(authorization, user_id)
        doc = service.entitlements(user_id)
        # The ETag covers what the app acts on, not the clock: it changes when access changes.
        tag = '"' + hashlib.sha256(json.dumps(doc["entitlements"], sort_keys=True).encode()).hexdigest()[:32] + '"'
        if tag in [t.strip() for t in request.headers.get("if-none-match", "").split(",")]:
            return Response(status_code=304, headers={"ETag": tag})
        return JSONResponse(doc, headers={"ETag": tag, "Cache-Control": "private, no-cache"})

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
        # Liveness: the process answers. Never the database: a database outage must not make an
        # orchestrator restart every front at once.
        return JSONResponse({"ok": True})

    @app.get("/readyz")
    @app.get("/health")
    def ready() -> JSONResponse:
        try:
            return JSONResponse(service.ready(limits.ready_timeout_s))
        except Exception as e:  # the database is what a front needs: say so to the load balancer, fast
            log_event(logging.ERROR, "not_ready", error=f"{type(e).__name__}: {e}"[:500])
            return JSONResponse({"ok": False, "error": "the database does not answer"}, status_code=503)

    @app.get("/jobs")
    def jobs(authorization: Annotated[Optional[str], Header()] = None) -> dict:
        operator(authorization)
        return service.health()

    @app.post("/jobs/retry")
    def retry(authorization: Annotated[Optional[str], Header()] = None) -> dict:
        operator(authorization)
        return {"results": service.retry_pending()}

    @app.get("/metrics")
    def metrics(authorization: Annotated[Optional[str], Header()] = None) -> Response:
        operator(authorization)
        return Response(service.metrics.text(), media_type="text/plain; version=0.0.4")

    return AccessLog(BodyLimits(app, limits), service, auth)


class _HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: Optional[dict] = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class AccessLog:
    """ASGI middleware, outermost: one JSON line per request (method, path, route, status,
    duration, the user a valid token names, the client's address) and the request histogram of
    /metrics by route (the route's template, so user ids do not multiply the series)."""

    def __init__(self, app, service: PurchaseService, auth: Auth):
        self.app, self.service, self.auth = app, service, auth

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.monotonic(), [500]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, sending)
        finally:
            elapsed = time.monotonic() - start
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.service.metrics.http.labels(template, scope["method"], str(status[0])).observe(elapsed)
            headers = dict(scope.get("headers") or [])
            authorization = headers.get(b"authorization", b"").decode("latin-1")
            user = self.auth.user_of(authorization, _now_ms()) if authorization.startswith("Bearer ") else None
            client = scope.get("client")
            log_event(logging.INFO, "http", method=scope["method"], path=scope["path"][:200], route=template,
                      status=status[0], duration_ms=round(elapsed * 1000, 2), user_id=user,
                      client=client[0] if client else None)


def _now_ms() -> int:
    # token expiry in the access log only: the request itself was judged by the service's clock
    return int(time.time() * 1000)


class BodyLimits:
    """ASGI middleware: reads the whole body before the app sees it, refusing one over its path's
    limit (413, from Content-Length or as it streams) or one that does not arrive within
    body_timeout_s (408: a client that announced more than it sends holds nothing for long)."""

    def __init__(self, app, limits: Limits):
        self.app, self.limits = app, limits

    def limit_for(self, path: str) -> int:
        if path == "/receipts":
            return self.limits.max_receipt_bytes
        if path in ("/apple/notifications", "/apple/retention"):
            return self.limits.max_notification_bytes
        return self.limits.max_body_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.limit_for(scope["path"])
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if scope["method"] == "POST" and declared not in (None, b"0") and \
                not headers.get(b"content-type", b"").split(b";")[0].strip().lower() == b"application/json":
            return await self._answer(send, 415, "send the body as JSON with Content-Type: application/json")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return await self._answer(send, 413, f"the body is larger than {limit} bytes")
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    size += len(message.get("body", b""))
                    if size > limit:
                        return await self._answer(send, 413, f"the body is larger than {limit} bytes")
                    chunks.append(message.get("body", b""))
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            return await self._answer(send, 408, "the body did not arrive in time")
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        return await self.app(scope, replay, send)

    @staticmethod
    async def _answer(send, status: int, message: str) -> None:
        data = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": data})


# -- running it ----------------------------------------------------------------------------------

def make_server(app, sock: socket.socket, limits: Limits):
    import uvicorn
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                            http=first_request_timeout_protocol(limits.head_timeout_s),
                            limit_concurrency=limits.max_concurrency, timeout_keep_alive=limits.keep_alive_s,
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
    if not secret or not operator:
        raise SystemExit("set SERVICE_USER_TOKEN_SECRET (signs user tokens) and SERVICE_OPERATOR_TOKEN "
                         "(for /jobs/retry and /metrics), each at least 16 random characters: "
                         "python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    return Auth(secret, operator)


__all__ = ["Auth", "Limits", "Refused", "create_app", "serve", "bind", "make_server", "auth_from_env"]
