#!/usr/bin/env python3
"""Checks the bindings and the JSON Schemas against the core's own tables.

`iapverify fields --json` prints, from the Swift core, every member of the records a result holds
(a transaction, a renewal info, a receipt's in-app record: JSON name, type, whether it is written
always or only when present), the verdicts, the actions and the environments. This script holds to
them, name for name, in both directions:

  - Python: the record classes and enums (bindings/python/src/iapverify/records.py, enums.py);
  - Go: the constants and the struct tags (bindings/go/constants.go, serverapi.go).

The JSON Schemas, the docs tables and the bindings' other records and options are generated from or
checked against the whole description (`iapverify fields --json`'s objects, options and config) by
scripts/surface.py, which `make cli-test` runs next.

The core's output is the truth: a difference names the file to change. A new field is added to the
core's table, then to each file this script names.

    python3 Tests/architecture/check_fields.py [--bin build/bin/iapverify]

(`make cli-test` runs it after `make all`.)
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / "bindings" / "python" / "src" / "iapverify"
GO = ROOT / "bindings" / "go"
SCHEMA = ROOT / "docs" / "schema"

problems: list[str] = []


def differ(what: str, where: str, core: set[str], binding: set[str]) -> None:
    """Notes the names the core has and `where` lacks, and the other way round."""
    missing, extra = sorted(core - binding), sorted(binding - core)
    if missing:
        problems.append(f"{where}: {what}: lacks {', '.join(missing)}, which the core has: add them")
    if extra:
        problems.append(f"{where}: {what}: has {', '.join(extra)}, which the core does not: remove or rename them")


# -- the core ------------------------------------------------------------------------------------

def core_fields(binary: str) -> dict[str, Any]:
    out = subprocess.run([binary, "fields", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def names(fields: list[dict[str, Any]], written: str | None = None) -> set[str]:
    return {f["name"] for f in fields if written is None or f["written"] == written}


def nested(fields: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return next((f.get("fields", []) for f in fields if f["name"] == name), [])


# -- Python --------------------------------------------------------------------------------------

def python_module(name: str) -> ast.Module:
    return ast.parse((PY / name).read_text(), filename=name)


def python_class(module: ast.Module, name: str) -> ast.ClassDef:
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise SystemExit(f"check_fields: {name} not found in the Python binding")


def python_fields(cls: ast.ClassDef) -> set[str]:
    return {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            and not n.target.id.startswith("_") and n.target.id != "extra"}


def python_always(cls: ast.ClassDef) -> set[str]:
    for n in cls.body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_ALWAYS" for t in n.targets):
            return {e.value for e in ast.walk(n.value) if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def python_enum(module: ast.Module, name: str) -> set[str]:
    return {n.value.value for n in python_class(module, name).body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def check_python(core: dict[str, Any]) -> None:
    records = python_module("records.py")
    rec = core["records"]
    where = "bindings/python/src/iapverify/records.py"
    transaction = rec["transaction"] + rec["receipt_in_app"]   # one Transaction class for both
    cls = python_class(records, "Transaction")
    differ("Transaction fields", where, names(transaction), python_fields(cls))
    differ("Transaction._ALWAYS (the members written always, null when empty)", where,
           names(rec["transaction"], "always"), python_always(cls))
    cls = python_class(records, "RenewalInfo")
    differ("RenewalInfo fields", where, names(rec["renewal_info"]), python_fields(cls))
    differ("RenewalInfo._ALWAYS", where, names(rec["renewal_info"], "always"), python_always(cls))

    enums = python_module("enums.py")
    where = "bindings/python/src/iapverify/enums.py"
    differ("Verdict", where, set(core["verdicts"]), python_enum(enums, "Verdict"))
    differ("Action", where, set(core["actions"]), python_enum(enums, "Action"))
    differ("NotificationAction", where, set(core["notification_actions"]), python_enum(enums, "NotificationAction"))
    differ("RealtimeAction", where, set(core["realtime_actions"]), python_enum(enums, "RealtimeAction"))
    differ("EntitlementState", where, set(core["entitlement_states"]), python_enum(enums, "EntitlementState"))
    differ("Environment", where, set(core["environments"]), python_enum(enums, "Environment"))
    differ("ServerEnvironment", where, set(core["server_environments"]), python_enum(enums, "ServerEnvironment"))


# -- Go ------------------------------------------------------------------------------------------

def go_struct(source: str, name: str) -> dict[str, bool]:
    """The JSON names of a struct's tagged fields, each with whether it is `omitempty`."""
    m = re.search(r"^type " + name + r" struct \{\n(.*?)^\}", source, re.S | re.M)
    if m is None:
        raise SystemExit(f"check_fields: type {name} struct not found in the Go binding")
    tags: dict[str, bool] = {}
    for tag in re.findall(r'`json:"([^"]*)"`', m.group(1)):
        key, *options = tag.split(",")
        if key != "-":
            tags[key] = "omitempty" in options
    return tags


def go_constants(source: str, type_name: str) -> set[str]:
    return set(re.findall(r"^\s*\w+\s+" + type_name + r'\s*=\s*"([^"]*)"', source, re.M))


def check_go(core: dict[str, Any]) -> None:
    api = (GO / "serverapi.go").read_text()
    rec = core["records"]
    where = "bindings/go/serverapi.go"
    for struct, fields in (("Transaction", rec["transaction"] + rec["receipt_in_app"]), ("RenewalInfo", rec["renewal_info"])):
        tags = go_struct(api, struct)
        differ(f"{struct} json tags", where, names(fields), set(tags))
        always = names(rec["transaction"] if struct == "Transaction" else fields, "always")
        differ(f"{struct} json tags without omitempty (the members written always)", where, always,
               {k for k, omit in tags.items() if not omit})
    for struct, record in (("TransactionCommitment", "transaction"), ("RenewalCommitment", "renewal_info")):
        differ(f"{struct} json tags", where, names(nested(rec[record], "commitment")), set(go_struct(api, struct)))

    constants = (GO / "constants.go").read_text()
    where = "bindings/go/constants.go"
    differ("Verdict constants", where, set(core["verdicts"]) | set(core["inspect_verdicts"]), go_constants(constants, "Verdict"))
    differ("Action constants", where, set(core["actions"]) | set(core["notification_actions"]) | set(core["realtime_actions"]),
           go_constants(constants, "Action"))
    differ("State constants", where, set(core["entitlement_states"]), go_constants(constants, "State"))
    differ("Effect constants", where, set(core["notification_effects"]), go_constants(constants, "Effect"))
    differ("Environment constants", where, set(core["environments"]), go_constants(constants, "Environment"))
    differ("ServerEnvironment constants", where, set(core["server_environments"]), go_constants(constants, "ServerEnvironment"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=str(ROOT / "build" / "bin" / "iapverify"), help="the iapverify CLI (default: build/bin)")
    args = parser.parse_args()
    core = core_fields(args.bin)
    check_python(core)
    check_go(core)
    if problems:
        print("check_fields: the bindings and schemas differ from `iapverify fields --json` (the core is right):")
        for p in problems:
            print("  " + p)
        return 1
    counts = ", ".join(f"{k} {len(v)}" for k, v in core["records"].items())
    print(f"check_fields: ok (records: {counts}; {len(core['verdicts'])} verdicts, "
          f"{len(core['actions']) + len(core['notification_actions']) + len(core['realtime_actions'])} actions, "
          f"{len(core['environments'])} environments) in Python and Go")
    return 0


if __name__ == "__main__":
    sys.exit(main())
