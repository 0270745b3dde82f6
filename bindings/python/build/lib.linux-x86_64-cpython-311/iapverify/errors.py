"""Exceptions for calls that could not answer. A rejected receipt is a result, not an error."""
from __future__ import annotations


class IAPVerifyError(Exception):
    """A non-OK status from libiapverify: ``code`` (negative int) and ``name`` (e.g. IAPV_E_CONFIG)."""

    code = -5
    name = "IAPV_E_INTERNAL"

    def __init__(self, message: str, code: int | None = None, name: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if name is not None:
            self.name = name

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class InvalidArgumentError(IAPVerifyError, ValueError):
    code, name = -1, "IAPV_E_INVALID_ARGUMENT"


class ConfigError(IAPVerifyError, ValueError):
    code, name = -2, "IAPV_E_CONFIG"


class TooLargeError(IAPVerifyError, ValueError):
    code, name = -3, "IAPV_E_TOO_LARGE"


class OutOfMemoryError(IAPVerifyError, MemoryError):
    code, name = -4, "IAPV_E_NO_MEMORY"


class InternalError(IAPVerifyError):
    code, name = -5, "IAPV_E_INTERNAL"


BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, ConfigError, TooLargeError, OutOfMemoryError, InternalError)}


def from_status(code: int, name: str, message: str) -> IAPVerifyError:
    return BY_CODE.get(code, IAPVerifyError)(message, code, name)
