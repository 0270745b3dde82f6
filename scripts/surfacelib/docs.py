"""The member tables of the docs, between <!-- surface:... --> markers: generated and checked."""
from __future__ import annotations

import re
from typing import Any, Optional

from .common import (CURRENT_DOC, Description, ROOT, TABLE_DOCS, TABLE_OF, anchor_of, cell, code, default_text, meaning_text, problem, type_text)


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
    elif kind == "call":
        keys = desc.data.get("calls", {}).get(arg, {}).get("keys")
        if not keys:
            return None
        kinds = any("kinds" in k for k in keys)
        head = "| key | type |" + (" kinds |" if kinds else "") + " meaning |"
        rows.append(("", head + "\n" + "|---" * head.count(" |") + "|"))
        for k in keys:
            line = f"| `{k['name']}` | {cell(type_text(k))} |"
            if kinds:
                line += " " + ", ".join(code(x) for x in k.get("kinds", [])) + " |"
            rows.append((k["name"], line + f" {meaning_text(k.get('meaning', ''))} |"))
    else:
        problem(where, f"unknown marker <!-- surface:{kind} {arg} -->: use surface:object NAME, surface:options [ENTRY_POINT], "
                       "surface:config or surface:call ENTRY_POINT")
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
                if kind in ("object", "options", "config", "call") and (kind != "object" or desc.objects):
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


def every_object_shown(desc: Description, shown: set[str]) -> None:
    if not desc.objects:
        return
    config_objects = {k["object"] for k in desc.config_keys if k.get("object")}
    for obj in sorted(set(desc.objects) - shown):
        doc = "docs/config.md" if obj in config_objects else "docs/results.md"
        problem(doc, f"no table shows the description's object {obj!r}: add <!-- surface:object {obj} --><!-- /surface --> "
                     "where it is explained and run python3 scripts/surface.py --write")
