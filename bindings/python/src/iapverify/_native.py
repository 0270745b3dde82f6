"""Loading libiapverify and declaring its C functions for ctypes.

Strings the library returns are borrowed from a result handle, so they are declared as
``c_void_p`` and copied with ``ctypes.string_at`` before the handle is freed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

ABI_VERSION = 1
# IAPV_ERROR_MESSAGE_SIZE of ABI 1; load() checks it against iapv_error_message_size().
ERROR_MESSAGE_SIZE = 248


# What the library takes from the system, with the packages that provide each: the wheel carries
# jansson and simdjson itself (beside the library, in iapverify.libs); a library installed another
# way needs them too.
SYSTEM_LIBRARIES = [
    ("libcrypto.so.3", "OpenSSL 3's libcrypto", "libssl3", "openssl-libs"),
    ("libstdc++.so.6", "the C++ runtime", "libstdc++6", "libstdc++"),
    ("libgcc_s.so.1", "GCC's runtime", "libgcc-s1", "libgcc"),
]
UNBUNDLED_LIBRARIES = [
    ("libjansson.so.4", "Jansson", "libjansson4", "jansson"),
    ("libsimdjson.so.14", "simdjson", "libsimdjson14", "simdjson"),
]
# The oldest OpenSSL the library may run with (README.md: a use-after-free in PKCS7_verify was
# fixed after it): a security library must take the host's patches, so it is checked, not bundled.
OPENSSL_FLOOR = (3, 0, 20)


def check_system() -> None:
    """Run at import: every system library the native code needs that cannot be loaded, all in one
    ImportError naming the Debian and RPM package of each; then the OpenSSL version."""
    bundled = (Path(__file__).resolve().parent.parent / "iapverify.libs").is_dir()
    wanted = SYSTEM_LIBRARIES + ([] if bundled and not os.environ.get("IAPVERIFY_LIBRARY") else UNBUNDLED_LIBRARIES)
    missing = []
    for soname, what, deb, rpm in wanted:
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(f"  {soname} ({what}): install {deb} (Debian, Ubuntu) or {rpm} (RPM)")
    if missing:
        raise ImportError("iapverify cannot load its native library: these system libraries are missing:\n"
                          + "\n".join(missing))
    crypto = ctypes.CDLL("libcrypto.so.3")
    crypto.OpenSSL_version_num.restype = ctypes.c_ulong
    crypto.OpenSSL_version_num.argtypes = []
    number = int(crypto.OpenSSL_version_num())
    found = (number >> 28 & 0xF, number >> 20 & 0xFF, number >> 4 & 0xFF)
    if found < OPENSSL_FLOOR:
        raise ImportError(f"iapverify needs OpenSSL {'.'.join(map(str, OPENSSL_FLOOR))} or later; this system has "
                          f"{'.'.join(map(str, found))}: upgrade libssl3 (Debian, Ubuntu) or openssl-libs (RPM)")


class IAPVError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("reserved", ctypes.c_uint32), ("message", ctypes.c_char * ERROR_MESSAGE_SIZE)]


def find_library() -> str:
    """IAPVERIFY_LIBRARY, then the bundled copy, then the system (by SONAME)."""
    override = os.environ.get("IAPVERIFY_LIBRARY")
    if override:
        return override
    bundled = Path(__file__).resolve().parent / "_native" / "libiapverify.so.1"
    if bundled.exists():
        return str(bundled)
    found = ctypes.util.find_library("iapverify")
    if found:
        return found
    raise OSError("libiapverify.so.1 not found: set IAPVERIFY_LIBRARY to its path, "
                  "install the wheel that bundles it, or `make install` the library")


def load(path: str | None = None) -> ctypes.CDLL:
    lib = ctypes.CDLL(path or find_library())
    vp, sz, i32, i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_int64
    err = ctypes.POINTER(IAPVError)
    lib.iapv_abi_version.restype = ctypes.c_uint32
    lib.iapv_abi_version.argtypes = []
    lib.iapv_version_string.restype = ctypes.c_char_p  # static storage: safe to convert
    lib.iapv_version_string.argtypes = []
    lib.iapv_status_name.restype = ctypes.c_char_p      # static storage
    lib.iapv_status_name.argtypes = [i32]
    lib.iapv_verifier_new.restype = i32
    lib.iapv_verifier_new.argtypes = [ctypes.c_char_p, sz, ctypes.POINTER(vp), err]
    lib.iapv_verifier_free.restype = None
    lib.iapv_verifier_free.argtypes = [vp]
    for name in ("iapv_verify_receipt", "iapv_interpret_response", "iapv_compute_entitlements", "iapv_verify_jws"):
        fn = getattr(lib, name)
        fn.restype = i32
        fn.argtypes = [vp, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, ctypes.POINTER(vp), err]
    fn = lib.iapv_interpret_api_response
    fn.restype = i32
    fn.argtypes = [vp, ctypes.c_char_p, sz, ctypes.c_char_p, sz, i64, ctypes.POINTER(vp), err]
    lib.iapv_signer_new.restype = i32
    lib.iapv_signer_new.argtypes = [ctypes.c_char_p, sz, ctypes.POINTER(vp), err]
    lib.iapv_signer_free.restype = None
    lib.iapv_signer_free.argtypes = [vp]
    lib.iapv_api_token.restype = i32
    lib.iapv_api_token.argtypes = [vp, i64, ctypes.POINTER(vp), err]
    lib.iapv_api_request.restype = i32
    lib.iapv_api_request.argtypes = [vp, ctypes.c_char_p, sz, i64, ctypes.POINTER(vp), err]
    lib.iapv_read_transaction_receipt.restype = i32
    lib.iapv_read_transaction_receipt.argtypes = [ctypes.c_char_p, sz, ctypes.POINTER(vp), err]
    lib.iapv_sign.restype = i32
    lib.iapv_sign.argtypes = [vp, ctypes.c_char_p, sz, i64, ctypes.POINTER(vp), err]
    lib.iapv_result_verdict.restype = vp                # borrowed
    lib.iapv_result_verdict.argtypes = [vp]
    lib.iapv_result_is_valid.restype = ctypes.c_int
    lib.iapv_result_is_valid.argtypes = [vp]
    lib.iapv_result_json.restype = vp                   # borrowed
    lib.iapv_result_json.argtypes = [vp, ctypes.POINTER(sz)]
    lib.iapv_result_free.restype = None
    lib.iapv_result_free.argtypes = [vp]
    lib.iapv_error_message_size.restype = sz
    lib.iapv_error_message_size.argtypes = []
    abi = lib.iapv_abi_version()
    if abi != ABI_VERSION:
        raise OSError(f"libiapverify ABI {abi} does not match this package (ABI {ABI_VERSION}): install matching versions")
    size = lib.iapv_error_message_size()
    if size != ERROR_MESSAGE_SIZE:
        raise OSError(f"libiapverify's iapv_error message holds {size} bytes, this package expects {ERROR_MESSAGE_SIZE}: "
                      "install matching versions")
    return lib
