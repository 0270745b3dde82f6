"""Sends App Store Server API calls with httpx and follows the library's actions.

Needs httpx: ``pip install 'iapverify[http]'``. The library still builds every request
(``Signer.api_request``) and reads every answer (``Verifier.interpret_api_response``); this module
only moves the bytes and waits where a result says to::

    with iapverify.http.Client(signer, verifier) as client:
        history = client.call({"endpoint": "transaction_history", "transaction_id": "2000000123456789"})
        print(len(history.transactions), history.unsigned["revision"])

A call ends with a ``CallResult`` (``accept``) or an ``APICallError`` subclass that carries the last
result: ``GiveUpError``, ``FixConfigurationError``, ``RejectError`` or ``DeadlineError``.

A host that queues work instead of sleeping in a request thread passes ``max_wait_s=0`` (or its
longest acceptable wait) and the job's ``attempt``; a ``retry_later`` it will not wait for ends
the call with ``DeadlineError``, whose ``result.retry_after_ms`` says when to run the job again,
with ``attempt=err.attempt + 1`` and ``err.call``::

    try:
        done = client.call(job.call, attempt=job.attempt, max_wait_s=0)
    except iapverify.http.DeadlineError as err:
        queue.later(err.call, attempt=err.attempt + 1, after_ms=err.result.retry_after_ms)
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
           "RejectError", "DeadlineError", "ResponseTooLargeError", "OCSPError", "fetch_ocsp", "afetch_ocsp"]

# No answer from Apple (no connection, a timeout, a connection dropped mid-answer, the deadline
# reached while reading, an answer over max_response_bytes) is given to the library as this status
# without a body: it says retry_later, then give_up.
UNREACHABLE_STATUS = 503
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
_UNREACHABLE = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_DEFAULT: Any = object()


class APICallError(Exception):
    """A call that ended without ``accept``. ``result`` is the last ``APIResult`` (None if there was
    none), ``call`` the call as last sent."""

    def __init__(self, message: str, result: Optional[APIResult], call: dict[str, Any], attempt: int = 1):
        super().__init__(message)
        self.result = result
        self.call = call
        #: The attempt the last result answered; a queued retry of ``call`` runs with ``attempt + 1``.
        self.attempt = attempt

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


class ResponseTooLargeError(Exception):
    """An answer over the client's ``max_response_bytes``: dropped unread, as no answer (the
    ``__cause__`` of the error that ends the call, if it ends)."""


class OCSPError(Exception):
    """The OCSP responder gave no usable answer (no connection, a timeout, a status other than 200)."""


@dataclass(frozen=True)
class CallResult:
    """An accepted call: every page's verified items, in order, and the last page's result.

    ``pages`` has each page's ``APIResult``; ``result`` is the last one. ``environment`` is the host
    that answered (``ServerEnvironment.PRODUCTION`` or ``SANDBOX``), ``requests`` how many HTTP
    requests were sent (retries included), ``deprecations`` the old spellings the call or its
    options used (as ``APIRequest.deprecations`` and ``APIResult.deprecations`` say), ``bodies``
    each page's answer as Apple sent it, in the order of ``pages`` (for a host that stores them,
    e.g. a notification history's signedPayloads). A page's
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
    bodies: list[bytes] = field(default_factory=list)

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

    def __init__(self, client: "_Base", call: Mapping[str, Any], options: Any, deadline_s: Optional[float],
                 attempt: int = 1, max_wait_s: Optional[float] = None):
        if not isinstance(call, Mapping):
            raise TypeError(f"call must be a mapping, not {type(call).__name__}")
        if isinstance(attempt, bool) or not isinstance(attempt, int):
            raise TypeError(f"attempt must be an int, not {type(attempt).__name__}")
        if attempt < 1:
            raise ValueError(f"attempt must be >= 1 (1 for the first try), got {attempt}")
        if max_wait_s is not None and (isinstance(max_wait_s, bool) or not isinstance(max_wait_s, (int, float))
                                       or not max_wait_s >= 0):
            raise ValueError(f"max_wait_s must be None or seconds >= 0, got {max_wait_s!r}")
        self.client = client
        self.call: dict[str, Any] = dict(call)
        self.call.setdefault("environment", ServerEnvironment.PRODUCTION.value)
        self.first = dict(self.call)
        self.options = options
        self.attempt = attempt           # a queued job's number, so that the library's backoff goes on
        self.max_wait_s = max_wait_s
        self.sent = 0
        self.switched = False
        self.pages: list[APIResult] = []
        self.bodies: list[bytes] = []
        self.last: Optional[APIResult] = None
        self.problem: Optional[BaseException] = None   # the transport error behind the last 503, if any
        self.deprecations: list[str] = []              # what the requests and results said, once each
        self.deadline = None if deadline_s is None else client._clock() + deadline_s

    def _note(self, deprecations: list[str]) -> None:
        self.deprecations += [d for d in deprecations if d not in self.deprecations]

    def _left(self) -> Optional[float]:
        return None if self.deadline is None else self.deadline - self.client._clock()

    def _error(self, cls: type[APICallError], message: str) -> APICallError:
        err = cls(message, self.last, dict(self.call), self.attempt)
        err.__cause__ = self.problem
        return err

    def request(self) -> "tuple[APIRequest, _Timeouts]":
        """A fresh request (a fresh token) and the timeouts to send it with."""
        left = self._left()
        if left is not None and left <= 0:
            raise self._error(DeadlineError, f"the deadline passed after {self.sent} request(s)")
        request = self.client.signer.api_request(self.call, now_ms=self.client._now_ms())
        self._note(request.deprecations)
        self.sent += 1
        return request, _Timeouts(self.client.timeout_s, self._left)

    def too_late(self, response: httpx.Response) -> Optional[BaseException]:
        """A timeout, once the deadline has passed while the answer is read."""
        left = self._left()
        if left is None or left > 0:
            return None
        return httpx.ReadTimeout("the call's deadline passed while Apple's answer was being read",
                                 request=response.request)

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
            self.bodies.append(body)
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
            if self.max_wait_s is not None and wait > self.max_wait_s:
                raise self._error(DeadlineError, f"{where}: Apple asks to wait {wait:g} s, more than max_wait_s={self.max_wait_s:g}: "
                                                 f"run it again later with attempt {self.attempt + 1} ({r.verdict}: {r.reason})")
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
            self.attempt, self.pages, self.bodies = 1, [], []
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
                          deprecations=list(self.deprecations), bodies=list(self.bodies))


class _Timeouts(dict):  # type: ignore[type-arg]
    """httpx's per-request timeouts, each capped by the time left to the call's deadline when it is
    read. httpcore reads them before every connect, send and receive, so a server that drips its
    answer (headers included) cannot keep a call past its deadline; a plain timeout is per read."""

    def __init__(self, timeout_s: float, left: Callable[[], Optional[float]]):
        super().__init__(connect=timeout_s, read=timeout_s, write=timeout_s, pool=timeout_s)
        self._time_left = left

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        left = self._time_left()
        if left is None or value is None:
            return value
        return max(min(value, left), 0.001)      # 0 would make the socket non-blocking, not time out

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


def _length_problem(response: httpx.Response, limit: int) -> Optional[BaseException]:
    """An answer whose Content-Length says it is too large is not read at all."""
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        return ResponseTooLargeError(f"Apple's answer is {length} bytes, over max_response_bytes={limit}")
    return None


class _Body:
    """The answer's bytes as they come, refused past ``max_response_bytes`` or the deadline."""

    def __init__(self, run: _Follow, response: httpx.Response, limit: int):
        self.run, self.response, self.limit = run, response, limit
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> Optional[BaseException]:
        self.chunks.append(chunk)
        self.size += len(chunk)
        if self.size > self.limit:
            return ResponseTooLargeError(f"Apple's answer passed max_response_bytes={self.limit} while being read")
        return self.run.too_late(self.response)

    def answer(self) -> "tuple[int, Optional[str], bytes, Optional[BaseException]]":
        return self.response.status_code, self.response.headers.get("Retry-After"), b"".join(self.chunks), None


def _no_answer(problem: BaseException) -> "tuple[int, Optional[str], bytes, Optional[BaseException]]":
    return UNREACHABLE_STATUS, None, b"", problem


class _Base:
    def __init__(self, signer: Signer, verifier: Verifier, *, timeout_s: float, deadline_s: Optional[float],
                 clock: Callable[[], float], now_ms: Optional[Callable[[], int]], max_response_bytes: int):
        if not isinstance(signer, Signer):
            raise TypeError(f"signer must be an iapverify.Signer, not {type(signer).__name__}")
        if not isinstance(verifier, Verifier):
            raise TypeError(f"verifier must be an iapverify.Verifier, not {type(verifier).__name__}")
        self.signer, self.verifier = signer, verifier
        if isinstance(max_response_bytes, bool) or not isinstance(max_response_bytes, int) or max_response_bytes < 0:
            raise ValueError(f"max_response_bytes must be an int >= 0, got {max_response_bytes!r}")
        self.timeout_s, self.deadline_s = timeout_s, deadline_s
        self.max_response_bytes = max_response_bytes
        self._clock = clock
        self._now_ms = now_ms or _host_now_ms

    def _start(self, call: Mapping[str, Any], options: Any, deadline_s: Any, attempt: int,
               max_wait_s: Optional[float]) -> _Follow:
        return _Follow(self, call, options, self.deadline_s if deadline_s is _DEFAULT else deadline_s, attempt, max_wait_s)


class Client(_Base):
    """Sends calls with an ``httpx.Client`` and follows the actions until accept or an error.

    ``http``: your ``httpx.Client`` (kept open), else one made here and closed by ``close()``.
    ``timeout_s``: per connect, send and read; ``deadline_s``: per call, waits and reading included
    (None: none). An answer over ``max_response_bytes``, or one still coming in at the deadline, is
    dropped and counts as no answer (HTTP 503 to the library, the reason as the error's
    ``__cause__``). ``sleep``, ``clock`` (monotonic seconds) and ``now_ms`` (Unix milliseconds) are
    injectable for tests. Shared by threads if your ``httpx.Client`` is.
    """

    def __init__(self, signer: Signer, verifier: Verifier, *, http: Optional[httpx.Client] = None,
                 timeout_s: float = 30.0, deadline_s: Optional[float] = 60.0,
                 sleep: Callable[[float], Any] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 now_ms: Optional[Callable[[], int]] = None, max_response_bytes: int = MAX_RESPONSE_BYTES):
        super().__init__(signer, verifier, timeout_s=timeout_s, deadline_s=deadline_s, clock=clock, now_ms=now_ms,
                         max_response_bytes=max_response_bytes)
        self._own = http is None
        self.http = httpx.Client(timeout=timeout_s) if http is None else http
        self._sleep = sleep

    def call(self, call: Mapping[str, Any], *, options: Any = None, deadline_s: Optional[float] = _DEFAULT,
             attempt: int = 1, max_wait_s: Optional[float] = None) -> CallResult:
        """Runs one call (as for ``Signer.api_request``) to the end: every page, retries, sandbox.
        ``options`` go to each ``interpret_api_response`` (delivered_transaction_ids, orders, ...).

        ``attempt``: which try of this call the first request is (a queued job's count, so that the
        library's backoff goes on where it was). ``max_wait_s``: the longest ``retry_later`` wait
        slept here; a longer one ends the call with ``DeadlineError`` at once (``0``: never sleep)."""
        run = self._start(call, options, deadline_s, attempt, max_wait_s)
        while True:
            request, timeouts = run.request()
            status, retry_after, body, problem = self._send(run, request, timeouts)
            step = run.answer(request, status, retry_after, body, problem)
            if isinstance(step, CallResult):
                return step
            if step:
                self._sleep(step)

    def _send(self, run: _Follow, request: APIRequest,
              timeouts: _Timeouts) -> "tuple[int, Optional[str], bytes, Optional[BaseException]]":
        try:
            with self.http.stream(request.method, request.url, headers=request.headers, content=request.body,
                                  extensions={"timeout": timeouts}, follow_redirects=False) as response:
                problem = _length_problem(response, self.max_response_bytes)
                if problem is not None:
                    return _no_answer(problem)
                body = _Body(run, response, self.max_response_bytes)
                for chunk in response.iter_bytes():
                    problem = body.add(chunk)
                    if problem is not None:
                        return _no_answer(problem)
                return body.answer()
        except _UNREACHABLE as e:
            return _no_answer(e)

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
                 clock: Callable[[], float] = time.monotonic, now_ms: Optional[Callable[[], int]] = None,
                 max_response_bytes: int = MAX_RESPONSE_BYTES):
        super().__init__(signer, verifier, timeout_s=timeout_s, deadline_s=deadline_s, clock=clock, now_ms=now_ms,
                         max_response_bytes=max_response_bytes)
        self._own = http is None
        self.http = httpx.AsyncClient(timeout=timeout_s) if http is None else http
        self._sleep = sleep

    async def call(self, call: Mapping[str, Any], *, options: Any = None,
                   deadline_s: Optional[float] = _DEFAULT, attempt: int = 1,
                   max_wait_s: Optional[float] = None) -> CallResult:
        """As ``Client.call``."""
        run = self._start(call, options, deadline_s, attempt, max_wait_s)
        while True:
            request, timeouts = run.request()
            status, retry_after, body, problem = await self._send(run, request, timeouts)
            step = run.answer(request, status, retry_after, body, problem)
            if isinstance(step, CallResult):
                return step
            if step:
                await self._sleep(step)

    async def _send(self, run: _Follow, request: APIRequest,
                    timeouts: _Timeouts) -> "tuple[int, Optional[str], bytes, Optional[BaseException]]":
        try:
            async with self.http.stream(request.method, request.url, headers=request.headers, content=request.body,
                                        extensions={"timeout": timeouts}, follow_redirects=False) as response:
                problem = _length_problem(response, self.max_response_bytes)
                if problem is not None:
                    return _no_answer(problem)
                body = _Body(run, response, self.max_response_bytes)
                async for chunk in response.aiter_bytes():
                    problem = body.add(chunk)
                    if problem is not None:
                        return _no_answer(problem)
                return body.answer()
        except _UNREACHABLE as e:
            return _no_answer(e)

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
