"""Sends App Store Server API calls with httpx and follows the library's actions.

Needs httpx: ``pip install 'iapverify[http]'``. The library still builds every request
(``Signer.api_request``) and reads every answer (``Verifier.interpret_api_response``); this module
only moves the bytes and waits where a result says to::

    with iapverify.http.Client(signer, verifier) as client:
        history = client.call({"endpoint": "transaction_history", "transaction_id": "2000000123456789"})
        print(len(history.transactions), history.unsigned["revision"])

A call ends with a ``CallResult`` (``accept``) or an ``APICallError`` subclass that carries the last
result: ``GiveUpError``, ``FixConfigurationError``, ``RejectError`` or ``DeadlineError``.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, Optional, Union, cast

try:
    import httpx
except ImportError as e:                       # pragma: no cover - depends on the installation
    raise ImportError("iapverify.http needs httpx: pip install 'iapverify[http]' (or pip install httpx)") from e

from . import Signer, Verifier, now_ms as _host_now_ms
from .enums import Action, ServerEnvironment, known
from .records import Notification, RenewalInfo, Transaction
from .results import APIRequest, APIResult, Result, Revocation, UnsignedFields

__all__ = ["Client", "AsyncClient", "CallResult", "APICallError", "GiveUpError", "FixConfigurationError",
           "RejectError", "DeadlineError", "OCSPError", "fetch_ocsp", "afetch_ocsp"]

# No answer from Apple (no connection, a timeout, a connection dropped mid-answer) is given to the
# library as this status without a body: it says retry_later, then give_up.
UNREACHABLE_STATUS = 503
_UNREACHABLE = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_DEFAULT: Any = object()


class APICallError(Exception):
    """A call that ended without ``accept``. ``result`` is the last ``APIResult`` (None if there was
    none), ``call`` the call as last sent."""

    def __init__(self, message: str, result: Optional[APIResult], call: dict[str, Any]):
        super().__init__(message)
        self.result = result
        self.call = call

    @property
    def action(self) -> Union[Action, str, None]:
        """The last result's action, or None."""
        return None if self.result is None else self.result.action


class GiveUpError(APICallError):
    """``give_up``: Apple stayed unavailable. Queue the work for later."""


class FixConfigurationError(APICallError):
    """``fix_configuration``: Apple refused the token (HTTP 401). Retrying does not help."""


class RejectError(APICallError):
    """``reject``: Apple refused the call, or its answer did not verify. Nothing is granted."""


class DeadlineError(APICallError):
    """The call's deadline passed, or the wait a ``retry_later`` result asked for would pass it
    (then ``result.retry_after_ms`` says when to try again)."""


class OCSPError(Exception):
    """The OCSP responder gave no usable answer (no connection, a timeout, a status other than 200)."""


@dataclass(frozen=True)
class CallResult:
    """An accepted call: every page's verified items, in order, and the last page's result.

    ``pages`` has each page's ``APIResult``; ``result`` is the last one. ``environment`` is the host
    that answered (``ServerEnvironment.PRODUCTION`` or ``SANDBOX``), ``requests`` how many HTTP
    requests were sent (retries included), ``deprecations`` the old spellings the call or its
    options used (as ``APIRequest.deprecations`` and ``APIResult.deprecations`` say). A page's
    ``entitlements`` cover that page only: pass ``entitlement_input`` to
    ``Verifier.compute_entitlements`` for the whole answer.
    """

    result: APIResult
    pages: list[APIResult]
    transactions: list[Transaction]
    renewal_info: list[RenewalInfo]
    notifications: list[Notification]
    environment: Union[ServerEnvironment, str]
    requests: int
    deprecations: list[str] = field(default_factory=list)

    @property
    def unsigned(self) -> Optional[UnsignedFields]:
        """The last page's unsigned fields (e.g. ``revision``: store it for the next call)."""
        return self.result.unsigned

    @property
    def entitlement_input(self) -> dict[str, list[dict[str, Any]]]:
        """``{"transactions": ..., "renewal_info": ...}`` of every page, for ``compute_entitlements``."""
        return {"transactions": [t.to_dict() for t in self.transactions],
                "renewal_info": [r.to_dict() for r in self.renewal_info]}


class _Follow:
    """One call's state: the call, the attempt, the pages so far, the deadline. Both clients drive it."""

    def __init__(self, client: "_Base", call: Mapping[str, Any], options: Any, deadline_s: Optional[float]):
        if not isinstance(call, Mapping):
            raise TypeError(f"call must be a mapping, not {type(call).__name__}")
        self.client = client
        self.call: dict[str, Any] = dict(call)
        self.call.setdefault("environment", ServerEnvironment.PRODUCTION.value)
        self.first = dict(self.call)
        self.options = options
        self.attempt = 1
        self.sent = 0
        self.switched = False
        self.pages: list[APIResult] = []
        self.last: Optional[APIResult] = None
        self.problem: Optional[BaseException] = None   # the transport error behind the last 503, if any
        self.deprecations: list[str] = []              # what the requests and results said, once each
        self.deadline = None if deadline_s is None else client._clock() + deadline_s

    def _note(self, deprecations: list[str]) -> None:
        self.deprecations += [d for d in deprecations if d not in self.deprecations]

    def _left(self) -> Optional[float]:
        return None if self.deadline is None else self.deadline - self.client._clock()

    def _error(self, cls: type[APICallError], message: str) -> APICallError:
        err = cls(message, self.last, dict(self.call))
        err.__cause__ = self.problem
        return err

    def request(self) -> "tuple[APIRequest, float]":
        """A fresh request (a fresh token) and the timeout to send it with."""
        timeout = self.client.timeout_s
        left = self._left()
        if left is not None:
            if left <= 0:
                raise self._error(DeadlineError, f"the deadline passed after {self.sent} request(s)")
            timeout = min(timeout, left)
        request = self.client.signer.api_request(self.call, now_ms=self.client._now_ms())
        self._note(request.deprecations)
        self.sent += 1
        return request, timeout

    def answer(self, request: APIRequest, status: int, retry_after: Optional[str], body: bytes,
               problem: Optional[BaseException] = None) -> Union[CallResult, float, None]:
        """Interprets one answer. Returns the CallResult, seconds to wait before the next request,
        or None to send the next one now; raises when the call ends without accept."""
        self.problem = problem
        r = self.client.verifier.interpret_api_response(
            body, endpoint=request.endpoint, environment=request.environment, http_status=status,
            retry_after=retry_after, attempt=self.attempt, options=self.options, now_ms=self.client._now_ms())
        self.last = r
        self._note(r.deprecations)
        where = f"{request.endpoint} ({request.environment})"
        if r.action in (Action.ACCEPT, Action.NEXT_PAGE):
            self.pages.append(r)
            if r.action == Action.ACCEPT:
                return self._done(r, request)
            if not r.next_page:
                raise self._error(APICallError, f"{where}: next_page without a page token")
            following = {**self.call, **r.next_page}
            if following == self.call:
                raise self._error(APICallError, f"{where}: Apple gave the same page token again")
            self.call, self.attempt = following, 1
            return None
        if r.action == Action.RETRY_LATER:
            wait = (r.retry_after_ms or 0) / 1000
            left = self._left()
            if left is not None and wait >= left:
                raise self._error(DeadlineError, f"{where}: Apple asks to wait {wait:g} s, past the call's deadline "
                                                 f"({r.verdict}: {r.reason})")
            self.attempt += 1
            return wait
        if r.action == Action.RETRY_SANDBOX:
            if self.switched or request.environment != ServerEnvironment.PRODUCTION:
                raise self._error(RejectError, f"{where}: retry_sandbox again: stopping ({r.reason})")
            # Start over on the sandbox host, once; a production page token means nothing there.
            self.switched = True
            self.call = {**self.first, "environment": ServerEnvironment.SANDBOX.value}
            self.attempt, self.pages = 1, []
            return None
        errors: dict[str, type[APICallError]] = {Action.GIVE_UP: GiveUpError, Action.REJECT: RejectError,
                                                 Action.FIX_CONFIGURATION: FixConfigurationError}
        cls = errors.get(r.action, APICallError)
        raise self._error(cls, f"{where}: {r.action}: {r.verdict}: {r.reason}")

    def _done(self, r: APIResult, request: APIRequest) -> CallResult:
        return CallResult(result=r, pages=list(self.pages),
                          transactions=[t for p in self.pages for t in p.transactions],
                          renewal_info=[i for p in self.pages for i in p.renewal_info],
                          notifications=[n for p in self.pages for n in p.notifications],
                          environment=known(ServerEnvironment, request.environment), requests=self.sent,
                          deprecations=list(self.deprecations))


class _Base:
    def __init__(self, signer: Signer, verifier: Verifier, *, timeout_s: float, deadline_s: Optional[float],
                 clock: Callable[[], float], now_ms: Optional[Callable[[], int]]):
        if not isinstance(signer, Signer):
            raise TypeError(f"signer must be an iapverify.Signer, not {type(signer).__name__}")
        if not isinstance(verifier, Verifier):
            raise TypeError(f"verifier must be an iapverify.Verifier, not {type(verifier).__name__}")
        self.signer, self.verifier = signer, verifier
        self.timeout_s, self.deadline_s = timeout_s, deadline_s
        self._clock = clock
        self._now_ms = now_ms or _host_now_ms

    def _start(self, call: Mapping[str, Any], options: Any, deadline_s: Any) -> _Follow:
        return _Follow(self, call, options, self.deadline_s if deadline_s is _DEFAULT else deadline_s)


class Client(_Base):
    """Sends calls with an ``httpx.Client`` and follows the actions until accept or an error.

    ``http``: your ``httpx.Client`` (kept open), else one made here and closed by ``close()``.
    ``timeout_s``: per request; ``deadline_s``: per call, waits included (None: none).
    ``sleep``, ``clock`` (monotonic seconds) and ``now_ms`` (Unix milliseconds) are injectable
    for tests. Shared by threads if your ``httpx.Client`` is.
    """

    def __init__(self, signer: Signer, verifier: Verifier, *, http: Optional[httpx.Client] = None,
                 timeout_s: float = 30.0, deadline_s: Optional[float] = 60.0,
                 sleep: Callable[[float], Any] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 now_ms: Optional[Callable[[], int]] = None):
        super().__init__(signer, verifier, timeout_s=timeout_s, deadline_s=deadline_s, clock=clock, now_ms=now_ms)
        self._own = http is None
        self.http = httpx.Client(timeout=timeout_s) if http is None else http
        self._sleep = sleep

    def call(self, call: Mapping[str, Any], *, options: Any = None, deadline_s: Optional[float] = _DEFAULT) -> CallResult:
        """Runs one call (as for ``Signer.api_request``) to the end: every page, retries, sandbox.
        ``options`` go to each ``interpret_api_response`` (delivered_transaction_ids, orders, ...)."""
        run = self._start(call, options, deadline_s)
        while True:
            request, timeout = run.request()
            problem: Optional[BaseException] = None
            try:
                response = self.http.request(request.method, request.url, headers=request.headers, content=request.body,
                                             timeout=timeout, follow_redirects=False)
                status, retry_after, body = response.status_code, response.headers.get("Retry-After"), response.content
            except _UNREACHABLE as e:
                status, retry_after, body, problem = UNREACHABLE_STATUS, None, b"", e
            step = run.answer(request, status, retry_after, body, problem)
            if isinstance(step, CallResult):
                return step
            if step is not None:
                self._sleep(step)

    def fetch_ocsp(self, source: Union[Result, Revocation, None]) -> list[bytes]:
        """``fetch_ocsp`` with this client's ``httpx.Client``."""
        return fetch_ocsp(source, http=self.http)

    def close(self) -> None:
        """Closes the ``httpx.Client`` if this client made it."""
        if self._own:
            self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Base):
    """``Client`` for asyncio, with an ``httpx.AsyncClient``; ``sleep`` is awaited (default
    ``asyncio.sleep``). The library calls themselves are quick and run on the event loop."""

    def __init__(self, signer: Signer, verifier: Verifier, *, http: Optional[httpx.AsyncClient] = None,
                 timeout_s: float = 30.0, deadline_s: Optional[float] = 60.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 clock: Callable[[], float] = time.monotonic, now_ms: Optional[Callable[[], int]] = None):
        super().__init__(signer, verifier, timeout_s=timeout_s, deadline_s=deadline_s, clock=clock, now_ms=now_ms)
        self._own = http is None
        self.http = httpx.AsyncClient(timeout=timeout_s) if http is None else http
        self._sleep = sleep

    async def call(self, call: Mapping[str, Any], *, options: Any = None,
                   deadline_s: Optional[float] = _DEFAULT) -> CallResult:
        """As ``Client.call``."""
        run = self._start(call, options, deadline_s)
        while True:
            request, timeout = run.request()
            problem: Optional[BaseException] = None
            try:
                response = await self.http.request(request.method, request.url, headers=request.headers,
                                                   content=request.body, timeout=timeout, follow_redirects=False)
                status, retry_after, body = response.status_code, response.headers.get("Retry-After"), response.content
            except _UNREACHABLE as e:
                status, retry_after, body, problem = UNREACHABLE_STATUS, None, b"", e
            step = run.answer(request, status, retry_after, body, problem)
            if isinstance(step, CallResult):
                return step
            if step is not None:
                await self._sleep(step)

    async def fetch_ocsp(self, source: Union[Result, Revocation, None]) -> list[bytes]:
        """``afetch_ocsp`` with this client's ``httpx.AsyncClient``."""
        return await afetch_ocsp(source, http=self.http)

    async def aclose(self) -> None:
        """Closes the ``httpx.AsyncClient`` if this client made it."""
        if self._own:
            await self.http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ---- OCSP ------------------------------------------------------------------------------------

def _revocation(source: Union[Result, Revocation, None]) -> Optional[Revocation]:
    """What to ask: the source's revocation, or None when there is nothing to ask."""
    if isinstance(source, Result):
        source = source.revocation
    elif source is not None and not isinstance(source, Revocation):
        raise TypeError(f"source must be a result or a Revocation, not {type(source).__name__}")
    if source is None or source.responder_url is None or source.request_der is None:
        return None
    return source


def _ocsp_answer(revocation: Revocation, response: httpx.Response) -> list[bytes]:
    if response.status_code != 200:
        raise OCSPError(f"the OCSP responder {revocation.responder_url} answered HTTP {response.status_code}")
    return [response.content]


_OCSP_HEADERS = {"Content-Type": "application/ocsp-request"}


def fetch_ocsp(source: Union[Result, Revocation, None], *, http: Optional[httpx.Client] = None,
               timeout_s: float = 10.0) -> list[bytes]:
    """The OCSP answer for ``source`` (a result or its ``revocation``) as a list to pass back in
    ``options={"ocsp_responses": ...}``; ``[]`` when there is nothing to ask (no chain verified, no
    responder named). POSTs ``request_der`` to ``responder_url`` as ``application/ocsp-request``.
    Keep the answer until ``revocation.next_update_ms``. No answer, or not HTTP 200: ``OCSPError``."""
    revocation = _revocation(source)
    if revocation is None:
        return []
    own = http is None
    client = httpx.Client() if http is None else http
    try:
        response = client.post(cast(str, revocation.responder_url), content=revocation.request_der,
                               headers=_OCSP_HEADERS, timeout=timeout_s, follow_redirects=False)
    except httpx.HTTPError as e:
        raise OCSPError(f"the OCSP responder {revocation.responder_url} did not answer: {e!r}") from e
    finally:
        if own:
            client.close()
    return _ocsp_answer(revocation, response)


async def afetch_ocsp(source: Union[Result, Revocation, None], *, http: Optional[httpx.AsyncClient] = None,
                      timeout_s: float = 10.0) -> list[bytes]:
    """``fetch_ocsp`` for asyncio."""
    revocation = _revocation(source)
    if revocation is None:
        return []
    own = http is None
    client = httpx.AsyncClient() if http is None else http
    try:
        response = await client.post(cast(str, revocation.responder_url), content=revocation.request_der,
                                     headers=_OCSP_HEADERS, timeout=timeout_s, follow_redirects=False)
    except httpx.HTTPError as e:
        raise OCSPError(f"the OCSP responder {revocation.responder_url} did not answer: {e!r}") from e
    finally:
        if own:
            await client.aclose()
    return _ocsp_answer(revocation, response)
