"""The ASGI layers around the API (http_api.py builds them): the access log and metrics, the
limit on requests in hand, and the body limits. Outermost first:

- AccessLog: one JSON line and one observation per request, the client's address (the peer's,
  or a trusted proxy's X-Forwarded-For: http_server.Proxies), an error the app raised logged
  once and answered 503;
- RequestLimit: at most max_concurrency requests in hand; beyond, 503 with the client's address
  in the (rate-limited) log. Liveness and readiness are answered whatever the count: a front
  that is busy is neither dead nor unready;
- BodyLimits: the whole body read before the app sees it, within its size and time limits."""
from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import TYPE_CHECKING, Optional

from http_server import Proxies, RefusalLog
from observability import log_event, method_label, status_class

if TYPE_CHECKING:
    from http_api import Auth, Limits
    from service import PurchaseService

CLIENT, VIA_PROXY, USER = "iapv.client", "iapv.via_proxy", "iapv.user"    # what AccessLog puts in the scope
PROBES = frozenset(("/livez", "/readyz", "/health"))


async def answer(send, status: int, message: str, close: bool = False) -> None:
    data = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status,
                "headers": headers + ([(b"connection", b"close")] if close else [])})
    await send({"type": "http.response.body", "body": data})


class AccessLog:
    """Outermost: one JSON line per request (method, path, route, status, duration, the user a
    valid token names, the client's address) and the request histogram of /metrics, labelled by
    the route's template, the method (a fixed set: http_server accepts any token) and the status
    class, so no client can add series. An exception that reaches it (Starlette re-raises after
    the app's own handler answered) is logged once, here, and answered 503 if nothing was sent."""

    def __init__(self, app, service: "PurchaseService", auth: "Auth", proxies: Proxies, refusals: RefusalLog):
        self.app, self.service, self.auth, self.proxies, self.refusals = app, service, auth, proxies, refusals

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.monotonic(), [0]
        scope[CLIENT], scope[VIA_PROXY] = self.proxies.client(scope)

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, sending)
        except Exception as e:
            if not scope.get("iapv.logged"):
                log_event(logging.ERROR, "request_failed", path=scope["path"][:200], error=f"{type(e).__name__}: {e}"[:500])
            if status[0] == 0:
                await answer(sending, 503, "temporarily unavailable, try again")
        finally:
            self.observe(scope, status[0] or 500, time.monotonic() - start)

    def observe(self, scope, status: int, elapsed: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        self.service.metrics.http.labels(template, method_label(scope["method"]), status_class(status)).observe(elapsed)
        user = scope.get(USER)
        if user is None:
            authorization = next((v for k, v in scope.get("headers") or () if k == b"authorization"), b"").decode("latin-1")
            user = self.auth.user_of(authorization, _now_ms()) if authorization.startswith("Bearer ") else None
        log_event(logging.INFO, "http", method=scope["method"][:32], path=scope["path"][:200], route=template,
                  status=status, duration_ms=round(elapsed * 1000, 2), user_id=user, client=scope.get(CLIENT))

    def bad_request(self, client: Optional[str]) -> None:
        """A request uvicorn answered 400 itself (h11 could not parse it): a line and a metric too."""
        self.service.metrics.connection_refusals.labels("bad_request").inc()
        self.service.metrics.http.labels("unparsed", "other", "4xx").observe(0.0)
        log_event(logging.INFO, "http", route="unparsed", status=400, client=client)

    def connection_refused(self, reason: str, client: Optional[str]) -> None:
        self.service.metrics.connection_refusals.labels(reason).inc()
        self.refusals.note("connection_refused", reason, client)


def _now_ms() -> int:
    # token expiry in the access log only: the request itself was judged by the service's clock
    return int(time.time() * 1000)


class RequestLimit:
    """At most `limit` requests in hand at once (counted on the event loop's thread); beyond, 503
    at once. Connections are not requests: a connection still sending its head holds nothing
    here (http_server caps those per address)."""

    def __init__(self, app, limit: int, on_refusal):
        self.app, self.limit, self.on_refusal = app, limit, on_refusal
        self.in_hand = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] in PROBES:
            return await self.app(scope, receive, send)
        if self.in_hand >= self.limit:
            self.on_refusal("max_concurrency", scope.get(CLIENT))
            return await answer(send, 503, "too many requests in hand, try again")
        self.in_hand += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_hand -= 1


class EntitlementReads:
    """GET /users/{user_id}/entitlements straight from ASGI: the same checks and answers as an
    endpoint (http_api's `entitlements`, on a thread pool), without FastAPI's routing,
    parameter and response layers, which cost as much CPU as the read itself. Anything else goes
    on to the app. An error the read raises is logged once and answered 503, as the app's are."""

    PATH = re.compile(r"/users/([^/]*)/entitlements")
    ROUTE = SimpleNamespace(path="/users/{user_id}/entitlements")    # the route label of the metrics

    def __init__(self, app, read, threads: int = 40):
        # Threads of its own (as many as FastAPI's pool): asyncio's executor hands a call over
        # with less work than anyio's, which FastAPI's endpoints go through.
        self.app, self.read = app, read
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="reads")

    async def __call__(self, scope, receive, send):
        match = self.PATH.fullmatch(scope["path"]) if scope["type"] == "http" and scope["method"] == "GET" else None
        if match is None:
            return await self.app(scope, receive, send)
        scope["route"] = self.ROUTE
        headers = dict(scope["headers"])
        try:
            status, extra, body = await asyncio.get_running_loop().run_in_executor(
                self.pool, self.read, scope, match.group(1),
                headers.get(b"authorization", b"").decode("latin-1") or None,
                headers.get(b"if-none-match", b"").decode("latin-1"))
        except Exception as e:
            log_event(logging.ERROR, "request_failed", path=scope["path"][:200], error=f"{type(e).__name__}: {e}"[:500])
            scope["iapv.logged"] = True
            return await answer(send, 503, "temporarily unavailable, try again")
        out = [(b"content-length", str(len(body)).encode())]
        if status != 304:
            out.append((b"content-type", b"application/json"))
        out += [(k.lower().encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": out})
        await send({"type": "http.response.body", "body": body})


class BodyLimits:
    """Reads the whole body before the app sees it, refusing one over its path's limit (413, from
    Content-Length or as it streams) or one that does not arrive within body_timeout_s (408: a
    client that announced more than it sends holds nothing for long)."""

    def __init__(self, app, limits: "Limits"):
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
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if scope["method"] in ("GET", "HEAD") and declared is None and b"transfer-encoding" not in headers:
            return await self.app(scope, receive, send)     # no body to wait for
        limit = self.limit_for(scope["path"])
        if scope["method"] == "POST" and declared not in (None, b"0") and \
                not headers.get(b"content-type", b"").split(b";")[0].strip().lower() == b"application/json":
            return await answer(send, 415, "send the body as JSON with Content-Type: application/json", close=True)
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return await answer(send, 413, f"the body is larger than {limit} bytes", close=True)
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.limits.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    size += len(message.get("body", b""))
                    if size > limit:
                        return await answer(send, 413, f"the body is larger than {limit} bytes", close=True)
                    chunks.append(message.get("body", b""))
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            return await answer(send, 408, "the body did not arrive in time", close=True)
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        return await self.app(scope, replay, send)
