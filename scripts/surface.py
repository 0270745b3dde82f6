#!/usr/bin/env python3
"""Everything made from, or held to, the core's one description of the library's surface.

`iapverify fields --json` prints, from the Swift core, every object of every document the library
reads or writes (each member's name, type, nullability, presence, values and meaning), the
documents and the calls that return them, every option key per entry point and every config key.
This script is the only consumer of that description:

  generated (`--write` rewrites them, `--check` fails when one is stale):
    - the member tables of docs/results.md, docs/options.md and docs/config.md, between markers
          <!-- surface:object NAME -->  <!-- surface:options [ENTRY_POINT] -->  <!-- surface:config -->
          ...
          <!-- /surface -->
      (the prose around them is hand-written; a table between markers is never edited by hand);
    - the JSON Schemas of docs/schema/ named by the description (its documents, options, config and
      common.schema.json): each is docs/schema/overlay/NAME (hand-written: titles, descriptions,
      patterns, bounds, if/then rules, where each object sits) with every place marked
      {"$comment": "surface:object NAME"} (or surface:options ENTRY_POINT, surface:config) filled
      in from the description: type, properties, required, each member's type, enum and nullability.
      An overlay may add keywords to a member but may not set one the description gives, nor name a
      member the description lacks.

  checked in both directions (names and types):
    - Python: the records and results classes, their camelCase aliases, the option keywords;
    - Go: the struct tags and field types, Options and APIResponseOptions;
    - Lua: the option keys the binding names;
    - Python's ctypes prototypes against Include/iapverify.h.

Every failure names the file and the member to change. After a clean check, --check also runs
itself on mutated copies of the description (a member added, one dropped, an option key retyped,
added or dropped, a config key added) and fails if a file that should have caught one did not.

    python3 scripts/surface.py --check [--bin build/bin/iapverify | --description FILE]
    python3 scripts/surface.py --write

(`make cli-test` runs --check after `make all`; docs/contributing.md says how to add a field.)
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCHEMA = DOCS / "schema"
OVERLAY = SCHEMA / "overlay"
PY = ROOT / "bindings" / "python" / "src" / "iapverify"
GO = ROOT / "bindings" / "go"
LUA = ROOT / "bindings" / "lua" / "lib" / "resty" / "iapverify.lua"
HEADER = ROOT / "Include" / "iapverify.h"

TABLE_DOCS = ("docs/results.md", "docs/options.md", "docs/config.md", "docs/entitlements.md")

problems: list[str] = []
notes: list[str] = []


def problem(where: str, what: str) -> None:
    problems.append(f"{where}: {what}")


# -- the description -----------------------------------------------------------------------------

class Description:
    def __init__(self, data: dict[str, Any]):
        self.data = data
        self.objects: dict[str, dict[str, Any]] = data.get("objects", {})
        self.documents: list[dict[str, Any]] = data.get("documents", [])
        options = data.get("options", {})
        self.entry_points: dict[str, list[str]] = options.get("entry_points", {})
        self.option_keys: dict[str, dict[str, Any]] = {k["name"]: k for k in options.get("keys", [])}
        self.config_keys: list[dict[str, Any]] = data.get("config", {}).get("keys", [])

    def members(self, obj: str) -> list[dict[str, Any]]:
        return self.objects[obj]["members"]

    def member_names(self, obj: str) -> list[str]:
        return [m["name"] for m in self.members(obj)]


def load_description(binary: str, path: Optional[str]) -> Description:
    if path:
        return Description(json.loads(Path(path).read_text()))
    out = subprocess.run([binary, "fields", "--json"], check=True, capture_output=True, text=True).stdout
    return Description(json.loads(out))


# -- docs tables -----------------------------------------------------------------------------------

ITEM_WORDS = {"string": "strings", "integer": "integers", "boolean": "booleans", "json": "any JSON values", "ms": "integers (Unix ms)"}


def code(v: Any) -> str:
    return f"`{v}`"


def words(values: list[Any], last: str = "or") -> str:
    quoted = [code(v) for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" {last} " + quoted[-1]


# Where each object's table is (file, anchor of the heading above it), for links in the tables;
# filled by docs_tables before it renders.
TABLE_OF: dict[str, tuple[str, str]] = {}
CURRENT_DOC = [""]


def object_link(name: Optional[str]) -> str:
    if name in TABLE_OF:
        rel, anchor = TABLE_OF[name]
        target = ("" if rel == CURRENT_DOC[0] else Path(rel).name) + (f"#{anchor}" if anchor else "")
        return f"[`{name}`]({target})"
    return f"`{name}`"


def anchor_of(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lstrip("#").strip().lower())
    return text.replace(" ", "-")


def type_text(m: dict[str, Any]) -> str:
    """A member's (or a key's) type in one cell: `a`, `b` or null; array of strings; ..."""
    t = m["type"]
    values = m.get("values")
    if t == "object":
        text = f"{object_link(m.get('object'))} object"
    elif t == "array":
        item = m.get("items", "json")
        text = f"array of {object_link(m.get('object'))} objects" if item == "object" else f"array of {ITEM_WORDS.get(item, item)}"
        if values:
            text += ": " + words(values)
    elif t == "map":
        item = m.get("items", "json")
        text = f"object: key → {object_link(m.get('object'))} object" if item == "object" else f"object: key → {item}"
    elif t == "ms":
        text = "integer (Unix ms)"
    elif t == "json":
        text = "any JSON"
    else:
        text = t
    if values and t not in ("array",):
        if m.get("open"):
            text = f"{t}: {', '.join(code(v) for v in values)} or another, as given"
        elif m.get("nullable"):
            return words(values + ["null"]).replace("`null`", "null") + presence_text(m)
        else:
            text = words(values)
    if m.get("nullable") and t != "json":
        text += " or null"
    return text + presence_text(m)


def presence_text(m: dict[str, Any]) -> str:
    return ", **only present** when set" if m.get("presence") == "when_present" else ""


def meaning_text(text: str) -> str:
    """A meaning in a table cell: docs/NAME.md#anchor becomes a link."""
    return re.sub(r"\bdocs/([\w-]+\.md)(#[\w-]+)?", lambda m: f"[{m.group(1)}]({m.group(1)}{m.group(2) or ''})", cell(text))


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def default_text(k: dict[str, Any]) -> str:
    return "" if k.get("default") is None else code(json.dumps(k["default"], separators=(", ", ": ")))


def render_table(desc: Description, kind: str, arg: str, where: str) -> Optional[list[tuple[str, str]]]:
    """The table's rows as (name, line), header first with name ''; None when the description lacks it."""
    rows: list[tuple[str, str]] = []
    if kind == "object":
        members = object_members(desc, arg)
        if members is None:
            return None
        attributes = "attributes" in arg.split()
        attribute_of = {f["name"]: f.get("attribute") for f in desc.data.get("records", {}).get("receipt_in_app", [])}
        with_default = any("default" in m for m in members)
        head = "| member |" + (" receipt attribute |" if attributes else "") + " type |" + (" default |" if with_default else "") + " meaning |"
        rows.append(("", head + "\n" + "|---" * head.count(" |") + "|"))
        for m in members:
            line = f"| `{m['name']}` |"
            if attributes:
                a = m.get("receipt_attribute", attribute_of.get(m["name"]))
                line += f" {a if a is not None else ''} |"
            line += f" {cell(type_text(m))} |"
            if with_default:
                line += f" {cell(default_text(m))} |"
            rows.append((m["name"], line + f" {meaning_text(m.get('meaning', ''))} |"))
    elif kind == "options":
        if not desc.option_keys:
            return None
        keys = list(desc.option_keys.values())
        if arg:
            if arg not in desc.entry_points:
                return None
            keys = [desc.option_keys[k] for k in desc.entry_points[arg] if k in desc.option_keys]
            rows.append(("", "| key | type | default | meaning |\n|---|---|---|---|"))
            for k in keys:
                rows.append((k["name"], f"| `{k['name']}` | {cell(type_text(k))} | {cell(default_text(k))} | {meaning_text(k.get('meaning', ''))} |"))
        else:
            rows.append(("", "| key | type | read by | default | meaning |\n|---|---|---|---|---|"))
            for k in keys:
                read_by = ", ".join(code(e) for e in k.get("read_by", []))
                rows.append((k["name"], f"| `{k['name']}` | {cell(type_text(k))} | {read_by} | {cell(default_text(k))} | {meaning_text(k.get('meaning', ''))} |"))
    elif kind == "config":
        if not desc.config_keys:
            return None
        rows.append(("", "| key | type | default | meaning |\n|---|---|---|---|"))
        for k in desc.config_keys:
            rows.append((k["name"], f"| `{k['name']}` | {cell(type_text(k))} | {cell(default_text(k))} | {meaning_text(k.get('meaning', ''))} |"))
    else:
        problem(where, f"unknown marker <!-- surface:{kind} {arg} -->: use surface:object NAME, surface:options [ENTRY_POINT] or surface:config")
        return None
    return rows


MARKER = re.compile(r"<!-- surface:(\w+)((?: [\w.-]+)*) -->\n(.*?)<!-- /surface -->", re.S)


def object_members(desc: Description, arg: str) -> Optional[list[dict[str, Any]]]:
    """The members an object marker shows: `A B` is A's members then B's; `-C` leaves out C's
    members (a document's common members, shown once elsewhere); `attributes` adds the receipt
    attribute column."""
    members: list[dict[str, Any]] = []
    leave: set[str] = set()
    for word in arg.split():
        if word == "attributes":
            continue
        name = word.lstrip("-")
        if name not in desc.objects:
            return None
        if word.startswith("-"):
            leave |= set(desc.member_names(name))
        else:
            members += desc.members(name)
    return [m for m in members if m["name"] not in leave]


def table_name(line: str) -> str:
    m = re.match(r"\|\s*`([^`]+)`", line)
    return m.group(1) if m else ""


def docs_tables(desc: Description, write: bool) -> set[str]:
    """Regenerates or checks every marked table; returns the objects some table shows."""
    shown: set[str] = set()
    TABLE_OF.clear()
    for rel in TABLE_DOCS:
        text = (ROOT / rel).read_text()
        for m in MARKER.finditer(text):
            if m.group(1) != "object":
                continue
            headings = re.findall(r"^#{1,6} .*$", text[:m.start()], re.M)
            for word in (m.group(2) or "").split():
                if not word.startswith("-") and word != "attributes":
                    TABLE_OF.setdefault(word, (rel, anchor_of(headings[-1]) if headings else ""))
    for rel in TABLE_DOCS:
        path = ROOT / rel
        CURRENT_DOC[0] = rel
        text = path.read_text()
        out: list[str] = []
        pos = 0
        for m in MARKER.finditer(text):
            kind, arg, body = m.group(1), (m.group(2) or "").strip(), m.group(3)
            line_no = text.count("\n", 0, m.start()) + 1
            where = f"{rel}:{line_no} (<!-- surface:{kind}{' ' + arg if arg else ''} -->)"
            rows = render_table(desc, kind, arg, where)
            out.append(text[pos:m.start()])
            pos = m.end()
            if rows is None:
                if kind in ("object", "options", "config") and (kind != "object" or desc.objects):
                    if kind == "object":
                        problem(where, f"the description has no object {arg!r}: rename the marker to one of its objects, or remove the table")
                    else:
                        problem("iapverify fields --json", f"{where}: the description has no {kind} section yet")
                out.append(m.group(0))
                continue
            if kind == "object":
                shown |= {w for w in arg.split() if not w.startswith("-")}
            new = "\n".join(line for _, line in rows) + "\n"
            out.append(f"<!-- surface:{kind}{' ' + arg if arg else ''} -->\n{new}<!-- /surface -->")
            if new != body and not write:
                have = {table_name(l): l for l in body.splitlines() if table_name(l)}
                want = {name: line for name, line in rows if name}
                for name in want:
                    if name not in have:
                        problem(where, f"the table lacks `{name}`, which the description has")
                    elif have[name] != want[name]:
                        problem(where, f"the row of `{name}` differs from the description:\n      has:  {have[name]}\n      want: {want[name]}")
                for name in have:
                    if name not in want:
                        problem(where, f"the table has `{name}`, which the description lacks (the core is right: remove the row, or add the member in Sources/)")
                if [n for n in have if n in want] != [n for n in want if n in have]:
                    problem(where, "the table's rows are not the description's, in its order")
        out.append(text[pos:])
        new_text = "".join(out)
        if write and new_text != text:
            path.write_text(new_text)
            print(f"surface: wrote {rel}")
    return shown


# -- JSON Schemas ----------------------------------------------------------------------------------

GENERATED_HEAD = ("Generated by scripts/surface.py from `iapverify fields --json` and docs/schema/overlay/{name}: "
                  "do not edit; change the overlay (hand rules) or the description (Sources/) and run "
                  "`python3 scripts/surface.py --write`.")

JSON_TYPES = {"string": "string", "integer": "integer", "ms": "integer", "boolean": "boolean"}
# The keywords a member's generated schema may hold: an overlay cannot set them.
GENERATED_KEYS = {"type", "enum", "$ref", "oneOf", "items", "additionalProperties", "properties", "required", "default"}
# Schemas the description names but that stay hand-written, and why.
HAND_SCHEMAS = {"entitlement-input.schema.json": "the input is read leniently (ids as numbers, dates as text, "
                "\"1\"/\"true\" booleans): its schema says what is accepted, not what results write"}


def value_list(m: dict[str, Any], item_type: str) -> list[Any]:
    vals: list[Any] = list(m["values"])
    if item_type in ("integer", "ms"):
        vals = [int(v) for v in vals]
    return vals


def element_schema(item: str, obj: Optional[str], m: dict[str, Any], ref: Callable[[str], str]) -> dict[str, Any]:
    if item == "object":
        return {"$ref": ref(obj or "")}
    if item == "json":
        return {}
    s: dict[str, Any] = {"type": JSON_TYPES[item]}
    if m.get("values") and not m.get("open"):
        s = {"enum": value_list(m, item)}
    return s


def member_schema(m: dict[str, Any], ref: Callable[[str], str]) -> dict[str, Any]:
    t = m["type"]
    nullable = bool(m.get("nullable"))
    if t == "json":
        return {}
    if t == "object":
        r = {"$ref": ref(m["object"])}
        return {"oneOf": [{"type": "null"}, r]} if nullable else r
    if t in ("array", "map"):
        item = element_schema(m.get("items", "json"), m.get("object"), m, ref)
        s: dict[str, Any] = {"type": ["array" if t == "array" else "object", "null"] if nullable else ("array" if t == "array" else "object")}
        s["items" if t == "array" else "additionalProperties"] = item
        return s
    if m.get("values") and not m.get("open"):
        vals = value_list(m, t)
        return {"enum": vals + [None] if nullable else vals}
    return {"type": [JSON_TYPES[t], "null"] if nullable else JSON_TYPES[t]}


def find_markers(node: Any, pointer: str, out: list[tuple[str, str, Any]]) -> None:
    if isinstance(node, dict):
        c = node.get("$comment", "")
        if isinstance(c, str) and c.startswith("surface:") and c != "surface:hand":
            out.append((c, pointer, node))
        for k, v in node.items():
            find_markers(v, f"{pointer}/{k.replace('~', '~0').replace('/', '~1')}", out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            find_markers(v, f"{pointer}/{i}", out)


def fill_object(node: dict[str, Any], members: list[dict[str, Any]], where: str, ref: Callable[[str], str]) -> None:
    """Fills a marked place with an object's (or a key list's) schema, merged with the overlay's extras.

    A member is required when it is always written and has no default (an input key with a default
    may be left out). An overlay may narrow a member's enum to a subset of the description's values
    (a document that gives only some verdicts); a member whose overlay property says
    {"$comment": "surface:hand"} keeps the overlay's schema as it is (named in the output)."""
    extras = node.get("properties", {})
    for k in ("type", "required", "additionalProperties"):
        if k in node:
            problem(where, f"the overlay sets {k!r} at a surface marker: the description gives it; remove it from the overlay")
    names = [m["name"] for m in members]
    for name in extras:
        if name not in names:
            problem(where, f"the overlay names member {name!r}, which the description lacks: remove it from the overlay (or add the member in Sources/)")
    props: dict[str, Any] = {}
    for m in members:
        gen = member_schema(m, ref)
        extra = dict(extras.get(m["name"], {}))
        if extra.get("$comment") == "surface:hand":
            props[m["name"]] = {**extra, "$comment": "hand-written in the overlay (surface:hand): not generated"}
            continue
        if "enum" in extra and "enum" in gen:
            if not set(map(json.dumps, extra["enum"])) <= set(map(json.dumps, gen["enum"])):
                problem(where, f"the overlay's enum of member {m['name']!r} has "
                               f"{sorted(set(map(json.dumps, extra['enum'])) - set(map(json.dumps, gen['enum'])))}, "
                               "which the description's values lack: remove them from the overlay")
            gen["enum"] = extra.pop("enum")
        for k in extra:
            if k in gen or k in GENERATED_KEYS:
                problem(where, f"the overlay sets {k!r} of member {m['name']!r}, which the description gives: remove it")
        merged = {**gen, **{k: v for k, v in extra.items() if k not in gen}}
        if m.get("meaning") and "description" not in merged:
            merged["description"] = m["meaning"]
        if m.get("default") is not None and "default" not in merged:
            merged["default"] = m["default"]
        props[m["name"]] = merged
    comment = node.pop("$comment")
    rest = {k: v for k, v in node.items() if k != "properties"}
    node.clear()
    node["$comment"] = comment
    node["type"] = "object"
    node["additionalProperties"] = False
    required = [m["name"] for m in members if m.get("presence", "always") == "always" and "default" not in m]
    if required:
        node["required"] = required
    node["properties"] = props
    node.update(rest)


def schema_files(desc: Description) -> dict[str, dict[str, Any]]:
    """Every generated schema, by file name: the overlays with their markers filled in."""
    overlays = {p.name: json.loads(p.read_text()) for p in sorted(OVERLAY.glob("*.schema.json"))}
    if not overlays:
        return {}
    # Where each object is defined: the first marker naming it (a $defs entry), else common's $defs.
    places: dict[str, str] = {}
    marks: list[tuple[str, str, str, Any]] = []
    for name, doc in overlays.items():
        found: list[tuple[str, str, Any]] = []
        find_markers(doc, "", found)
        for c, pointer, node in found:
            marks.append((name, c, pointer, node))
            kind, _, arg = c.partition(" ")
            if kind == "surface:object" and "/$defs/" in pointer and arg not in places:
                places[arg] = f"{name}#{pointer}"
    common = overlays.get("common.schema.json")
    for doc in desc.documents:
        if doc.get("schema") in HAND_SCHEMAS or not doc.get("schema"):
            continue
        if doc.get("schema") not in overlays:
            problem(f"docs/schema/overlay/{doc.get('schema')}", f"missing: the description's document {doc['name']!r} "
                    "names this schema; create the overlay with {\"$comment\": \"surface:object " + doc["object"] + "\"} at its root")
    used: set[str] = set()

    def want(obj: str) -> None:
        if obj in used:
            return
        used.add(obj)
        for m in desc.members(obj) if obj in desc.objects else []:
            if m.get("object"):
                want(m["object"])
    for doc in desc.documents:
        if doc.get("schema") and doc["schema"] not in HAND_SCHEMAS:
            want(doc["object"])
    for k in list(desc.option_keys.values()) + desc.config_keys:
        if k.get("object"):
            want(k["object"])
    for obj in sorted(used):
        if obj not in places and common is not None and obj in desc.objects:
            defs = common.setdefault("$defs", {})
            if obj not in defs:
                defs[obj] = {"$comment": f"surface:object {obj}"}
                marks.append(("common.schema.json", f"surface:object {obj}", f"/$defs/{obj}", defs[obj]))
                places[obj] = f"common.schema.json#/$defs/{obj}"

    def ref_from(file: str) -> Callable[[str], str]:
        def ref(obj: str) -> str:
            if obj not in places:
                problem(f"docs/schema/overlay/{file}", f"object {obj!r} has no place: add a $defs entry "
                        f"{{\"$comment\": \"surface:object {obj}\"}} to docs/schema/overlay/common.schema.json")
                return "#"
            target_file, pointer = places[obj].split("#", 1)
            return f"#{pointer}" if target_file == file else places[obj]
        return ref
    for file, c, pointer, node in marks:
        kind, _, arg = c.partition(" ")
        where = f"docs/schema/overlay/{file}#{pointer or '/'}"
        if kind == "surface:object":
            if arg not in desc.objects:
                problem(where, f"the description has no object {arg!r}: rename the marker or remove it")
                continue
            fill_object(node, desc.members(arg), where, ref_from(file))
        elif kind == "surface:options":
            if arg not in desc.entry_points:
                problem(where, f"the description has no entry point {arg!r}")
                continue
            keys = [desc.option_keys[k] for k in desc.entry_points[arg] if k in desc.option_keys]
            fill_object(node, keys, where, ref_from(file))
        else:
            problem(where, f"unknown marker {c!r}")
    out = {}
    for name, doc in overlays.items():
        head = {k: doc[k] for k in ("$schema", "$id") if k in doc}
        head["$comment"] = GENERATED_HEAD.format(name=name)
        out[name] = {**head, **{k: v for k, v in doc.items() if k not in head}}
    return out


def strip_comments(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_comments(v) for k, v in node.items() if not (k == "$comment" and str(v).startswith("surface:"))}
    if isinstance(node, list):
        return [strip_comments(v) for v in node]
    return node


def schemas(desc: Description, write: bool) -> None:
    if not desc.objects:
        problem("iapverify fields --json", "docs/schema: the description has no objects yet")
        return
    files = schema_files(desc)
    if not files:
        notes.append("docs/schema/overlay: no overlays yet; schemas not generated")
        return
    for name, doc in files.items():
        text = json.dumps(strip_comments(doc), indent=2, ensure_ascii=False) + "\n"
        path = SCHEMA / name
        old = path.read_text() if path.exists() else ""
        if old == text:
            continue
        if write:
            path.write_text(text)
            print(f"surface: wrote docs/schema/{name}")
            continue
        where = f"docs/schema/{name}"
        try:
            have = json.loads(old)
        except ValueError:
            problem(where, "missing or not JSON: run python3 scripts/surface.py --write")
            continue
        diffs: list[str] = []
        json_diff(have, json.loads(text), "", diffs)
        problem(where, f"stale: generated from the description and docs/schema/overlay/{name}, never edited by hand; "
                       "run python3 scripts/surface.py --write. It differs at:\n      " + "\n      ".join(diffs[:12])
                + (f"\n      ... and {len(diffs) - 12} more" if len(diffs) > 12 else ""))


def json_diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in b:
            if k not in a:
                out.append(f"{path}/{k}: missing")
            else:
                json_diff(a[k], b[k], f"{path}/{k}", out)
        for k in a:
            if k not in b:
                out.append(f"{path}/{k}: not in the description or the overlay")
    elif isinstance(a, list) and isinstance(b, list) and all(isinstance(x, str) for x in a + b) and a != b:
        gone, new = [x for x in a if x not in b], [x for x in b if x not in a]
        out.append(f"{path}: " + "; ".join(filter(None, [f"has {gone} the description lacks" if gone else "",
                                                         f"lacks {new}" if new else "",
                                                         "" if gone or new else "the order differs"])))
    elif a != b:
        out.append(f"{path or '/'}: {json.dumps(a)[:80]} where the description gives {json.dumps(b)[:80]}")


# -- Python ----------------------------------------------------------------------------------------

# Each binding class and the described object it shows. `not_members`: attributes that are not JSON
# members (computed, the raw document); `omits`: members the class leaves to `raw`, with why.
PY_CLASSES: list[dict[str, Any]] = [
    # A receipt's in_app record and every other transaction; transaction_id and product_id are
    # typed str: None only in a receipt record that lacks them (the docstring says so).
    {"file": "records.py", "class": "Transaction", "object": ["transaction", "receipt_in_app"], "not_members": {"extra"},
     "null_as_empty": {"transaction_id", "product_id"}},
    {"file": "records.py", "class": "RenewalInfo", "object": "renewal_info", "not_members": {"extra"},
     "null_as_empty": {"original_transaction_id"}},
    {"file": "records.py", "class": "Notification", "object": "notification", "not_members": {"extra"}},
    {"file": "records.py", "class": "SubscriptionStatus", "object": "status_check", "not_members": {"extra"}},
    {"file": "results.py", "class": "Entitlement", "object": "entitlement"},
    {"file": "results.py", "class": "Evidence", "object": "evidence"},
    {"file": "results.py", "class": "BillingEvidence", "object": "billing"},
    {"file": "results.py", "class": "Purchase", "object": "purchase"},
    {"file": "results.py", "class": "Delivery", "object": "delivery"},
    {"file": "results.py", "class": "DeliveryItem", "object": "delivery_item"},
    {"file": "results.py", "class": "OrderMatch", "object": "order_match"},
    {"file": "results.py", "class": "CatalogConflict", "object": "catalog_conflict"},
    {"file": "results.py", "class": "Certificate", "object": "certificate"},
    {"file": "results.py", "class": "RevocationInfo", "object": "revocation"},
    {"file": "results.py", "class": "Revocation", "object": "revocation", "not_members": {"request_der", "raw"}},
    {"file": "results.py", "class": "ReceiptSigning", "object": "signing"},
    {"file": "results.py", "class": "UnknownAttribute", "object": "unknown_attribute"},
    # A receipt result's receipt and a response's, in one TypedDict; a receipt refused before its
    # payload was decoded holds only its total part (docs/results.md#the-receipt-member).
    {"file": "results.py", "class": "Receipt", "object": ["receipt", "response_receipt"], "partial_ok": True},
    {"file": "results.py", "class": "EntitlementItem", "object": "entitlement_item"},
    # The result classes: `valid`, `raw` and `json` are the binding's own (the verdict check, the
    # decoded and the raw document); Result is what receipt and entitlements results give.
    {"file": "results.py", "class": "Result", "object": ["receipt_result", "entitlements_result"],
     "not_members": {"valid", "raw", "json"}},
    # The subclasses inherit `receipt`, `revocation` and `checks`, None or empty where their
    # document has no such member (docs/python.md).
    {"file": "results.py", "class": "ResponseResult", "object": "response_result",
     "not_members": {"valid", "raw", "json", "revocation", "checks"}},
    {"file": "results.py", "class": "JWSResult", "object": "jws_result", "not_members": {"valid", "raw", "json", "receipt", "checks"}},
    {"file": "results.py", "class": "APIResult", "object": "api_response_result",
     "not_members": {"valid", "raw", "json", "receipt", "checks"}},
    {"file": "results.py", "class": "RealtimeRequest", "object": "realtime_request"},
]


def py_classes(module: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in module.body if isinstance(n, ast.ClassDef)}


def py_fields(classes: dict[str, ast.ClassDef], name: str) -> dict[str, tuple[str, int, bool]]:
    """A class's annotated fields (its bases' in this module first): name -> (annotation, line,
    whether it may be absent: a field of a TypedDict with total=False)."""
    cls = classes[name]
    partial = any(k.arg == "total" and isinstance(k.value, ast.Constant) and k.value.value is False for k in cls.keywords)
    out: dict[str, tuple[str, int, bool]] = {}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            out.update(py_fields(classes, base.id))
    for n in cls.body:
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and not n.target.id.startswith("_"):
            if "ClassVar" in ast.unparse(n.annotation):
                continue
            out[n.target.id] = (ast.unparse(n.annotation), n.lineno, partial)
    return out


def py_aliases(cls: ast.ClassDef) -> dict[str, tuple[str, str, int]]:
    """The read-only camelCase properties: alias -> (the field it returns, its annotation, line)."""
    out = {}
    for n in cls.body:
        if isinstance(n, ast.FunctionDef) and any(isinstance(d, ast.Name) and d.id == "property" for d in n.decorator_list):
            if not re.match(r"^[a-z]+[A-Z]", n.name):
                continue
            ret = [s for s in n.body if isinstance(s, ast.Return)]
            if ret and isinstance(ret[0].value, ast.Attribute) and isinstance(ret[0].value.value, ast.Name) and ret[0].value.value.id == "self":
                out[n.name] = (ret[0].value.attr, ast.unparse(n.returns) if n.returns else "", n.lineno)
            else:
                out[n.name] = ("", ast.unparse(n.returns) if n.returns else "", n.lineno)
    return out


PY_TYPE = {"string": ("str",), "integer": ("int",), "ms": ("int",), "boolean": ("bool",),
           "array": ("list", "tuple", "Sequence"), "map": ("dict", "Mapping"), "object": None, "json": None}


def py_type_ok(m: dict[str, Any], ann: str, partial: bool, partial_ok: bool = False) -> Optional[str]:
    optional = "Optional[" in ann or "None" in ann
    if m.get("presence") == "when_present" and partial and not m.get("nullable"):
        optional = True
    if m.get("presence", "always") == "always" and partial and not partial_ok:
        return "may be absent (a total=False TypedDict), but the member is always written: move it to the class's total part"
    if (m.get("nullable") or m.get("presence") == "when_present") and not optional and m["type"] != "json":
        return f"is {ann}, but the member may be {'null' if m.get('nullable') else 'absent'}: make it Optional[...]"
    want = PY_TYPE[m["type"]]
    if want is not None and not any(re.search(rf"\b{w}\b", ann) for w in want):
        return f"is {ann}, the description says {m['type']}"
    return None


def check_python(desc: Description) -> None:
    modules = {f: ast.parse((PY / f).read_text(), filename=f) for f in ("records.py", "results.py")}
    for spec in PY_CLASSES:
        where = f"bindings/python/src/iapverify/{spec['file']}"
        objs = spec["object"] if isinstance(spec["object"], list) else [spec["object"]]
        obj = " + ".join(objs)
        if any(o not in desc.objects for o in objs):
            problem(where, f"{spec['class']}: the description has no object {obj!r}: fix the object's name in PY_CLASSES (scripts/surface.py)")
            continue
        classes = py_classes(modules[spec["file"]])
        if spec["class"] not in classes:
            problem(where, f"class {spec['class']} (the description's {obj!r}) is missing")
            continue
        fields = py_fields(classes, spec["class"])
        skip = spec.get("not_members", set())
        members = {}
        for o in objs:
            for m in desc.members(o):
                members.setdefault(m["name"], m if o == objs[0] else {**m, "presence": "when_present"})
        for name in spec.get("null_as_empty", ()):
            if name in members:
                members[name] = {**members[name], "nullable": False}
        for name, m in members.items():
            if name not in fields and name not in spec.get("omits", {}):
                problem(where, f"{spec['class']} lacks `{name}` ({type_text(m)}), which the description's {obj!r} has: add the field")
        for name, (ann, line, partial) in fields.items():
            if name in skip:
                continue
            if name not in members:
                problem(f"{where}:{line}", f"{spec['class']}.{name} is not a member of the description's {obj!r}: remove or rename it")
                continue
            bad = py_type_ok(members[name], ann, partial, bool(spec.get("partial_ok")))
            if bad:
                problem(f"{where}:{line}", f"{spec['class']}.{name} {bad}")
        for alias, (target, ann, line) in py_aliases(classes[spec["class"]]).items():
            if target not in fields:
                problem(f"{where}:{line}", f"{spec['class']}.{alias}: the camelCase alias returns {target or 'something'}, which is no field of the class")
            elif ann and ann != fields[target][0]:
                problem(f"{where}:{line}", f"{spec['class']}.{alias} is typed {ann}, its field {target} {fields[target][0]}: make them the same")
            elif target in members and members[target].get("apple_name") and members[target]["apple_name"] != alias:
                problem(f"{where}:{line}", f"{spec['class']}.{alias}: Apple's name for `{target}` is {members[target]['apple_name']}")
        for name, m in members.items():
            apple = m.get("apple_name")
            if apple and apple != name and apple not in py_aliases(classes[spec["class"]]):
                problem(where, f"{spec['class']} lacks the camelCase alias {apple} of `{name}`")


def check_python_options(desc: Description) -> None:
    """Every keyword argument of a Verifier method that is not the input, now_ms or options is an
    option key of the method's entry point (iapv_<method>): the dict ``options`` carries every key."""
    if not desc.entry_points:
        return
    where = "bindings/python/src/iapverify/__init__.py"
    tree = ast.parse((PY / "__init__.py").read_text())
    verifier = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Verifier"), None)
    if verifier is None:
        problem(where, "class Verifier is missing")
        return
    methods = {n.name: n for n in verifier.body if isinstance(n, ast.FunctionDef)}
    for ep in desc.entry_points:
        method = methods.get(ep.removeprefix("iapv_"))
        if method is None:
            problem(where, f"Verifier has no method {ep.removeprefix('iapv_')} for {ep}")
            continue
        if not any(a.arg == "options" for a in method.args.kwonlyargs):
            problem(f"{where}:{method.lineno}", f"Verifier.{method.name} takes no options= (every key of {ep} must reach the library)")
        for a in method.args.kwonlyargs:
            if a.arg not in ("now_ms", "options") and a.arg not in desc.entry_points[ep]:
                problem(f"{where}:{method.lineno}", f"Verifier.{method.name}({a.arg}=...) is no option key of {ep}: rename it")


# -- Go --------------------------------------------------------------------------------------------

GO_STRUCTS: list[dict[str, Any]] = [
    # A receipt's in_app record and every other transaction in one struct; TransactionID and
    # ProductID are "" (not nil) in the receipt record that lacks them (documented on the type).
    {"file": "serverapi.go", "struct": "Transaction", "object": ["transaction", "receipt_in_app"],
     "null_as_empty": {"transaction_id", "product_id"}},
    {"file": "serverapi.go", "struct": "RenewalInfo", "object": "renewal_info", "null_as_empty": {"original_transaction_id"}},
    {"file": "serverapi.go", "struct": "TransactionCommitment", "object": "transaction_commitment"},
    {"file": "serverapi.go", "struct": "RenewalCommitment", "object": "renewal_commitment"},
    {"file": "serverapi.go", "struct": "UnknownAttribute", "object": "unknown_attribute"},
    {"file": "result.go", "struct": "JWSNotification", "object": "notification"},
    {"file": "result.go", "struct": "JWSRealtimeRequest", "object": "realtime_request"},
    {"file": "result.go", "struct": "ExternalPurchaseToken", "object": "external_purchase_token"},
    {"file": "result.go", "struct": "EntitlementItem", "object": "entitlement_item"},
    {"file": "result.go", "struct": "Billing", "object": "billing"},
    {"file": "result.go", "struct": "Revocation", "object": "revocation"},
    {"file": "serverapi.go", "struct": "APIResult", "object": "api_response_result"},
    # Result is every other call's answer: the members of all four documents, each typed.
    {"file": "result.go", "struct": "Result", "object": ["receipt_result", "response_result", "entitlements_result", "jws_result"],
     "null_as_empty": {"kind"}},
    {"file": "result.go", "struct": "Certificate", "object": "certificate"},
    {"file": "serverapi.go", "struct": "APINotification", "object": "api_notification"},
    {"file": "serverapi.go", "struct": "SubscriptionStatus", "object": "status_check"},
    {"file": "serverapi.go", "struct": "APINextPage", "object": "next_page"},
    {"file": "result.go", "struct": "Entitlement", "object": "entitlement"},
    {"file": "result.go", "struct": "Evidence", "object": "evidence"},
    {"file": "result.go", "struct": "Purchase", "object": "purchase"},
    {"file": "result.go", "struct": "Delivery", "object": "delivery"},
    {"file": "result.go", "struct": "DeliveryItem", "object": "delivery_item"},
    {"file": "result.go", "struct": "OrderMatch", "object": "order_match"},
    {"file": "result.go", "struct": "CatalogConflict", "object": "catalog_conflict"},
]
# The Go option structs and the entry points whose keys they carry.
GO_OPTIONS = [
    ("iapverify.go", "Options", ["iapv_verify_receipt", "iapv_interpret_response", "iapv_compute_entitlements", "iapv_verify_jws"]),
    ("serverapi.go", "APIResponseOptions", ["iapv_interpret_api_response"]),
]


def go_marshal_keys(source: str, struct: str) -> Optional[dict[str, tuple[str, bool, str, int]]]:
    """The keys an untagged options struct's marshal() writes: m["key"] = o.Field."""
    m = re.search(r"^func \(o " + struct + r"\) marshal\(\).*?^\}", source, re.S | re.M)
    if m is None:
        return None
    fields = re.search(r"^type " + struct + r" struct \{\n(.*?)^\}", source, re.S | re.M)
    types = dict(re.findall(r"^\s*(\w+)\s+(\S+)", fields.group(1), re.M)) if fields else {}
    start = source.count("\n", 0, m.start()) + 1
    out = {}
    for i, line in enumerate(m.group(0).splitlines()):
        k = re.search(r'm\["(\w+)"\] = o\.(\w+)', line)
        if k:
            out[k.group(1)] = (k.group(2), True, types.get(k.group(2), ""), start + i)
    return out


def go_struct(source: str, name: str) -> Optional[dict[str, tuple[str, bool, str, int]]]:
    """A struct's tagged fields: JSON name -> (Go field, omitempty, Go type, line offset)."""
    m = re.search(r"^type " + name + r" struct \{\n(.*?)^\}", source, re.S | re.M)
    if m is None:
        return None
    start = source.count("\n", 0, m.start(1)) + 1
    out = {}
    for i, line in enumerate(m.group(1).splitlines()):
        f = re.match(r'\s*(\w+)\s+(\S+)\s+`json:"([^"]*)"`', line)
        if f:
            key, *opts = f.group(3).split(",")
            if key != "-":
                out[key] = (f.group(1), "omitempty" in opts, f.group(2), start + i)
    return out


GO_SCALAR = {"string": None, "integer": {"int64", "int", "int32"}, "ms": {"int64"}, "boolean": {"bool"}}


def go_type_ok(m: dict[str, Any], gotype: str) -> Optional[str]:
    base = gotype.lstrip("*")
    t = m["type"]
    nilable = gotype.startswith(("*", "[]", "map[")) or gotype in ("json.RawMessage", "interface{}", "any")
    if m.get("nullable") and not nilable:
        return f"is {gotype}, but the member may be null: make it a pointer"
    if t in ("integer", "ms", "boolean") and base not in GO_SCALAR[t] and gotype != "json.RawMessage":
        return f"is {gotype}, the description says {t}"
    if t == "string" and (base in ("int64", "int", "bool") or base.startswith(("[]", "map["))) and gotype != "[]byte":
        return f"is {gotype}, the description says string"
    if t == "array" and not gotype.startswith("[]") and gotype != "json.RawMessage":
        return f"is {gotype}, the description says array"
    if t == "map" and not gotype.startswith("map[") and gotype != "json.RawMessage":
        return f"is {gotype}, the description says map"
    return None


def check_go(desc: Description) -> None:
    for spec in GO_STRUCTS:
        where = f"bindings/go/{spec['file']}"
        objs = spec["object"] if isinstance(spec["object"], list) else [spec["object"]]
        obj = " + ".join(objs)
        if any(o not in desc.objects for o in objs):
            problem(where, f"{spec['struct']}: the description has no object {obj!r}: fix the object's name in GO_STRUCTS (scripts/surface.py)")
            continue
        fields = go_struct((GO / spec["file"]).read_text(), spec["struct"])
        if fields is None:
            problem(where, f"type {spec['struct']} struct (the description's {obj!r}) is missing")
            continue
        members = {}
        for o in reversed(objs):
            for m in desc.members(o):
                # A member of the second object only is written only in its records.
                members[m["name"]] = m if o == objs[0] or m["name"] not in members else members[m["name"]]
        for o in objs[1:]:
            for m in desc.members(o):
                if m["name"] not in {x["name"] for x in desc.members(objs[0])}:
                    members[m["name"]] = {**m, "presence": "when_present"}
        for name in spec.get("null_as_empty", ()):
            if name in members:
                members[name] = {**members[name], "nullable": False}
        for name, m in members.items():
            if name not in fields:
                problem(where, f"{spec['struct']} lacks a field tagged json:\"{name}\" ({type_text(m)}), which the description's {obj!r} has")
        for name, (field, omit, gotype, line) in fields.items():
            if name not in members:
                problem(f"{where}:{line}", f"{spec['struct']}.{field} (json:\"{name}\") is not a member of the description's {obj!r}: remove or rename it")
                continue
            m = members[name]
            bad = go_type_ok(m, gotype)
            if bad:
                problem(f"{where}:{line}", f"{spec['struct']}.{field} (json:\"{name}\") {bad}")
            if omit != (m.get("presence") == "when_present"):
                problem(f"{where}:{line}", f"{spec['struct']}.{field} (json:\"{name}\"): " +
                        ("omitempty, but the member is always written" if omit else "no omitempty, but the member is written only when present"))
    if not desc.option_keys:
        problem("iapverify fields --json", "bindings/go: the description has no options yet")
        return
    for file, struct, entries in GO_OPTIONS:
        where = f"bindings/go/{file}"
        source = (GO / file).read_text()
        fields = go_struct(source, struct) or go_marshal_keys(source, struct)
        if not fields:
            problem(where, f"type {struct} struct (json tags, or a marshal() that writes m[\"key\"] = o.Field) is missing")
            continue
        keys = {k for e in entries for k in desc.entry_points.get(e, [])}
        for k in sorted(keys - set(fields)):
            problem(where, f"{struct} lacks a field tagged json:\"{k},omitempty\" ({type_text(desc.option_keys[k])}), "
                           f"an option key of {', '.join(e for e in entries if k in desc.entry_points.get(e, []))}")
        for k, (field, _, gotype, line) in fields.items():
            if k not in keys:
                problem(f"{where}:{line}", f"{struct}.{field} (json:\"{k}\") is no option key of {', '.join(entries)}: remove or rename it")
            elif k in desc.option_keys:
                bad = go_type_ok({**desc.option_keys[k], "nullable": False}, gotype)
                if bad:
                    problem(f"{where}:{line}", f"{struct}.{field} (json:\"{k}\") {bad}")


# -- Lua -------------------------------------------------------------------------------------------

def check_lua(desc: Description) -> None:
    if not desc.option_keys:
        problem("iapverify fields --json", "bindings/lua: the description has no options yet")
        return
    src = LUA.read_text()
    where = "bindings/lua/lib/resty/iapverify.lua"
    # The binding passes an options table through whole (every key the description has reaches the
    # library); the keys it names itself must be option keys.
    if not re.search(r"encode\(ocsp_options\(options\), \"options\"\)", src):
        problem(where, "call() no longer encodes the options table whole: every option key of the description must reach the library")
    read = {k for keys in desc.entry_points.values() for k in keys}
    for i, line in enumerate(src.splitlines(), 1):
        for key in re.findall(r"\boptions\.(\w+)", line.split("--", 1)[0]):
            if key not in read:
                problem(f"{where}:{i}", f"options.{key} is no option key of the description: rename it")
    for ep in desc.entry_points:
        method = ep.removeprefix("iapv_")
        if f"lib.{ep}" not in src:
            problem(where, f"no method calls lib.{ep} (an entry point with options): add methods:{method}")


# -- ctypes against the header ---------------------------------------------------------------------

C_TO_CTYPES = {
    "int32_t": {"i32", "ctypes.c_int32", "ctypes.c_int"}, "iapv_status": {"i32", "ctypes.c_int32", "ctypes.c_int"},
    "int": {"ctypes.c_int", "i32"}, "uint32_t": {"ctypes.c_uint32"}, "int64_t": {"i64", "ctypes.c_int64"},
    "size_t": {"sz", "ctypes.c_size_t"}, "void": {"None"},
    "const char *": {"ctypes.c_char_p", "vp"}, "const uint8_t *": {"ctypes.c_char_p", "vp"},
    "char *": {"ctypes.c_char_p", "vp"}, "unsigned long": {"ctypes.c_ulong"},
    "size_t *": {"ctypes.POINTER(sz)"}, "iapv_error *": {"err"},
}


def c_prototypes() -> dict[str, tuple[str, list[str]]]:
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", "", text, flags=re.M)
    out = {}
    for m in re.finditer(r"(?:IAPV_\w+\s+)*([\w\s\*]+?)\s*\b(iapv_\w+)\s*\(([^)]*)\)\s*(?:IAPV_\w+(?:\([^)]*\))?\s*)*;", text):
        ret, name, args = m.group(1).strip(), m.group(2), m.group(3).strip()
        ret = re.sub(r"^(extern|IAPV_API|IAPV_EXPORT)\s+", "", ret)
        params = [] if args in ("", "void") else [re.sub(r"\s*\b\w+$", "", a.strip()) if not a.strip().endswith("*") else a.strip()
                                                   for a in args.split(",")]
        out[name] = (normal_c(ret), [normal_c(p) for p in params])
    return out


def normal_c(t: str) -> str:
    t = re.sub(r"\s+", " ", t.replace("*", " * ")).strip()
    return re.sub(r"\* \*", "**", t).replace(" *", " *").strip()


def ctype_ok(c: str, py: str) -> bool:
    if c in C_TO_CTYPES:
        return py in C_TO_CTYPES[c]
    if c.endswith("**"):
        return py.startswith("ctypes.POINTER(")
    if c.endswith("*"):                       # an opaque handle or struct pointer
        return py in ("vp", "ctypes.c_void_p", "err") or py.startswith("ctypes.POINTER(")
    return False


def check_ctypes() -> None:
    where = "bindings/python/src/iapverify/_native.py"
    src = (PY / "_native.py").read_text()
    tree = ast.parse(src)
    protos: dict[str, dict[str, tuple[str, int]]] = {}
    loops: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Tuple):
            loops[node.target.id if isinstance(node.target, ast.Name) else ""] = [e.value for e in node.iter.elts if isinstance(e, ast.Constant)]
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Attribute) and isinstance(stmt.targets[0].value, ast.Name):
                    for fn in loops[node.target.id]:   # type: ignore[attr-defined]
                        protos.setdefault(fn, {})[stmt.targets[0].attr] = (ast.unparse(stmt.value), stmt.lineno)
    fn_alias: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Attribute) \
                and node.value.attr.startswith("iapv_"):
            fn_alias[node.targets[0].id] = node.value.attr
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute):
            target = node.targets[0]
            if target.attr in ("argtypes", "restype"):
                owner = target.value
                if isinstance(owner, ast.Attribute) and owner.attr.startswith("iapv_"):
                    protos.setdefault(owner.attr, {})[target.attr] = (ast.unparse(node.value), node.lineno)
                elif isinstance(owner, ast.Name) and owner.id in fn_alias:
                    protos.setdefault(fn_alias[owner.id], {})[target.attr] = (ast.unparse(node.value), node.lineno)
    header = c_prototypes()
    for name, (ret, params) in sorted(header.items()):
        if name not in protos:
            problem(where, f"{name} (Include/iapverify.h) has no ctypes prototype: set its restype and argtypes in load()")
            continue
        p = protos[name]
        if "restype" not in p or "argtypes" not in p:
            problem(where, f"{name}: {'restype' if 'restype' not in p else 'argtypes'} not set")
            continue
        rtext, line = p["restype"]
        if not ctype_ok(ret, rtext):
            problem(f"{where}:{line}", f"{name}.restype is {rtext}, the header returns {ret}")
        atext, line = p["argtypes"]
        args = [ast.unparse(e) for e in ast.parse(atext, mode="eval").body.elts]   # type: ignore[attr-defined]
        if len(args) != len(params):
            problem(f"{where}:{line}", f"{name}.argtypes has {len(args)} arguments, the header {len(params)}: {', '.join(params)}")
            continue
        for i, (c, py) in enumerate(zip(params, args)):
            if not ctype_ok(c, py):
                problem(f"{where}:{line}", f"{name}.argtypes[{i}] is {py}, the header's argument is {c}")
    for name, p in sorted(protos.items()):
        if name not in header:
            problem(f"{where}:{p[next(iter(p))][1]}", f"{name} has a ctypes prototype but is not in Include/iapverify.h: remove it")


# -- main ------------------------------------------------------------------------------------------

def every_object_shown(desc: Description, shown: set[str]) -> None:
    if not desc.objects:
        return
    config_objects = {k["object"] for k in desc.config_keys if k.get("object")}
    for obj in sorted(set(desc.objects) - shown):
        doc = "docs/config.md" if obj in config_objects else "docs/results.md"
        problem(doc, f"no table shows the description's object {obj!r}: add <!-- surface:object {obj} --><!-- /surface --> "
                     "where it is explained and run python3 scripts/surface.py --write")


def run_all(desc: Description, write: bool) -> list[str]:
    """Every generator and check; the problems found."""
    problems.clear()
    notes.clear()
    shown = docs_tables(desc, write)
    every_object_shown(desc, shown)
    schemas(desc, write)
    check_python(desc)
    check_python_options(desc)
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


NEW = {"name": "surface_self_test_ms", "type": "ms", "nullable": True, "presence": "when_present", "meaning": "x"}
SELF_TEST: list[tuple[str, Callable[[dict[str, Any]], None], list[str]]] = [
    ("a member added to transaction", _add_member("transaction", NEW),
     ["docs/results.md", "docs/schema/common.schema.json", "bindings/python/src/iapverify/records.py", "bindings/go/serverapi.go"]),
    ("a member dropped from entitlement", _drop_member("entitlement", "will_renew"),
     ["docs/results.md", "docs/schema/common.schema.json", "bindings/python/src/iapverify/results.py", "bindings/go/result.go"]),
    ("a member added to jws_result", _add_member("jws_result", NEW),
     ["docs/results.md", "docs/schema/jws-result.schema.json", "bindings/python/src/iapverify/results.py", "bindings/go/result.go"]),
    ("an option key retyped", _retype_key("max_age_ms", "string"), ["docs/options.md", "docs/schema/options.schema.json", "bindings/go/iapverify.go"]),
    ("an option key added", _add_key("iapv_verify_jws"), ["docs/options.md", "docs/schema/options.schema.json", "bindings/go/iapverify.go"]),
    ("an option key dropped", lambda d: [e.remove("ocsp_responses") for e in d["options"]["entry_points"].values() if "ocsp_responses" in e],
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
