"""What a machine without the native dependencies hears at import: every missing library at
once with the package that provides it, and an OpenSSL older than the floor refused by name."""
import pytest

from iapverify import _native


def test_every_missing_library_is_named_with_its_packages(monkeypatch):
    monkeypatch.setattr(_native, "SYSTEM_LIBRARIES", _native.SYSTEM_LIBRARIES + [
        ("libnothere-a.so.9", "a library", "liba9", "a-libs"), ("libnothere-b.so.9", "b library", "libb9", "b-libs")])
    with pytest.raises(ImportError) as e:
        _native.check_system()
    text = str(e.value)
    assert "libnothere-a.so.9" in text and "liba9" in text and "a-libs" in text
    assert "libnothere-b.so.9" in text and "libb9" in text           # all of them, in one report
    assert "libcrypto" not in text                                    # present: not listed


def test_an_old_openssl_is_refused_with_what_to_upgrade(monkeypatch):
    monkeypatch.setattr(_native, "OPENSSL_FLOOR", (99, 0, 0))
    with pytest.raises(ImportError, match="needs OpenSSL 99.0.0 or later.*upgrade libssl3"):
        _native.check_system()


def test_this_machine_passes():
    _native.check_system()
