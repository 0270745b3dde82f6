"""Builds the iapverify wheel: the ctypes package plus libiapverify.so.1, tagged for this platform.

The version comes from the top-level VERSION file. The library is bundled from, in order:
IAPVERIFY_BUNDLE_LIBRARY (a path to libiapverify.so.1), src/iapverify/_native/libiapverify.so.1
(what `make wheel` stages), or the checkout's build/lib/libiapverify.so.1 (after `make`). With none
of them the build stops with a message instead of producing a wheel that fails at Verifier().
IAPVERIFY_SYSTEM_LIBRARY=1 builds a wheel without the library, for systems that have it installed
(`make install`, or the libiapverify1 Debian package).
"""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent.parent
SONAME = "libiapverify.so.1"
SYSTEM_LIBRARY = os.environ.get("IAPVERIFY_SYSTEM_LIBRARY") == "1"


def read_version() -> str:
    for candidate in (HERE / "VERSION", CHECKOUT / "VERSION"):
        if candidate.is_file():
            return candidate.read_text().strip()
    raise SystemExit("iapverify: VERSION not found: build from a checkout of the repository (bindings/python)")


def find_library() -> Path:
    override = os.environ.get("IAPVERIFY_BUNDLE_LIBRARY")
    if override:
        if not Path(override).is_file():
            raise SystemExit(f"iapverify: IAPVERIFY_BUNDLE_LIBRARY={override} is not a file")
        return Path(override)
    for candidate in (HERE / "src" / "iapverify" / "_native" / SONAME, CHECKOUT / "build" / "lib" / SONAME):
        if candidate.is_file():
            return candidate
    raise SystemExit(
        "\niapverify: libiapverify.so.1 is not built, and this package is useless without it.\n"
        "  At the top of the checkout run `make wheel`, then `pip install build/wheel/iapverify-*.whl`\n"
        "  (or run `make` first, then pip install ./bindings/python again).\n"
        "  To use a library installed on the system instead, set IAPVERIFY_SYSTEM_LIBRARY=1.\n")


class BundleLibrary(build_py):
    """Copies the library into the package as iapverify/_native/libiapverify.so.1."""

    def run(self):
        super().run()
        if SYSTEM_LIBRARY:
            return
        source = find_library()
        target = Path(self.build_lib) / "iapverify" / "_native" / SONAME
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.resolve(), target)
        os.chmod(target, 0o755)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return not SYSTEM_LIBRARY


class PlatformWheel(bdist_wheel):
    """py3-none-<platform>: the wheel carries a native library but no CPython extension."""

    def get_tag(self):
        tag = super().get_tag()
        return tag if SYSTEM_LIBRARY else ("py3", "none", tag[2])


setup(
    version=read_version(),
    distclass=BinaryDistribution,
    cmdclass={"build_py": BundleLibrary, "bdist_wheel": PlatformWheel},
)
