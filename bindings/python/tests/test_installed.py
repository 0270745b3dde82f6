"""`make python-test` runs these tests against the installed wheel, never the source tree."""
import os
from pathlib import Path

import pytest

import iapverify
from iapverify import _native

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(os.environ.get("IAPVERIFY_EXPECT_INSTALLED") != "1", reason="only under make python-test")
def test_the_installed_wheel_is_under_test():
    package = Path(iapverify.__file__).resolve().parent
    assert "site-packages" in package.parts, package
    assert ROOT / "bindings" not in package.parents, f"imported from the source tree: {package}"
    assert "IAPVERIFY_LIBRARY" not in os.environ
    bundled = package / "_native" / "libiapverify.so.1"
    assert bundled.is_file()
    assert _native.find_library() == str(bundled)


def test_versions_match_the_version_file():
    version = (ROOT / "VERSION").read_text().strip()
    assert iapverify.library_version() == version
    from importlib.metadata import PackageNotFoundError, version as dist_version
    try:
        assert dist_version("iapverify") == version
    except PackageNotFoundError:
        pass
