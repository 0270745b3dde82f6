#!/usr/bin/env python3
"""Everything made from, or held to, the core's one description of the library's surface.

`iapverify fields --json` prints, from the Swift core, every object of every document the library
reads or writes (each member's name, type, nullability, presence, values and meaning), the
documents and the calls that return them, every option key per entry point and every config key.
This script is the only consumer of that description:

  generated (`--write` rewrites them, `--check` fails when one is stale):
    - the member tables of docs/results.md, docs/options.md and docs/config.md, between markers
          <!-- surface:object NAME [OTHER] [-LEFT_OUT] [attributes] -->  <!-- surface:options [ENTRY_POINT] -->
          <!-- surface:config -->  <!-- surface:call ENTRY_POINT -->
          ...
          <!-- /surface -->
      (the prose around them is hand-written; a table between markers is never edited by hand);
    - the JSON Schemas of docs/schema/ named by the description (its documents, options, config and
      common.schema.json): each is docs/schema/overlay/NAME (hand-written: titles, descriptions,
      patterns, bounds, if/then rules, where each object sits) with every place marked
      {"$comment": "surface:object NAME"} (or surface:options ENTRY_POINT) filled
      in from the description: type, properties, required, each member's type, enum and nullability.
      An overlay may add keywords to a member but may not set one the description gives, nor name a
      member the description lacks.

    - bindings/python/src/iapverify/options.py: each call's options as a TypedDict.

  checked in both directions (names and types):
    - Python: the records and results classes, their camelCase aliases, the option keywords;
    - Go: the struct tags and field types, Options and APIResponseOptions;
    - Lua: the option keys the binding names;
    - Python's ctypes prototypes against Include/iapverify.h.

Every failure names the file and the member to change. After a clean check, --check also runs
itself on mutated copies of the description (a member added, one dropped, an option key retyped,
added or dropped, a config key added) and fails if a file that should have caught one did not.

The parts live in scripts/surfacelib/: docs.py (the tables), schemas.py, python_binding.py and
go_binding.py (each with its table of which class or struct shows which object, and the exceptions
with their reasons), lua_and_c.py; common.py holds the description and the problems found.

    python3 scripts/surface.py --check [--bin build/bin/iapverify | --description FILE]
    python3 scripts/surface.py --write

(`make cli-test` runs --check after `make all`; docs/contributing.md says how to add a field.)
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from surfacelib.common import (Description, ROOT, load_description, notes, problems)  # noqa: E402
from surfacelib.docs import (docs_tables, every_object_shown)  # noqa: E402
from surfacelib.go_binding import check_go  # noqa: E402
from surfacelib.lua_and_c import (check_ctypes, check_lua)  # noqa: E402
from surfacelib.python_binding import (check_python, check_python_options, python_options_module)  # noqa: E402
from surfacelib.schemas import schemas  # noqa: E402


def run_all(desc: Description, write: bool) -> list[str]:
    """Every generator and check; the problems found."""
    problems.clear()
    notes.clear()
    shown = docs_tables(desc, write)
    every_object_shown(desc, shown)
    schemas(desc, write)
    check_python(desc)
    check_python_options(desc)
    python_options_module(desc, write)
    check_go(desc)
    check_lua(desc)
    check_ctypes()
    return list(problems)


# Mutations of the description that each check must catch (the file it must name), so that a check
# that stops biting fails `make test` too. Run by --check after the real check passed.
def _add_member(obj: str, member: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["objects"][obj]["members"].append(member)


def _drop_member(obj: str, name: str) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        d["objects"][obj]["members"] = [m for m in d["objects"][obj]["members"] if m["name"] != name]
    return f


def _retype_key(name: str, new_type: str) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        for k in d["options"]["keys"]:
            if k["name"] == name:
                k["type"] = new_type
    return f


def _add_key(entry: str) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        d["options"]["keys"].append({"name": "surface_self_test", "type": "boolean", "nullable": True, "presence": "always",
                                     "default": None, "meaning": "x", "read_by": [entry]})
        d["options"]["entry_points"][entry].append("surface_self_test")
    return f


def _drop_key(name: str) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        for keys in d["options"]["entry_points"].values():
            if name in keys:
                keys.remove(name)
    return f


NEW = {"name": "surface_self_test_ms", "type": "ms", "nullable": True, "presence": "when_present", "meaning": "x"}
SELF_TEST: list[tuple[str, Callable[[dict[str, Any]], None], list[str]]] = [
    ("a member added to transaction", _add_member("transaction", NEW),
     ["docs/results.md", "docs/schema/common.schema.json", "bindings/python/src/iapverify/records.py", "bindings/go/serverapi.go"]),
    ("a member dropped from entitlement", _drop_member("entitlement", "will_renew"),
     ["docs/results.md", "docs/schema/common.schema.json", "bindings/python/src/iapverify/results.py", "bindings/go/result.go"]),
    ("a member added to jws_result", _add_member("jws_result", NEW),
     ["docs/results.md", "docs/schema/jws-result.schema.json", "bindings/python/src/iapverify/results.py", "bindings/go/result.go"]),
    ("an option key retyped", _retype_key("max_age_ms", "string"),
     ["docs/options.md", "docs/schema/options.schema.json", "bindings/go/iapverify.go", "bindings/python/src/iapverify/options.py"]),
    ("an option key added", _add_key("iapv_verify_jws"),
     ["docs/options.md", "docs/schema/options.schema.json", "bindings/go/iapverify.go", "bindings/python/src/iapverify/options.py"]),
    ("an option key dropped", _drop_key("ocsp_responses"),
     ["bindings/lua/lib/resty/iapverify.lua", "bindings/go/serverapi.go"]),
    ("a config member added", _add_member("config", {**NEW, "default": None}), ["docs/config.md", "docs/schema/config.schema.json"]),
]


def self_test(desc: Description) -> list[str]:
    failed = []
    for what, mutate, files in SELF_TEST:
        data = copy.deepcopy(desc.data)
        mutate(data)
        found = run_all(Description(data), write=False)
        for f in files:
            if not any(p.startswith(f) for p in found):
                failed.append(f"scripts/surface.py: self-test: {what} is not caught in {f}: the check of that file stopped biting")
    problems.clear()
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail when a generated file is stale or a binding differs")
    mode.add_argument("--write", action="store_true", help="rewrite the generated tables and schemas, then check the rest")
    parser.add_argument("--bin", default=str(ROOT / "build" / "bin" / "iapverify"), help="the iapverify CLI (default: build/bin)")
    parser.add_argument("--description", help="read the description from this file instead of running the CLI")
    parser.add_argument("-v", "--verbose", action="store_true", help="also print the notes")
    args = parser.parse_args()
    desc = load_description(args.bin, args.description)
    found = run_all(desc, args.write)
    if not found and args.check:
        found = self_test(desc)
    problems[:] = found
    if args.verbose:
        for n in notes:
            print("surface: note: " + n)
    if problems:
        print("surface: these differ from `iapverify fields --json` (the core is right; generated files: "
              "python3 scripts/surface.py --write):")
        for p in problems:
            print("  " + p)
        return 1
    print(f"surface: ok ({len(desc.objects)} objects, {len(desc.option_keys)} option keys, {len(desc.config_keys)} config keys: "
          f"docs tables, docs/schema, Python, Go, Lua and the ctypes prototypes agree with the description)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
