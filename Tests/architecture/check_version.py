#!/usr/bin/env python3
"""One version, the VERSION file: every place that states the project's version agrees with it.

    python3 Tests/architecture/check_version.py [--root DIR]

Checked (each failure names the file and what it says):
  Include/iapverify.h        IAPV_VERSION_MAJOR/MINOR/PATCH and IAPV_VERSION_STRING
  Makefile                   VERSION read from the file; the debs and the wheel built with it
  bindings/python            the wheel's version is dynamic, read from VERSION by setup.py
  packaging/                 the Debian packages take the version they are given (no number typed)
  iapverify.pc.in            Version: @VERSION@ (c-test checks the written .pc's version)
  bindings/lua               the rockspec's file name, version and tag; resty.iapverify's _VERSION
  docs, README, DocC         Swift `from: "X.Y.Z"`, Go `bindings/go@vX.Y.Z` / `bindings/go vX.Y.Z`,
                             the rockspec's name, iapv_version_string()'s example; no wheel file name
                             typed with a version (the docs derive it)
  CHANGELOG.md               the top section is "Unreleased" or VERSION's, and no section is newer
Run by `make arch-test` (so by `make test`).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    root = ap.parse_args().root.resolve()
    problems: list[str] = []

    def bad(path: str, what: str) -> None:
        problems.append(f"{path}: {what}")

    def text(path: str) -> str:
        p = root / path
        if not p.is_file():
            bad(path, "missing")
            return ""
        return p.read_text()

    version = text("VERSION").strip()
    m = SEMVER.match(version)
    if not m:
        print(f"check_version: VERSION: {version!r} is not MAJOR.MINOR.PATCH", file=sys.stderr)
        return 1
    major, minor, patch = m.groups()

    # The C header.
    header = text("Include/iapverify.h")
    for name, want in (("IAPV_VERSION_MAJOR", major), ("IAPV_VERSION_MINOR", minor), ("IAPV_VERSION_PATCH", patch),
                       ("IAPV_VERSION_STRING", f'"{version}"')):
        found = re.search(rf"^#define {name}\s+(\S+)\s*$", header, re.M)
        if not found or found.group(1) != want:
            bad("Include/iapverify.h", f"{name} is {found.group(1) if found else 'missing'}, VERSION says {want}")

    # Everything the Makefile builds takes VERSION.
    makefile = text("Makefile")
    for needle, what in ((r"^VERSION\s*:=\s*\$\(shell cat VERSION\)", "VERSION := $(shell cat VERSION)"),
                         (r"packaging/build-deb \$\(VERSION\)", "packaging/build-deb $(VERSION) (the debs)"),
                         (r"iapverify-\$\(VERSION\)-py3-none", "the wheel named iapverify-$(VERSION)-py3-none-..."),
                         (r"-e 's\|@VERSION@\|\$\(VERSION\)\|'", "iapverify.pc written with $(VERSION)")):
        if not re.search(needle, makefile, re.M):
            bad("Makefile", f"does not have {what}")
    pyproject = text("bindings/python/pyproject.toml")
    if not re.search(r'^dynamic\s*=\s*\[[^\]]*"version"', pyproject, re.M) or re.search(r"^version\s*=", pyproject, re.M):
        bad("bindings/python/pyproject.toml", "the version must be dynamic (setup.py reads VERSION), not typed")
    if "VERSION" not in text("bindings/python/setup.py"):
        bad("bindings/python/setup.py", "does not read the VERSION file")
    deb = text("packaging/build-deb")
    if not re.search(r"^VERSION=\$1$", deb, re.M):
        bad("packaging/build-deb", "must take the version as its first argument")
    for path in sorted((root / "packaging").glob("*")):
        if path.is_file() and re.search(r"\b\d+\.\d+\.\d+-1(?![~+.\w])", path.read_text(errors="replace")):
            bad(str(path.relative_to(root)), "types a package version (use @DEBVERSION@)")
    pc = text("iapverify.pc.in")
    if not re.search(r"^Version: @VERSION@$", pc, re.M):
        bad("iapverify.pc.in", "needs 'Version: @VERSION@'")

    # The rock.
    rocks = sorted(p.name for p in (root / "bindings/lua").glob("lua-resty-iapverify-*.rockspec"))
    want_rock = f"lua-resty-iapverify-{version}-1.rockspec"
    if rocks != [want_rock]:
        bad("bindings/lua", f"rockspecs {rocks}, expected exactly [{want_rock!r}]")
    else:
        rock = text(f"bindings/lua/{want_rock}")
        for needle in (f'version = "{version}-1"', f'tag = "v{version}"', f"luarocks make {want_rock}"):
            if needle not in rock:
                bad(f"bindings/lua/{want_rock}", f"does not say {needle}")
    lua = text("bindings/lua/lib/resty/iapverify.lua")
    got = re.search(r'_VERSION\s*=\s*"([^"]*)"', lua)
    if not got or got.group(1) != version:
        bad("bindings/lua/lib/resty/iapverify.lua", f"_VERSION is {got.group(1) if got else 'missing'}, VERSION is {version}")

    # What the docs tell a user to write.
    docs = [root / "README.md", root / "SECURITY.md", root / "bindings/go/README.md", root / "bindings/python/README.md"]
    docs += sorted((root / "docs").glob("*.md")) + sorted((root / "Sources").glob("*/*.docc/**/*.md"))
    patterns = [
        (re.compile(r'from:\s*"(\d+\.\d+\.\d+)"'), "a Swift dependency from:"),
        (re.compile(r"bindings/go@v(\d+\.\d+\.\d+)"), "a Go version"),
        (re.compile(r"bindings/go v(\d+\.\d+\.\d+)"), "a Go require line"),
        (re.compile(r"lua-resty-iapverify-(\d+\.\d+\.\d+)-1\.rockspec"), "the rockspec"),
        (re.compile(r"iapv_version_string\(\)`?\s*\|\s*`\"(\d+\.\d+\.\d+)\""), "iapv_version_string()"),
        (re.compile(r"IAPV_VERSION_STRING\s+\"(\d+\.\d+\.\d+)\""), "IAPV_VERSION_STRING"),
    ]
    for path in docs:
        if not path.is_file():
            continue
        rel = str(path.relative_to(root))
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for pattern, what in patterns:
                for found in pattern.findall(line):
                    if found != version and found != "0.0.0":   # v0.0.0: the placeholder beside a replace line
                        bad(f"{rel}:{number}", f"{what} {found}, VERSION is {version}")
            if re.search(r"iapverify-\d+\.\d+\.\d+-py3-none-\w+\.whl", line):
                bad(f"{rel}:{number}", "types the wheel's file name: derive it (build/wheel/iapverify-*.whl)")

    # The CHANGELOG: newest first; the top section is Unreleased or this version; none is newer.
    changelog = text("CHANGELOG.md")
    sections = re.findall(r"^## (.*)$", changelog, re.M)
    if sections:
        top = sections[0]
        if not (top.startswith("Unreleased") or re.match(rf"\[?{re.escape(version)}\]? - \d{{4}}-\d{{2}}-\d{{2}}$", top)):
            bad("CHANGELOG.md", f"top section {top!r}: neither 'Unreleased' nor [{version}] - YYYY-MM-DD")
        key = tuple(int(x) for x in m.groups())
        for heading in sections:
            v = re.match(r"\[?(\d+)\.(\d+)\.(\d+)\]?", heading)
            if v and tuple(int(x) for x in v.groups()) > key:
                bad("CHANGELOG.md", f"section {heading!r} is newer than VERSION {version}")
    else:
        bad("CHANGELOG.md", "no '## ' sections")

    for p in problems:
        print(f"check_version FAILED: {p}", file=sys.stderr)
    if not problems:
        print(f"check_version: {version} everywhere (header, Makefile, wheel, debs, pkg-config, rock, docs, CHANGELOG)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
