"""What every part of scripts/surface.py shares: the paths, the problems found, the description,
and how a member's type reads in a table cell or a message."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SCHEMA = DOCS / "schema"
OVERLAY = SCHEMA / "overlay"
PY = ROOT / "bindings" / "python" / "src" / "iapverify"
GO = ROOT / "bindings" / "go"
LUA = ROOT / "bindings" / "lua" / "lib" / "resty" / "iapverify.lua"
HEADER = ROOT / "Include" / "iapverify.h"

TABLE_DOCS = ("docs/results.md", "docs/options.md", "docs/config.md", "docs/entitlements.md", "docs/server-api.md")

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
