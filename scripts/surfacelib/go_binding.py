"""The Go binding held to the description: struct tags and types, the options structs."""
from __future__ import annotations

import re
from typing import Any, Optional

from .common import (Description, GO, problem, type_text)


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
    if t in ("integer", "ms", "boolean") and base not in (GO_SCALAR[t] or set()) and gotype != "json.RawMessage":
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
            problem(where, f"{spec['struct']}: the description has no object {obj!r}: fix the object's name in GO_STRUCTS (scripts/surfacelib/go_binding.py)")
            continue
        fields = go_struct((GO / spec["file"]).read_text(), spec["struct"])
        if fields is None:
            problem(where, f"type {spec['struct']} struct (the description's {obj!r}) is missing")
            continue
        members: dict[str, dict[str, Any]] = {}
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
