#!/usr/bin/env python3
"""Every result the golden corpus records is written as the description says.

Tests/golden/outputs.jsonl keeps the exact result JSON of every fixture through every entry point.
This walks each of them against `iapverify fields --json`: every member written must be described
in its object, in the description's order, with a value of the described type; every member
described as always written must be there. The writers take their keys from the description
(Sources/IAPVerify/JSON/Surface.swift), so this holds the one thing the compiler cannot: the order
of the writer's lines. A failure names the case, the path and the member.

    python3 Tests/architecture/check_result_order.py [--bin build/bin/iapverify]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = {"receipt": "receipt_result", "jws": "jws_result", "response": "response_result",
            "entitlements": "entitlements_result", "api_response": "api_response_result",
            "api_request": "api_request_result", "transaction_receipt": "transaction_receipt_result",
            "sign": "sign_result", "api_token": "api_token_result"}
# The documents whose verdict may also be one of `inspect_verdicts` (read, never verified).
UNVERIFIED = {("inspect_result", "verdict"), ("transaction_receipt_result", "verdict")}
INSPECT_VERDICTS: list[str] = []
JSON_TYPES = {"string": str, "integer": int, "ms": int, "boolean": bool, "object": dict, "map": dict, "array": list}


def walk(value, object_name, objects, path, problems):
    members = objects[object_name]["members"]
    order = [m["name"] for m in members]
    keys = list(value)
    unknown = [k for k in keys if k not in order]
    for k in unknown:
        problems.append(f"{path}.{k}: written but not described in object {object_name}")
    known = [k for k in keys if k in order]
    if known != sorted(known, key=order.index):
        problems.append(f"{path}: members out of the description's order: {known} (described: {order})")
    for m in members:
        name = m["name"]
        if name not in value:
            if m["presence"] == "always":
                problems.append(f"{path}.{name}: described as always written, missing")
            continue
        v = value[name]
        if v is None:
            if not m["nullable"]:
                problems.append(f"{path}.{name}: null, but described as not nullable")
            continue
        t = JSON_TYPES.get(m["type"])
        if t is not None and (not isinstance(v, t) or (t is int and isinstance(v, bool))):
            problems.append(f"{path}.{name}: a {type(v).__name__}, described as {m['type']}")
            continue
        extra = INSPECT_VERDICTS if (object_name, name) in UNVERIFIED else []
        if "values" in m and not m.get("open") and isinstance(v, str) and v not in m["values"] + extra:
            problems.append(f"{path}.{name}: {v!r} is not one of the described values {m['values']}")
        child = m.get("object")
        if child is None:
            continue
        if m["type"] == "object":
            walk(v, child, objects, f"{path}.{name}", problems)
        elif m["type"] == "array":
            for i, e in enumerate(v):
                walk(e, child, objects, f"{path}.{name}[{i}]", problems)
        elif m["type"] == "map":
            for k, e in v.items():
                walk(e, child, objects, f"{path}.{name}.{k}", problems)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin" / "iapverify"))
    args = ap.parse_args()
    description = json.loads(subprocess.run([args.bin, "fields", "--json"], check=True, capture_output=True).stdout)
    objects = description["objects"]
    INSPECT_VERDICTS.extend(description["inspect_verdicts"])
    problems: list[str] = []
    checked = 0
    for line in (ROOT / "Tests" / "golden" / "outputs.jsonl").read_text().splitlines():
        case = json.loads(line)
        document = DOCUMENT.get(case["id"].split("/")[0])
        head, _, body = case["out"].partition("\n")
        if document is None or head != "IAPV_OK" or not body.startswith("{"):
            continue
        result = json.loads(body)
        if document == "receipt_result" and result.get("verdict") == "unverified":
            document = "inspect_result"
        walk(result, document, objects, case["id"], problems)
        checked += 1
    for p in problems[:40]:
        print("check_result_order:", p)
    if problems:
        print(f"check_result_order: {len(problems)} problems in {checked} results; the writer (Sources/IAPVerify/*/*JSON.swift) "
              "or the description (*Members.swift) must change")
        return 1
    print(f"check_result_order: ok ({checked} results of the golden corpus written as described)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
