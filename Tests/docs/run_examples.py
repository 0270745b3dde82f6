#!/usr/bin/env python3
"""Runs the code blocks of README.md and docs/*.md, doctest style.

Every fenced block in a runnable language (sh, bash, shell, python, c, go, lua, swift) must be
preceded by a marker comment on the line before the fence, so that no example is silently left out:

    <!-- run -->              run it (the language comes from the fence's info string)
    <!-- run: LANG -->        run it as LANG
    <!-- skip: reason -->     a complete command that cannot run here (root, network, the test suite)
    <!-- fragment -->         part of a program; Swift, Go and C fragments are compiled (below)
    <!-- schema: NAME -->     JSON validated against docs/schema/NAME.schema.json (by check_schemas.py)

The same words may instead follow the language in the fence's info string (```sh run).
Each block runs in a fresh scratch directory that looks like the top of a checkout (build, Tests,
docs, examples, Include and bindings are symlinks to the real ones), with build/bin on PATH,
build/lib on LD_LIBRARY_PATH and IAPVERIFY_LIBRARY pointing at build/lib/libiapverify.so.1.
A block fails the run when it exits non-zero (or does not compile).

Swift, Go and C fragments are compiled, each as the body of a function, beside a prelude that
defines the host-side names they use without defining them (Tests/docs/snippets/prelude.*):
Swift snippets are type-checked together in one swiftc run against the release build's IAPVerify
module (.build-release, which `make` builds), Go snippets are built together as one module with a
replace line to bindings/go (an unused variable gets `_ = name`: a fragment shows what to call, not
what to do with every value), C fragments with -Wall -Wextra -Werror (unused variables allowed).
By default the files are README.md, docs/*.md and the DocC articles (Sources/*/*.docc/*.md).

    python3 Tests/docs/run_examples.py [--python build/venv/bin/python] [--list] [-v] [FILE.md ...]

Python blocks run with --python (default: build/venv/bin/python when it exists, else this
interpreter), which must have the iapverify binding installed (`make python-test` makes build/venv).
C blocks need a C compiler (cc); lua blocks need luajit.
"""
from __future__ import annotations

import argparse
import glob
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
            "python3": "python", "c": "c", "go": "go", "lua": "lua", "swift": "swift"}
COMPILED = ("swift", "go", "c")   # fragments in these languages are compiled
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


SNIPPETS = ROOT / "Tests" / "docs" / "snippets"
GO_MODULE = "github.com/iapverify/iapverify/bindings/go"


def _indent(code: str, prefix: str) -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in code.splitlines())


def _by_file(output: str, files: dict[str, tuple[Block, int]]) -> dict[str, list[str]]:
    """Compiler diagnostics (path:line:col: message) by snippet file, lines mapped to the document's."""
    found: dict[str, list[str]] = {}
    for line in output.splitlines():
        for name, (block, offset) in files.items():
            m = re.search(rf"{re.escape(name)}:(\d+):(\d+):\s*(.*)", line)
            if m:
                doc_line = block.line + int(m.group(1)) - offset
                found.setdefault(name, []).append(f"{block.path.name}:{doc_line}: {m.group(3)}")
    return found


def compile_swift(todo: list[Block]) -> list[tuple[Block, str | None]]:
    """Type-checks every Swift fragment, each the body of a throwing function, in one swiftc run."""
    release = ROOT / ".build-release" / "release"
    if not (release / "Modules" / "IAPVerify.swiftmodule").exists():
        return [(b, "no .build-release/release/Modules/IAPVerify.swiftmodule: run make") for b in todo]
    flags = ["-I", str(release / "Modules")]
    for modulemap in sorted(release.glob("*.build/module.modulemap")) + sorted((ROOT / "Sources").glob("*/module.modulemap")):
        flags += ["-Xcc", f"-fmodule-map-file={modulemap}"]
    work = Path(tempfile.mkdtemp(prefix="iapv-swift-snippets-"))
    try:
        files: dict[str, tuple[Block, int]] = {}
        for n, b in enumerate(todo):
            lines = b.code.splitlines()
            imports = [line for line in lines if re.match(r"^import \w+\s*(//.*)?$", line)]
            # Imports go to the top; their lines stay, as comments, so that lines keep their numbers.
            body = "\n".join("// " + line if line in imports else line for line in lines)
            head = [f"// {b.where}", *sorted({line.split("//")[0].strip() for line in imports} | {"import IAPVerify"}),
                    "@discardableResult", f"func snippet{n}() throws -> Reply {{"]
            name = f"snippet{n}.swift"
            (work / name).write_text("\n".join(head) + "\n" + _indent(body, "    ") + "\n    return .ok\n}\n")
            files[name] = (b, len(head))
        # One swiftc run for all; a fatal error in one file (a missing module) can hide the others'
        # errors, so the files not blamed are checked again without the blamed ones until clean.
        errors: dict[str, list[str]] = {}
        pending = list(files)
        while pending:
            argv = [os.environ.get("SWIFTC", "swiftc"), "-typecheck", "-swift-version", "6", "-parse-as-library",
                    *flags, str(SNIPPETS / "prelude.swift"), *(str(work / f) for f in pending)]
            p = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=TIMEOUT)
            if p.returncode == 0:
                break
            output = p.stdout + p.stderr
            found = _by_file("\n".join(line for line in output.splitlines() if ": error:" in line),
                             {name: files[name] for name in pending})
            if not found:
                return [(b, f"swiftc failed:\n{output}") for b in todo]
            errors.update(found)
            pending = [name for name in pending if name not in found]
        return [(b, "\n".join(errors[name]) if name in errors else None) for name, (b, _) in files.items()]
    finally:
        shutil.rmtree(work, ignore_errors=True)


GO_UNUSED = re.compile(r"(snippet\d+\.go):(\d+):\d+: (?:declared and not used: (\w+)|(\w+) declared (?:and|but) not used)")


def _statement_end(lines: list[str], start: int) -> int:
    """The index of the line after which `_ = name` can go for a name declared on lines[start]:
    where the statement's brackets close, or just inside the block it opens (`if x, ok := ...; ok {`)."""
    depth = 0
    for i in range(start, len(lines)):
        code = re.sub(r'"(\\.|[^"\\])*"|`[^`]*`|//.*$', "", lines[i])
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        if depth <= 0 or (depth == 1 and code.rstrip().endswith("{") and i == start):
            return i
    return start


def compile_go(todo: list[Block]) -> list[tuple[Block, str | None]]:
    """Builds every Go fragment, each the body of a function returning error, as one module."""
    pc = ROOT / "build" / "lib" / "pkgconfig"
    if not (pc / "iapverify.pc").exists():
        return [(b, "no build/lib/pkgconfig/iapverify.pc: run make") for b in todo]
    work = Path(tempfile.mkdtemp(prefix="iapv-go-snippets-"))
    env = dict(os.environ, PKG_CONFIG_PATH=str(pc), GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local",
               GOCACHE=str(ROOT / "build" / "go-cache-checkout"))
    try:
        (work / "go.mod").write_text(f"module example.com/docsnippets\n\ngo 1.19\n\nrequire {GO_MODULE} v0.0.0\n\n"
                                     f"replace {GO_MODULE} => {ROOT / 'bindings' / 'go'}\n")
        shutil.copy(SNIPPETS / "prelude.go", work / "prelude.go")
        files: dict[str, tuple[Block, int]] = {}
        sources: dict[str, list[str]] = {}
        header = ["package main", "", "import (", '\t"context"', '\t"errors"', '\t"fmt"', '\t"log"', '\t"net/http"',
                  '\t"time"', "", f'\tiapverify "{GO_MODULE}"', f'\t"{GO_MODULE}/apiclient"', ")", "",
                  "var _, _, _, _, _, _ = context.Background, errors.Is, fmt.Sprintf, log.Printf, http.NewRequest, time.Now",
                  "var _, _ = iapverify.NewVerifier, apiclient.ErrGiveUp", ""]
        for n, b in enumerate(todo):
            body = ["// " + line if re.match(r'^import\s+(\w+\s+)?"[^"]+"\s*$', line) else line for line in b.code.splitlines()]
            name = f"snippet{n}.go"
            sources[name] = header + [f"// {b.where}", f"func snippet{n}() error {{"] + ["\t" + line for line in body] + ["\treturn nil", "}"]
            files[name] = (b, len(header) + 2)   # lines after an inserted `_ =` are one off
        output = ""
        for _ in range(12):   # each round: build; give every unused variable a `_ =` line; again
            for name, lines in sources.items():
                (work / name).write_text("\n".join(lines) + "\n")
            p = subprocess.run(["go", "build", "-o", os.devnull, "."], cwd=work, env=env, capture_output=True,
                               text=True, timeout=TIMEOUT)
            output = p.stdout + p.stderr
            if p.returncode == 0:
                return [(b, None) for b, _ in files.values()]
            unused = [(m.group(1), int(m.group(2)), m.group(3) or m.group(4)) for m in GO_UNUSED.finditer(output)]
            if not unused:
                break
            for name, line, var in sorted(unused, key=lambda u: -u[1]):
                lines = sources[name]
                end = _statement_end(lines, line - 1)
                indent = re.match(r"\s*", lines[end]).group(0) + ("\t" if lines[end].rstrip().endswith("{") else "")
                lines.insert(end + 1, f"{indent}_ = {var}")
                # The document's lines after it move by one: keep the mapping for the lines before.
        errors = _by_file(output, files)
        if not errors:
            return [(b, f"go build failed:\n{output}") for b in todo]
        return [(b, "\n".join(errors[name]) if name in errors else None) for name, (b, _) in files.items()]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compile_c(todo: list[Block]) -> list[tuple[Block, str | None]]:
    """Compiles each C fragment as the body of a function after Tests/docs/snippets/prelude.h."""
    out: list[tuple[Block, str | None]] = []
    cc = os.environ.get("CC", "cc")
    for b in todo:
        work = Path(tempfile.mkdtemp(prefix="iapv-c-snippet-"))
        try:
            lines = b.code.splitlines()
            includes = [line for line in lines if line.startswith("#include")]
            head = ['#include "prelude.h"', *includes, "int snippet(void);", "int snippet(void) {"]
            body = ["/* " + line + " */" if line in includes else line for line in lines]
            (work / "snippet.c").write_text("\n".join(head + body + ["return 0;", "}"]) + "\n")
            p = subprocess.run([cc, "-std=c99", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused-variable",
                                "-Wno-unused-but-set-variable", "-Wno-unused-function", "-I", str(ROOT / "Include"),
                                "-I", str(SNIPPETS), "snippet.c"], cwd=work, capture_output=True, text=True, timeout=TIMEOUT)
            errors = _by_file(p.stdout + p.stderr, {"snippet.c": (b, len(head))})
            out.append((b, None if p.returncode == 0 else "\n".join(errors.get("snippet.c", [p.stdout + p.stderr]))))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return out


BUILT_PATH = re.compile(r"(?<![\w./-])build/(?:wheel|deb|lib|bin)/[^\s'\"`)|,;\[]*")


def check_built_paths(files: list[Path]) -> list[str]:
    """Every file under build/ that a page names (an install command, a path to run) is one the
    build makes: globs must match, VERSION stands for the version, nothing is typed that the build
    does not write (run after make, make wheel and make deb)."""
    version = (ROOT / "VERSION").read_text().strip()
    problems = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for name in BUILT_PATH.findall(line):
                name = name.rstrip(".:")
                if "<" in name or "$" in name:
                    continue
                if not glob.glob(str(ROOT / name.replace("VERSION", version))):
                    problems.append(f"{path.relative_to(ROOT)}:{number}: {name}: the build makes no such file")
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
    ap.add_argument("--only", choices=sorted({"sh", "python", "c", "lua", "swift", "go"}),
                    help="run only the blocks of this runner (the others are listed as not run)")
    ap.add_argument("--installed", action="store_true",
                    help="python blocks load the library the installed binding bundles (a wheel's test)")
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    global INSTALLED
    INSTALLED = args.installed
    files = [f.resolve() for f in args.files] or ([ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
                                                  + sorted((ROOT / "Sources").glob("*/*.docc/*.md")))

    failures: list[str] = check_links(files)
    if not args.list and not args.only:
        failures += check_built_paths(files)
    if args.repo:
        failures += outside_references_in_repository()
    counts = {"run": 0, "skip": 0, "fragment": 0, "schema": 0, "compiled": 0}
    to_compile: dict[str, list[Block]] = {lang: [] for lang in COMPILED}
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
            if b.action == "fragment" and b.runner in COMPILED:
                if args.list:
                    print(f"compile  {b.where} ({b.runner})")
                elif not args.only or args.only == b.runner:
                    to_compile[b.runner].append(b)
                continue
            if b.action == "run" and b.runner in ("swift", "go"):
                failures.append(f"{b.where}: {b.runner} blocks are compiled, not run: mark it <!-- fragment -->")
                continue
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
    for lang, compile_all in (("swift", compile_swift), ("go", compile_go), ("c", compile_c)):
        if not to_compile[lang]:
            continue
        for b, problem in compile_all(to_compile[lang]):
            counts["compiled"] += 1
            print(f"{'ok  ' if problem is None else 'FAIL'} {b.where} ({lang}, compiled)")
            if problem is not None:
                for line in problem.splitlines()[-30:]:
                    print(f"     | {line}")
                failures.append(f"{b.where}: does not compile: {problem.splitlines()[0] if problem else ''}")
    print(f"run_examples: {counts['run']} blocks run, {counts['compiled']} fragments compiled, "
          f"{counts['skip']} skipped with a reason, {counts['fragment']} other fragments, "
          f"{counts['schema']} JSON blocks left to check_schemas.py")
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
