"""iapverify: App Store receipts, /verifyReceipt responses and entitlements, through libiapverify.

A ``Verifier`` is built once from a config and may be shared by threads (the C calls release
the GIL). A rejected receipt is a ``Result`` with ``valid == False``; an ``IAPVerifyError`` means
the call could not answer (bad config, bad options, input too large).
"""
from __future__ import annotations

import ctypes
import json as _json
import threading
import time
from typing import Any, Mapping, Optional, Union

from . import _native
from .errors import (ConfigError, IAPVerifyError, InternalError, InvalidArgumentError, OutOfMemoryError,
                     TooLargeError, from_status)
from .results import Delivery, DeliveryItem, Entitlement, JWSResult, OrderMatch, Purchase, ResponseResult, Result, parse

__all__ = ["Verifier", "Result", "ResponseResult", "JWSResult", "Entitlement", "Purchase", "Delivery", "DeliveryItem", "OrderMatch",
           "IAPVerifyError", "ConfigError", "InvalidArgumentError", "TooLargeError", "OutOfMemoryError", "InternalError",
           "library_version", "now_ms"]

_lib: Optional[ctypes.CDLL] = None
_lib_lock = threading.Lock()


def _library() -> ctypes.CDLL:
    global _lib
    with _lib_lock:
        if _lib is None:
            _lib = _native.load()
        return _lib


def library_version() -> str:
    return _library().iapv_version_string().decode()


def now_ms() -> int:
    """This host's clock in Unix milliseconds (the library itself never reads a clock)."""
    return time.time_ns() // 1_000_000


JSONish = Union[str, bytes, Mapping[str, Any]]


def _json_bytes(value: Optional[JSONish]) -> Optional[bytes]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return _json.dumps(value).encode()


def _raise(err: _native.IAPVError, status: int) -> None:
    lib = _library()
    raise from_status(status, lib.iapv_status_name(status).decode(), err.message.decode("utf-8", "replace"))


class Verifier:
    """An immutable verifier. Use it as a context manager, or call ``close()``."""

    def __init__(self, config: JSONish):
        lib = _library()
        raw = _json_bytes(config) or b""
        handle = ctypes.c_void_p()
        err = _native.IAPVError()
        status = lib.iapv_verifier_new(raw, len(raw), ctypes.byref(handle), ctypes.byref(err))
        if status != 0:
            _raise(err, status)
        self._handle: Optional[ctypes.c_void_p] = handle

    def close(self) -> None:
        """Frees the verifier. No other thread may be using it."""
        if self._handle is not None:
            _library().iapv_verifier_free(self._handle)
            self._handle = None

    def __enter__(self) -> "Verifier":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _call(self, fn: Any, data: bytes, options: Optional[bytes], now: Optional[int], response: bool,
              jws: bool = False) -> Result:
        if self._handle is None:
            raise InvalidArgumentError("the verifier is closed")
        lib = _library()
        result = ctypes.c_void_p()
        err = _native.IAPVError()
        when = now_ms() if now is None else int(now)
        status = fn(self._handle, data, len(data), options, len(options or b""), when, ctypes.byref(result), ctypes.byref(err))
        if status != 0:
            _raise(err, status)
        try:
            size = ctypes.c_size_t()
            ptr = lib.iapv_result_json(result, ctypes.byref(size))
            text = ctypes.string_at(ptr, size.value).decode()
            valid = lib.iapv_result_is_valid(result) == 1
        finally:
            lib.iapv_result_free(result)
        return parse(text, valid, response, jws)

    def verify_receipt(self, receipt: Union[bytes, str], *, now_ms: Optional[int] = None,
                       options: Optional[JSONish] = None) -> Result:
        """Verifies a receipt: DER bytes, or base64 (str or bytes). ``now_ms`` defaults to this host's clock."""
        data = receipt.encode() if isinstance(receipt, str) else bytes(receipt)
        return self._call(_library().iapv_verify_receipt, data, _json_bytes(options), now_ms, False)

    def interpret_response(self, body: Union[bytes, str, Mapping[str, Any]], *, endpoint: str = "production",
                           attempt: int = 1, now_ms: Optional[int] = None,
                           options: Optional[Mapping[str, Any]] = None) -> ResponseResult:
        """Interprets a /verifyReceipt body; ``endpoint`` and ``attempt`` say where it came from."""
        opts = dict(options or {})
        opts.setdefault("endpoint", endpoint)
        opts.setdefault("attempt", attempt)
        data = _json_bytes(body) or b""
        result = self._call(_library().iapv_interpret_response, data, _json_bytes(opts), now_ms, True)
        assert isinstance(result, ResponseResult)
        return result

    def verify_jws(self, token: Union[bytes, str], *, now_ms: Optional[int] = None,
                   options: Optional[JSONish] = None) -> JWSResult:
        """Verifies a StoreKit 2 signed transaction, renewal info or server notification (compact JWS)."""
        data = token.strip().encode() if isinstance(token, str) else bytes(token).strip()
        result = self._call(_library().iapv_verify_jws, data, _json_bytes(options), now_ms, False, True)
        assert isinstance(result, JWSResult)
        return result

    def compute_entitlements(self, transactions: Union[bytes, str, Mapping[str, Any]], *, now_ms: Optional[int] = None,
                             options: Optional[JSONish] = None) -> Result:
        """Entitlements from ``{"transactions": [...], "renewal_info": [...]}``."""
        data = _json_bytes(transactions) or b""
        return self._call(_library().iapv_compute_entitlements, data, _json_bytes(options), now_ms, False)
