#!/usr/bin/env python3
"""Runs the code blocks of README.md and docs/*.md, doctest style.

Every fenced block in a runnable language (sh, bash, shell, python, c, go, lua) must be preceded
by a marker comment on the line before the fence, so that no example is silently left out:

    <!-- run -->              run it (the language comes from the fence's info string)
    <!-- run: LANG -->        run it as LANG
    <!-- skip: reason -->     a complete command that cannot run here (root, network, the test suite)
    <!-- fragment -->         part of a program, shown for reading
    <!-- schema: NAME -->     JSON validated against docs/schema/NAME.schema.json (by check_schemas.py)

The same words may instead follow the language in the fence's info string (```sh run).
Each block runs in a fresh scratch directory that looks like the top of a checkout (build, Tests,
docs, examples, Include and bindings are symlinks to the real ones), with build/bin on PATH,
build/lib on LD_LIBRARY_PATH and IAPVERIFY_LIBRARY pointing at build/lib/libiapverify.so.1.
A block fails the run when it exits non-zero (or does not compile).

    python3 Tests/docs/run_examples.py [--python build/venv/bin/python] [--list] [-v] [FILE.md ...]

Python blocks run with --python (default: build/venv/bin/python when it exists, else this
interpreter), which must have the iapverify binding installed (`make python-test` makes build/venv).
C blocks need a C compiler (cc); lua blocks need luajit.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINKED = ("build", "Tests", "docs", "examples", "Include", "bindings", "scripts", "Fuzz")
RUNNABLE = {"sh": "sh", "bash": "sh", "shell": "sh", "console": "sh", "python": "python", "py": "python",
            "python3": "python", "c": "c", "go": "go", "lua": "lua"}
MARKER = re.compile(r"^\s*<!--\s*(run|skip|fragment|schema)\s*(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$")
TIMEOUT = 600


@dataclass
class Block:
    path: Path
    line: int           # 1-based line of the opening fence
    lang: str           # the fence's first word, lower case ("" when none)
    action: str | None  # run, skip, fragment, schema, or None
    arg: str            # the marker's argument (language, reason, schema name)
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def runner(self) -> str | None:
        return RUNNABLE.get((self.arg if self.action == "run" and self.arg else self.lang).lower())


def blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang, rest = m.group(1), m.group(2), m.group(3).lower(), m.group(4).strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and lines[i].strip().strip(fence[0]) == ""):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        action, arg = None, ""
        # The marker on the nearest non-blank line above the fence.
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0 and (mm := MARKER.match(lines[j])):
            action, arg = mm.group(1), (mm.group(2) or "").strip()
        # Or in the info string: ```sh run
        words = rest.split()
        if action is None and words and words[0] in ("run", "skip", "fragment"):
            action, arg = words[0], " ".join(words[1:])
        out.append(Block(path, start + 1, lang, action, arg, "\n".join(body) + "\n"))
    return out


def scratch_dir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="iapv-example-"))
    for name in LINKED:
        if (ROOT / name).exists():
            (d / name).symlink_to(ROOT / name)
    return d


# --installed: Python blocks use the library the installed wheel bundles, not the checkout's.
INSTALLED = False


def environment() -> dict[str, str]:
    env = dict(os.environ)
    if INSTALLED:
        env.pop("IAPVERIFY_LIBRARY", None)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env
    env["PATH"] = f"{ROOT / 'build' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["LD_LIBRARY_PATH"] = f"{ROOT / 'build' / 'lib'}{os.pathsep}{env.get('LD_LIBRARY_PATH', '')}".rstrip(os.pathsep)
    env["IAPVERIFY_LIBRARY"] = str(ROOT / "build" / "lib" / "libiapverify.so.1")
    pc = ROOT / "build" / "lib" / "pkgconfig"
    if pc.is_dir():
        env["PKG_CONFIG_PATH"] = f"{pc}{os.pathsep}{env.get('PKG_CONFIG_PATH', '')}".rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_block(block: Block, python: str) -> tuple[bool, str]:
    runner = block.runner
    work = scratch_dir()
    env = environment()
    try:
        if runner == "sh":
            script = work / "example.sh"
            script.write_text(block.code)
            argv = ["bash", "-euo", "pipefail", str(script)]
        elif runner == "python":
            script = work / "example.py"
            script.write_text(block.code)
            argv = [python, str(script)]
        elif runner == "c":
            src = work / "example.c"
            src.write_text(block.code)
            cc = os.environ.get("CC", "cc")
            build = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "Include"), str(src),
                                    "-L", str(ROOT / "build" / "lib"), "-liapverify", "-o", str(work / "example")],
                                   cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT)
            if build.returncode != 0:
                return False, f"does not compile:\n{build.stdout}{build.stderr}"
            argv = [str(work / "example")]
        elif runner == "lua":
            script = work / "example.lua"
            script.write_text(block.code)
            env["LUA_PATH"] = f"{ROOT / 'bindings' / 'lua' / 'lib'}/?.lua;;"
            argv = ["luajit", str(script)]
        else:
            return False, f"no runner for the language {block.lang or block.arg!r}: mark it skip or fragment"
        p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        output = (p.stdout + p.stderr).strip()
        if p.returncode != 0:
            return False, f"exit {p.returncode}:\n{output}"
        return True, output
    except subprocess.TimeoutExpired:
        return False, f"timed out after {TIMEOUT} s"
    finally:
        shutil.rmtree(work, ignore_errors=True)


# References to the developers' own contract documents, which are not part of the repository.
# (Spelt in pieces so that this file does not match itself.)
OUTSIDE = re.compile("|".join([r"\bSP" + r"EC\b", "SP" + r"EC\.md", "DOM" + r"AIN\.md", r"\.\./sha" + "red", "/wo" + "rk/"]))
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*|_(?=\w)|(?<=\w)_", lambda m: "_" if m.group(0) == "_" else "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    out, seen, fenced = set(), {}, False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def check_links(files: list[Path]) -> list[str]:
    """Every relative link resolves to a file in the repository (and its anchor to a heading);
    nothing points outside the repository."""
    problems = []
    for path in files:
        fenced = False
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            if OUTSIDE.search(line):
                problems.append(f"{where}: points to a document outside the repository")
            if FENCE.match(line):
                fenced = not fenced
            if fenced:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # a URL, not a file
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path
                try:
                    dest.relative_to(ROOT)
                except ValueError:
                    problems.append(f"{where}: {target} leaves the repository")
                    continue
                if not dest.exists():
                    problems.append(f"{where}: {target}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    problems.append(f"{where}: {target}: no heading with that anchor")
    return problems


def outside_references_in_repository() -> list[str]:
    """Every tracked text file: nothing may point to a document outside the repository."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    problems = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                problems.append(f"{name}:{number}: points to a document outside the repository")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_python = ROOT / "build" / "venv" / "bin" / "python"
    ap.add_argument("--python", default=str(default_python) if default_python.exists() else sys.executable,
                    help="the interpreter for python blocks (it needs the iapverify binding)")
    ap.add_argument("--list", action="store_true", help="list the blocks and their markers, run nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each block's output")
    ap.add_argument("--repo", action="store_true",
                    help="also look for references to documents outside the repository in every tracked file")
    ap.add_argument("--only", choices=sorted({"sh", "python", "c", "lua"}),
                    help="run only the blocks of this runner (the others are listed as not run)")
    ap.add_argument("--installed", action="store_true",
                    help="python blocks load the library the installed binding bundles (a wheel's test)")
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    global INSTALLED
    INSTALLED = args.installed
    files = [f.resolve() for f in args.files] or [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))

    failures: list[str] = check_links(files)
    if args.repo:
        failures += outside_references_in_repository()
    counts = {"run": 0, "skip": 0, "fragment": 0, "schema": 0}
    for path in files:
        for b in blocks(path):
            runnable = b.lang in RUNNABLE or (b.action == "run" and b.arg.lower() in RUNNABLE)
            if b.action is None:
                if runnable:
                    failures.append(f"{b.where}: a {b.lang} block without a marker "
                                    "(<!-- run -->, <!-- skip: why -->, <!-- fragment -->)")
                continue
            if b.action == "schema":
                if not (ROOT / "docs" / "schema" / f"{b.arg}.schema.json").exists():
                    failures.append(f"{b.where}: no schema named {b.arg!r} in docs/schema")
                counts["schema"] += 1
                continue
            if b.action == "skip" and not b.arg:
                failures.append(f"{b.where}: a skipped block must say why (<!-- skip: reason -->)")
            if b.action != "run":
                counts[b.action] += 1
                if args.list:
                    print(f"{b.action:8} {b.where} {b.arg}")
                continue
            if args.list:
                print(f"run      {b.where} ({b.runner})")
                continue
            if args.only and b.runner != args.only:
                continue
            ok, output = run_block(b, args.python)
            counts["run"] += 1
            print(f"{'ok  ' if ok else 'FAIL'} {b.where} ({b.runner})")
            if args.verbose or not ok:
                for line in output.splitlines()[-40:]:
                    print(f"     | {line}")
            if not ok:
                failures.append(f"{b.where}: {output.splitlines()[0] if output else 'failed'}")
    print(f"run_examples: {counts['run']} blocks run, {counts['skip']} skipped with a reason, "
          f"{counts['fragment']} fragments, {counts['schema']} JSON blocks left to check_schemas.py")
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
