#!/usr/bin/env python3
"""The Swift core's public surface (the IAPVerifyCore product), as a list checked into the
repository: a change to the public API is a visible diff in Tests/architecture/public-api.txt.

    python3 Tests/architecture/public_api.py            # compare (after `swift build` or `swift test`)
    python3 Tests/architecture/public_api.py --update   # rewrite the list after a deliberate change

It reads the module the debug build made with swift-symbolgraph-extract (public and open only)
and writes one line per symbol: its kind and its path (Type.member)."""
from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIST = ROOT / "Tests" / "architecture" / "public-api.txt"
# The C modules the core imports: two with their own module maps, two with the ones SwiftPM makes.
C_MODULES = ["Sources/COpenSSL", "Sources/CJansson", ".build/debug/CJSONTape.build", ".build/debug/CFastBase64.build"]


def symbols() -> list[str]:
    tool = shutil.which("swift-symbolgraph-extract")
    if tool is None:
        sys.exit("public_api: swift-symbolgraph-extract is not on PATH (it comes with the Swift toolchain)")
    build = ROOT / ".build" / "debug"
    if not (build / "Modules" / "IAPVerify.swiftmodule").exists():
        sys.exit("public_api: no debug build of IAPVerify: run `swift build` (or `make swift-test`) first")
    with tempfile.TemporaryDirectory() as out:
        argv = [tool, "-module-name", "IAPVerify", "-target", "x86_64-unknown-linux-gnu", "-I", str(build / "Modules"),
                "-minimum-access-level", "public", "-output-dir", out]
        for m in C_MODULES:
            argv += ["-I", str(ROOT / m)]
        subprocess.run(argv, check=True)
        graph = json.loads((Path(out) / "IAPVerify.symbols.json").read_text())
    lines = set()
    for s in graph["symbols"]:
        kind = s["kind"]["identifier"].removeprefix("swift.")
        lines.add(f"{kind:14} {'.'.join(s['pathComponents'])}")
    return sorted(lines)


def main() -> int:
    current = symbols()
    if "--update" in sys.argv:
        LIST.write_text("\n".join(current) + "\n")
        print(f"public_api: {len(current)} public symbols written to {LIST.relative_to(ROOT)}")
        return 0
    recorded = LIST.read_text().splitlines() if LIST.exists() else []
    if current == recorded:
        print(f"public_api: OK ({len(current)} public symbols, as recorded)")
        return 0
    sys.stdout.writelines(difflib.unified_diff([l + "\n" for l in recorded], [l + "\n" for l in current],
                                               str(LIST.relative_to(ROOT)), "the build"))
    print("public_api: the public API changed. If that is deliberate, run "
          "`python3 Tests/architecture/public_api.py --update` and commit the list.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
