#!/usr/bin/env python3
"""Checks that the core's folders depend only on what Sources/IAPVerify/README.md says they may.

The core is one Swift module, so folders do not import each other: a dependency is a use of a type
declared in another folder (a name, an `extension` of it, a conformance). The script reads the
README's table ("may depend on"), collects the types each folder declares, strips comments and
string literals from every file, and reports each use of another folder's type that the table
does not allow. KNOWN lists the arrows that are still wrong today: each is a refactor to do, and the
check fails if one disappears without being taken off the list, or if a new one appears.

It also checks the C modules each file imports against C_MODULES (libcrypto only in Trust/ and the
reference path that checks it; KNOWN_IMPORTS lists the imports still wrong today, kept like KNOWN),
and that each folder README's "Depends on ..." sentence names exactly the folders of its table row.

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

# The C modules of the package and where they may be imported: a folder name, or a folder/file.
C_MODULES: dict[str, set[str]] = {
    "COpenSSL": {"Trust", "Receipt/ReceiptReferencePath.swift"},   # libcrypto; the reference path checks it
    "CJansson": {"JSON"},
    "CJSONTape": {"JSON"},
    "CFastBase64": {"Encoding"},
}

# Imports C_MODULES does not allow yet (file -> module), each with the reason it is still here.
KNOWN_IMPORTS: dict[tuple[str, str], str] = {
    ("Encoding/Base64.swift", "COpenSSL"): "EVP_EncodeBlock/EVP_DecodeBlock for base64: Trust's, or Swift's own",
    ("Receipt/ReceiptVerification.swift", "COpenSSL"): "imported but unused: remove the import",
    ("StoreKit2/JWSVerification.swift", "COpenSSL"): "imported but unused: remove the import",
}

IMPORT = re.compile(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(?:\w+\s+)?(C\w+)\b", re.M)

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


def folder_names(deps: str, folders: list[str]) -> set[str]:
    """The folders a table cell or README sentence names ("everything below"/"the other folders": all)."""
    if "everything" in deps or "the other folders" in deps:
        return {"*"}
    return {w for w in re.findall(r"\b([A-Z]\w+)\b", deps) if w in folders}


def import_failures(sources: dict[str, dict[Path, str]]) -> int:
    """Each `import C...` of a file checked against C_MODULES; KNOWN_IMPORTS must be exact."""
    wrong: set[tuple[str, str]] = set()
    failures = 0
    for f, files in sources.items():
        for path in files:
            for module in IMPORT.findall(path.read_text()):
                where = f"{f}/{path.name}"
                if f in C_MODULES.get(module, set()) or where in C_MODULES.get(module, set()):
                    continue
                wrong.add((where, module))
                if (where, module) not in KNOWN_IMPORTS:
                    failures += 1
                    print(f"check_dependencies: {where} imports {module}, which C_MODULES allows only in "
                          + ", ".join(sorted(C_MODULES.get(module, set())) or ["no folder"]))
    for item in sorted(set(KNOWN_IMPORTS) - wrong):
        failures += 1
        print(f"check_dependencies: {item[0]} no longer imports {item[1]}: take it off KNOWN_IMPORTS")
    return failures


def readme_failures(table: dict[str, set[str]], folders: list[str]) -> int:
    """Each folder README's "Depends on ..." sentence names exactly its row's folders."""
    failures = 0
    for f in folders:
        readme = CORE / f / "README.md"
        text = " ".join(readme.read_text().split()) if readme.exists() else ""
        m = re.search(r"Depends on ([^.;]*)[.;]", text)
        if not m:
            failures += 1
            print(f"check_dependencies: {f}/README.md has no \"Depends on ...\" sentence")
            continue
        said = set() if m.group(1).startswith("nothing") else folder_names(m.group(1), folders)
        if said != table[f]:
            failures += 1
            print(f"check_dependencies: {f}/README.md says it depends on {', '.join(sorted(said)) or 'nothing'}; "
                  f"the table says {', '.join(sorted(table[f])) or 'nothing'}")
    return failures


def main() -> int:
    verbose = "-v" in sys.argv
    table = allowed()
    # A DocC catalog (IAPVerify.docc) is documentation, not a folder of code.
    folders = sorted(p.name for p in CORE.iterdir() if p.is_dir() and p.suffix != ".docc")
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
    failures = import_failures(sources) + readme_failures(table, folders)
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
    print(f"check_dependencies: OK ({len(folders)} folders, {len(uses)} arrows, {len(KNOWN)} known to fix; "
          f"C imports as C_MODULES says, {len(KNOWN_IMPORTS)} known to fix; folder READMEs match the table)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
