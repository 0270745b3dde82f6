"""iapverify: App Store receipts, /verifyReceipt responses, StoreKit 2 tokens, App Store Server API
calls and entitlements, through libiapverify.

A ``Verifier`` is built once from a config and may be shared by threads (the C calls release
the GIL); closing it waits for the calls in progress. A rejected receipt is a ``Result`` with
``valid == False``; an ``IAPVerifyError`` means the call could not answer (bad config, bad options,
input too large, a closed verifier). An argument of the wrong type is a ``TypeError``.

A ``Signer`` holds the developer key for the App Store Server API and builds each request (method,
URL, headers with a fresh bearer token, body); the host sends it with any HTTP client and hands the
answer to ``Verifier.interpret_api_response``. The library itself does no I/O; ``iapverify.http``
(needs httpx: ``pip install iapverify[http]``) sends the requests and follows the actions.

Verdicts, actions, states, environments and notification types are ``str`` enums (``Verdict``,
``Action``, ...): a member equals its plain string, and a value this package does not know stays a
plain string.

Transactions, renewal infos, notifications, app transactions and subscription statuses are frozen
dataclasses (``Transaction``, ``RenewalInfo``, ...) with typed snake_case fields, Apple's camelCase
names as aliases, and the read-only mapping protocol over the library's JSON (``to_dict()``).

The package is typed (``py.typed``): the JSON objects results hand over as they are (an
entitlement's ``evidence``, a result's ``receipt``, an API result's ``unsigned`` ...) are described
by ``TypedDict`` classes (``Evidence``, ``Receipt``, ``UnsignedFields`` ...).
"""
from __future__ import annotations

import base64 as _base64
import ctypes
import json as _json
import operator
import threading
import time
import warnings
from typing import (TYPE_CHECKING, Any, Callable, Literal, Mapping, Optional, Sequence, SupportsIndex, Union, cast,
                    overload)

from . import _native
from .enums import (Action, EntitlementState, Environment, NotificationAction, NotificationSubtype, NotificationType, RealtimeAction,
                    ServerEnvironment, Verdict, server_environment as _server_environment,
                    API_ENVIRONMENT_DEPRECATED as _API_ENVIRONMENT_DEPRECATED)
from .errors import (ConfigError, IAPVerifyError, InternalError, InvalidArgumentError, OutOfMemoryError,
                     TooLargeError, from_status)
from .records import AppTransaction, Notification, RenewalInfo, SubscriptionStatus, Transaction, plain as _plain
from .results import (APIRequest, APIResult, APIToken, BillingEvidence, CatalogConflict, Certificate, Delivery,
                      DeliveryItem, Entitlement, EntitlementItem, Evidence, JWSResult, OfferSignature, OrderMatch, Purchase,
                      RealtimeRequest, Receipt, ReceiptSigning, ResponseResult, Result, Revocation, RevocationInfo,
                      TransactionReceipt, UnknownAttribute, UnsignedFields, parse, parse_request, parse_signature,
                      parse_token)

__all__ = ["Verifier", "Result", "ResponseResult", "JWSResult", "Revocation", "Entitlement", "Purchase", "Delivery", "DeliveryItem", "OrderMatch",
           "Transaction", "RenewalInfo", "Notification", "AppTransaction", "SubscriptionStatus",
           "Signer", "APIToken", "APIRequest", "APIResult", "OfferSignature",
           "IAPVerifyError", "ConfigError", "InvalidArgumentError", "TooLargeError", "OutOfMemoryError", "InternalError",
           "Verdict", "Action", "NotificationAction", "RealtimeAction", "EntitlementState", "Environment", "ServerEnvironment",
           "NotificationType", "NotificationSubtype",
           "TransactionReceipt", "read_transaction_receipt", "library_version", "now_ms",
           "Evidence", "BillingEvidence", "Receipt", "ReceiptSigning", "Certificate", "RevocationInfo",
           "UnknownAttribute", "UnsignedFields", "RealtimeRequest", "CatalogConflict", "EntitlementItem"]


if TYPE_CHECKING:
    # Type checkers see the deprecated name itself and no catch-all __getattr__, so that a
    # misspelt name (iapverify.Verifer) is an error rather than an ``object``.
    APIEnvironment = ServerEnvironment
else:
    def __getattr__(name: str) -> object:
        # APIEnvironment: the old name of ServerEnvironment, kept until the next release.
        if name == "APIEnvironment":
            warnings.warn(_API_ENVIRONMENT_DEPRECATED, DeprecationWarning, stacklevel=2)
            return ServerEnvironment
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Every missing system library at once, with its package, and an old OpenSSL refused: at import,
# not at the first call.
_native.check_system()

_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def _library() -> ctypes.CDLL:
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = _native.load()
        return _lib


def library_version() -> str:
    version: bytes = _library().iapv_version_string()
    return version.decode()


def read_transaction_receipt(receipt: Binary) -> TransactionReceipt:
    """Reads the transaction id out of an iOS 6 style transaction receipt (the base64 property
    list ``SKPaymentTransaction.transactionReceipt`` gave) WITHOUT verifying it: nothing in it can
    be checked here. ``verdict`` is "unverified" when the id was read (``transaction_id``), else
    "malformed" (``reason`` says why). Look the id up with the App Store Server API
    (``transaction_info``) before granting anything."""
    data = _binary(receipt, "receipt")
    lib = _library()
    result = ctypes.c_void_p()
    err = _native.IAPVError()
    status = lib.iapv_read_transaction_receipt(data, len(data), ctypes.byref(result), ctypes.byref(err))
    if status != 0:
        _raise(err, status)
    try:
        size = ctypes.c_size_t()
        text = ctypes.string_at(lib.iapv_result_json(result, ctypes.byref(size)), size.value).decode()
    finally:
        lib.iapv_result_free(result)
    d = _json.loads(text)
    return TransactionReceipt(verdict=d["verdict"], reason=d["reason"], transaction_id=d.get("transaction_id"),
                              environment=d.get("environment"), purchase_info=dict(d.get("purchase_info") or {}), raw=d)


def now_ms() -> int:
    """This host's clock in Unix milliseconds (the library itself never reads a clock)."""
    return time.time_ns() // 1_000_000


JSONish = Union[str, bytes, bytearray, memoryview, Mapping[str, Any]]
Binary = Union[bytes, bytearray, memoryview, str]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_BYTES_LIKE = (bytes, bytearray, memoryview)


def _type_name(value: object) -> str:
    return type(value).__name__


def _binary(value: object, what: str) -> bytes:
    """Bytes for an input the library reads as bytes: DER, base64 or JWS text. ``str`` is taken as
    text (UTF-8); anything else that is not bytes-like is a TypeError rather than something that
    ``bytes()`` happens to accept (``bytes(12345)`` is 12,345 zero bytes)."""
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, _BYTES_LIKE):
        return bytes(value)
    raise TypeError(f"{what} must be bytes, bytearray, memoryview or str, not {_type_name(value)}")


@overload
def _json_bytes(value: object, what: str, optional: Literal[False] = False) -> bytes: ...
@overload
def _json_bytes(value: object, what: str, optional: bool) -> Optional[bytes]: ...


def _json_bytes(value: object, what: str, optional: bool = False) -> Optional[bytes]:
    """JSON text for the library: given as str or bytes-like, or encoded from a mapping. Records
    (``Transaction``, ``RenewalInfo``...) anywhere inside are written as their ``to_dict()``."""
    if value is None and optional:
        return None
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, _BYTES_LIKE):
        return bytes(value)
    if isinstance(value, Mapping):
        return _json.dumps(dict(value), allow_nan=False, default=_plain).encode()
    raise TypeError(f"{what} must be a mapping or JSON text (str or bytes), not {_type_name(value)}")


def _ocsp_items(items: object) -> list[str]:
    """``ocsp_responses`` for the JSON options: DER bytes are base64-encoded, text is kept as it is."""
    if isinstance(items, (str, bytes, bytearray, memoryview)) or not isinstance(items, Sequence):
        raise TypeError(f"ocsp_responses must be a list of DER bytes or base64 str, not {_type_name(items)}")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, _BYTES_LIKE):
            out.append(_base64.b64encode(bytes(item)).decode())
        elif isinstance(item, str):
            out.append(item)
        else:
            raise TypeError(f"ocsp_responses[{i}] must be DER bytes or base64 str, not {_type_name(item)}")
    return out


def _options_bytes(value: object) -> Optional[bytes]:
    """Options JSON like ``_json_bytes``; a mapping's ``ocsp_responses`` may hold DER bytes."""
    if isinstance(value, Mapping) and "ocsp_responses" in value:
        value = dict(value)
        value["ocsp_responses"] = _ocsp_items(value["ocsp_responses"])
    return _json_bytes(value, "options", True)


def _int64(value: object, what: str) -> int:
    """An int that fits the C int64_t, or an error that says why (ctypes would silently wrap)."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{what} must be an int, not {_type_name(value)}")
    number = operator.index(cast(SupportsIndex, value))
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise InvalidArgumentError(f"{what} must fit in a signed 64-bit integer, got {number}")
    return number


def _when(value: object) -> int:
    """A ``now_ms`` argument: this host's clock when None, else an int64 of Unix milliseconds.
    Ten digits are refused: they are Unix seconds (2001 to 2286), which as milliseconds would be
    early 1970 (the CLI's ``--now`` has the same rule)."""
    if value is None:
        return now_ms()
    number = _int64(value, "now_ms")
    if 1_000_000_000 <= number <= 9_999_999_999:
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(number))
        raise InvalidArgumentError(f"now_ms={number} looks like Unix seconds ({when}): pass Unix milliseconds, "
                                   f"now_ms={number * 1000} (seconds * 1000)")
    return number


def _raise(err: _native.IAPVError, status: int) -> None:
    lib = _library()
    raise from_status(status, lib.iapv_status_name(status).decode(), err.message.decode("utf-8", "replace"))


class _Handle:
    """A C handle shared by threads: ``close()`` waits for the calls in progress, later calls raise."""

    _what = "handle"
    _free_fn = ""

    def _open(self, new_fn: str, config: JSONish) -> None:
        # Set first, so that close() and __del__ work even if building the handle fails.
        self._handle: Optional[ctypes.c_void_p] = None
        self._closed = False
        self._calls = 0                        # calls running now, each using self._handle
        self._cond = threading.Condition()     # guards the three fields above
        lib = _library()
        raw = _json_bytes(config, "config")
        handle = ctypes.c_void_p()
        err = _native.IAPVError()
        status = getattr(lib, new_fn)(raw, len(raw), ctypes.byref(handle), ctypes.byref(err))
        if status != 0:
            _raise(err, status)
        self._handle = handle

    def close(self) -> None:
        """Frees the handle once the calls running on other threads have returned. Idempotent."""
        cond = getattr(self, "_cond", None)
        if cond is None:                       # __init__ did not get far enough to own anything
            return
        with cond:
            self._closed = True                # from now on, new calls raise
            cond.wait_for(lambda: self._calls == 0)
            handle, self._handle = self._handle, None
            if handle is not None:
                getattr(_library(), self._free_fn)(handle)

    @property
    def closed(self) -> bool:
        return getattr(self, "_closed", True)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __reduce__(self) -> Any:
        # A copy would share the C handle, and closing either would free it under the other.
        raise TypeError(f"a {type(self).__name__} cannot be copied or pickled: build another one from the same config")

    def _run(self, invoke: Callable[[ctypes.c_void_p, Any, Any], int],
             with_verdict: bool = False) -> "tuple[str, bool, Optional[str]]":
        """Calls ``invoke(handle, byref(result), byref(err))`` while the handle is held open, and
        returns the result's JSON text, validity and (when asked) verdict; the result is freed here."""
        lib = _library()
        with self._cond:
            if self._closed or self._handle is None:
                raise InvalidArgumentError(f"the {self._what} is closed")
            handle = self._handle
            self._calls += 1
        try:
            result = ctypes.c_void_p()
            err = _native.IAPVError()
            status = invoke(handle, ctypes.byref(result), ctypes.byref(err))
        finally:
            with self._cond:
                self._calls -= 1
                if self._calls == 0 and self._closed:   # only close() waits
                    self._cond.notify_all()
        if status != 0:
            _raise(err, status)
        try:
            size = ctypes.c_size_t()
            ptr = lib.iapv_result_json(result, ctypes.byref(size))
            text = ctypes.string_at(ptr, size.value).decode()
            if with_verdict:
                verdict: Optional[str] = ctypes.string_at(lib.iapv_result_verdict(result)).decode()
                valid = verdict == "valid"     # what iapv_result_is_valid answers, without another call
            else:
                verdict, valid = None, lib.iapv_result_is_valid(result) == 1
        finally:
            lib.iapv_result_free(result)
        return text, valid, verdict


class Verifier(_Handle):
    """An immutable verifier, shared freely by threads. Use it as a context manager, or call ``close()``.

    ``close()`` (and leaving a ``with`` block) waits for calls already running on other threads to
    finish; a call that starts after ``close()`` has begun raises ``InvalidArgumentError``.
    """

    _what = "verifier"
    _free_fn = "iapv_verifier_free"

    def __init__(self, config: JSONish):
        self._open("iapv_verifier_new", config)

    def __enter__(self) -> "Verifier":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, fn_name: str, data: bytes, options: Optional[bytes], now: object, response: bool,
              jws: bool = False, api: bool = False) -> Result:
        when = _when(now)
        fn = getattr(_library(), fn_name)
        text, valid, verdict = self._run(lambda handle, result, err: fn(handle, data, len(data), options, len(options or b""),
                                                                         when, result, err), with_verdict=True)
        return parse(text, valid, response, jws, api, verdict)

    def verify_receipt(self, receipt: Binary, *, now_ms: Optional[int] = None,
                       options: Optional[JSONish] = None) -> Result:
        """Verifies a receipt: DER bytes, or base64 (str or bytes). ``now_ms`` defaults to this host's clock."""
        data = _binary(receipt, "receipt")
        return self._call("iapv_verify_receipt", data, _options_bytes(options), now_ms, False)

    def interpret_response(self, body: Optional[JSONish], *, environment: Union[ServerEnvironment, str, None] = None,
                           attempt: int = 1, now_ms: Optional[int] = None,
                           options: Optional[JSONish] = None, endpoint: Optional[str] = None,
                           http_status: Optional[int] = None) -> ResponseResult:
        """Interprets a /verifyReceipt body. ``environment`` is the host that answered,
        ``ServerEnvironment.PRODUCTION`` (the default) or ``SANDBOX`` ("Production", "Sandbox");
        ``attempt`` which try the body answered (1 for the first). An ``environment``,
        ``attempt`` or ``http_status`` in ``options`` wins over the keyword.

        ``http_status`` is the HTTP status when it was not 200 (100-599), or 0 when Apple did not
        answer at all (refused, reset, timed out): the body (``b""`` or None will do) is then not
        read, and the result is ``retry_later`` with the library's backoff for ``attempt``, or
        ``give_up`` after the last attempt. None or 200: the body is read.

        ``endpoint`` is the deprecated old name of ``environment`` (any case): it warns with a
        ``DeprecationWarning`` and goes in the next release."""
        if endpoint is not None:
            if not isinstance(endpoint, str):
                raise TypeError(f"endpoint must be a str, not {_type_name(endpoint)}")
            if environment is not None:
                raise TypeError("interpret_response() got both environment= and its deprecated old name endpoint=")
            warnings.warn("interpret_response(endpoint=...) is deprecated: use environment=ServerEnvironment.PRODUCTION "
                          "or ServerEnvironment.SANDBOX (\"Production\", \"Sandbox\"); endpoint= goes in the next release",
                          DeprecationWarning, stacklevel=2)
            environment = _server_environment(endpoint)
        if environment is None:
            environment = ServerEnvironment.PRODUCTION
        if not isinstance(environment, str):
            raise TypeError(f"environment must be a str, not {_type_name(environment)}")
        attempt = _int64(attempt, "attempt")
        status = None if http_status is None else _int64(http_status, "http_status")
        options_json: Optional[bytes]
        if options is None:     # the common call: nothing to merge
            environment = str(environment)
            if environment == "Production" and attempt == 1 and status is None:
                options_json = None             # the library's defaults: no options to read
            else:
                text = '{"environment":%s,"attempt":%d%s}' % (_json.dumps(environment), attempt,
                                                              "" if status is None else ',"http_status":%d' % status)
                options_json = text.encode()
        else:
            opts = self._options_dict(options)
            if "environment" not in opts and "endpoint" not in opts:   # "endpoint": the options' deprecated old name
                opts["environment"] = str(environment)
            opts.setdefault("attempt", attempt)
            if status is not None:
                opts.setdefault("http_status", status)
            options_json = _json_bytes(opts, "options")
        data = b"" if body is None and http_status not in (None, 200) else _json_bytes(body, "body")
        result = self._call("iapv_interpret_response", data, options_json, now_ms, True)
        assert isinstance(result, ResponseResult)
        return result

    def verify_jws(self, token: Binary, *, now_ms: Optional[int] = None,
                   options: Optional[JSONish] = None) -> JWSResult:
        """Verifies a StoreKit 2 signed transaction, renewal info or server notification (compact JWS)."""
        data = _binary(token, "token")   # whitespace around it: the core's one rule (docs/storekit2.md)
        result = self._call("iapv_verify_jws", data, _options_bytes(options), now_ms, False, True)
        assert isinstance(result, JWSResult)
        return result

    def compute_entitlements(self, transactions: JSONish, *, now_ms: Optional[int] = None,
                             options: Optional[JSONish] = None) -> Result:
        """Entitlements from ``{"transactions": [...], "renewal_info": [...]}``."""
        data = _json_bytes(transactions, "transactions")
        return self._call("iapv_compute_entitlements", data, _options_bytes(options), now_ms, False)

    def interpret_api_response(self, body: Union[JSONish, None], *, endpoint: str, http_status: int,
                               environment: Union[ServerEnvironment, str] = ServerEnvironment.PRODUCTION,
                               retry_after: Optional[str] = None, attempt: int = 1,
                               options: Optional[JSONish] = None, now_ms: Optional[int] = None) -> APIResult:
        """Interprets what the App Store Server API answered to a call built by ``Signer.api_request``.

        ``body`` is the answer's bytes (``b""`` or None for an empty answer), ``endpoint`` and
        ``environment`` the call's (``APIRequest.endpoint`` and ``APIRequest.environment``;
        ``ServerEnvironment.PRODUCTION`` or ``SANDBOX``), ``http_status`` the HTTP status, ``retry_after`` the Retry-After
        header text if any, ``attempt`` how many times this call has been tried (1 for the first).
        ``options`` may add delivered_transaction_ids, orders and renewal_info; the keyword
        arguments above take precedence over the same keys in it.
        """
        if not isinstance(endpoint, str):
            raise TypeError(f"endpoint must be a str, not {_type_name(endpoint)}")
        if not isinstance(environment, str):
            raise TypeError(f"environment must be a str, not {_type_name(environment)}")
        if retry_after is not None and not isinstance(retry_after, str):
            raise TypeError(f"retry_after must be the header text (str) or None, not {_type_name(retry_after)}")
        opts = self._options_dict(options)
        opts["endpoint"] = endpoint
        opts["environment"] = str(environment)
        opts["http_status"] = _int64(http_status, "http_status")
        opts["attempt"] = _int64(attempt, "attempt")
        if retry_after is not None:
            opts["retry_after"] = retry_after
        else:
            opts.pop("retry_after", None)
        data = b"" if body is None else _json_bytes(body, "body")
        result = self._call("iapv_interpret_api_response", data, _json_bytes(opts, "options"), now_ms, False, api=True)
        assert isinstance(result, APIResult)
        return result

    @staticmethod
    def _options_dict(options: Optional[JSONish]) -> dict[str, Any]:
        try:
            opts = _json.loads(_options_bytes(options) or b"{}")
        except ValueError as e:
            raise InvalidArgumentError(f"options are not valid JSON: {e}") from None
        if not isinstance(opts, dict):
            raise TypeError(f"options must be a JSON object, not {_type_name(opts)}")
        return opts


class Signer(_Handle):
    """The developer's signing identity for the App Store Server API: the .p8 key from App Store
    Connect, its key id, the issuer id and the bundle id. Immutable and shared freely by threads;
    closes like a ``Verifier``. The private key never appears in a repr, a result or an error.

    ``config`` is a mapping or JSON text: ``{"private_key_pem": ..., "key_id": ..., "issuer_id": ...,
    "bundle_id": ...}``. A missing, unknown or wrong key (not EC P-256) is a ``ConfigError``.
    """

    _what = "signer"
    _free_fn = "iapv_signer_free"

    def __init__(self, config: JSONish):
        self._label = "Signer(?)"
        self._open("iapv_signer_new", config)
        try:
            d = _json.loads(_json_bytes(config, "config") or b"{}")
            self._label = (f"Signer(key_id={d.get('key_id')!r}, issuer_id={d.get('issuer_id')!r}, "
                           f"bundle_id={d.get('bundle_id')!r})")
        except (ValueError, AttributeError):
            pass

    def __repr__(self) -> str:
        return self._label[:-1] + (", closed)" if self.closed else ")")

    def __enter__(self) -> "Signer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def api_token(self, now_ms: Optional[int] = None) -> APIToken:
        """A bearer token issued at ``now_ms`` (default: this host's clock), valid 5 minutes."""
        when = _when(now_ms)
        fn = _library().iapv_api_token
        text, _, _ = self._run(lambda handle, result, err: fn(handle, when, result, err))
        return parse_token(text)

    def api_request(self, call: JSONish, now_ms: Optional[int] = None) -> APIRequest:
        """The exact HTTP request for one call, e.g. ``{"endpoint": "transaction_history",
        "environment": "Production", "transaction_id": "...", "query": {"sort": "ASCENDING"}}``.
        ``upload_image`` takes the PNG file's ``bytes`` as ``body``.
        An unknown endpoint or a bad parameter is an ``InvalidArgumentError``. See ``APIRequest``
        for sending it with urllib, requests or httpx."""
        when = _when(now_ms)
        if isinstance(call, Mapping) and isinstance(call.get("body"), _BYTES_LIKE):
            # A file's bytes (upload_image's PNG) travel base64 in the call.
            call = {**call, "body_base64": _base64.b64encode(bytes(call["body"])).decode()}
            del call["body"]
        data = _json_bytes(call, "call")
        assert data is not None
        fn = _library().iapv_api_request
        text, _, _ = self._run(lambda handle, result, err: fn(handle, data, len(data), when, result, err))
        return parse_request(text)

    def sign(self, request: JSONish, now_ms: Optional[int] = None) -> OfferSignature:
        """Signs what an app asks its server for: ``{"kind": "promotional_offer_v1" |
        "promotional_offer_v2" | "introductory_offer_eligibility" | "advanced_commerce_request",
        "nonce": "<a UUID made for this request>", ...the kind's fields}``, as a mapping or JSON
        text. ``now_ms`` (default: this host's clock) is the V1 timestamp or the V2 ``iat``.
        A missing, bad or foreign field is an ``InvalidArgumentError`` that names it."""
        when = _when(now_ms)
        data = _json_bytes(request, "request")
        assert data is not None
        fn = _library().iapv_sign
        text, _, _ = self._run(lambda handle, result, err: fn(handle, data, len(data), when, result, err))
        return parse_signature(text)

