#!/usr/bin/env python3
"""Checks that the core's folders depend only on what Sources/IAPVerify/README.md says they may.

The core is one Swift module, so folders do not import each other: a dependency is a use of a type
declared in another folder (a name, an `extension` of it, a conformance). The script reads the
README's table ("may depend on"), collects the types each folder declares, strips comments and
string literals from every file, and reports each use of another folder's type that the table
does not allow. KNOWN lists the arrows that are still wrong today: each is a refactor to do, and the
check fails if one disappears without being taken off the list, or if a new one appears.

    python3 Tests/architecture/check_dependencies.py [-v]
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "Sources" / "IAPVerify"

# Arrows the README does not allow yet (folder -> folder it uses), each with the reason it is
# still here. Remove a line when its refactor lands.
KNOWN: dict[tuple[str, str], str] = {}

DECL = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|indirect)\s+)*"
                  r"(?:struct|enum|class|protocol|typealias|actor)\s+([A-Z]\w*)", re.M)


def strip(code: str) -> str:
    """The code without comments and string literals (so a name in prose is not a use)."""
    code = re.sub(r'"""(?:.|\n)*?"""', '""', code)
    code = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', code)
    code = re.sub(r"/\*(?:.|\n)*?\*/", "", code)
    return re.sub(r"//[^\n]*", "", code)


def allowed() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in (CORE / "README.md").read_text().splitlines():
        m = re.match(r"\| `(\w+)/` \| [^|]* \| ([^|]*) \|", line)
        if not m:
            continue
        folder, deps = m.group(1), m.group(2)
        if "everything" in deps:
            table[folder] = {"*"}
        elif "nothing" in deps:
            table[folder] = set()
        else:
            table[folder] = {d for d in re.findall(r"\b([A-Z]\w+)\b", deps)}
    return table


def main() -> int:
    verbose = "-v" in sys.argv
    table = allowed()
    folders = sorted(p.name for p in CORE.iterdir() if p.is_dir())
    missing = [f for f in folders if f not in table]
    if missing:
        print(f"check_dependencies: {', '.join(missing)} not in the README's table")
        return 1
    owner: dict[str, str] = {}
    sources = {f: {p: strip(p.read_text()) for p in sorted((CORE / f).glob("*.swift"))} for f in folders}
    for f in folders:
        for code in sources[f].values():
            for name in DECL.findall(code):
                owner.setdefault(name, f)
    uses: dict[tuple[str, str], set[str]] = {}
    for f in folders:
        for path, code in sources[f].items():
            for word in set(re.findall(r"\b[A-Z]\w*\b", code)):
                g = owner.get(word)
                if g and g != f:
                    uses.setdefault((f, g), set()).add(f"{word} in {path.name}")
    wrong = {arrow: where for arrow, where in uses.items()
             if "*" not in table[arrow[0]] and arrow[1] not in table[arrow[0]]}
    failures = 0
    for arrow, where in sorted(wrong.items()):
        if arrow in KNOWN:
            if verbose:
                print(f"known: {arrow[0]} -> {arrow[1]} ({KNOWN[arrow]})")
            continue
        failures += 1
        print(f"check_dependencies: {arrow[0]}/ uses {arrow[1]}/, which the README does not allow: "
              + ", ".join(sorted(where)[:5]))
    for arrow in sorted(set(KNOWN) - set(wrong)):
        failures += 1
        print(f"check_dependencies: {arrow[0]} -> {arrow[1]} is gone: take it off KNOWN")
    if verbose:
        for (f, g), where in sorted(uses.items()):
            print(f"{f} -> {g}: {len(where)} uses")
    if failures:
        return 1
    print(f"check_dependencies: OK ({len(folders)} folders, {len(uses)} arrows, {len(KNOWN)} known to fix)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
