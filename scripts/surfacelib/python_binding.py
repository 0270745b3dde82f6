"""The Python binding held to the description: records, results, aliases, option keywords."""
from __future__ import annotations

import ast
import json
import re
from typing import Any, Optional

from .common import (Description, PY, ROOT, problem, type_text)


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
            problem(where, f"{spec['class']}: the description has no object {obj!r}: fix the object's name in PY_CLASSES (scripts/surfacelib/python_binding.py)")
            continue
        classes = py_classes(modules[spec["file"]])
        if spec["class"] not in classes:
            problem(where, f"class {spec['class']} (the description's {obj!r}) is missing")
            continue
        fields = py_fields(classes, spec["class"])
        skip = spec.get("not_members", set())
        members: dict[str, dict[str, Any]] = {}
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


# -- the options as TypedDicts: bindings/python/src/iapverify/options.py, generated -------------

OPTIONS_MODULE = "bindings/python/src/iapverify/options.py"
OPTIONS_CLASS = {"iapv_verify_receipt": "ReceiptOptions", "iapv_interpret_response": "ResponseOptions",
                 "iapv_compute_entitlements": "EntitlementsOptions", "iapv_verify_jws": "JWSOptions",
                 "iapv_interpret_api_response": "APIResponseOptions"}
PY_SCALAR = {"string": "str", "integer": "int", "ms": "int", "boolean": "bool", "json": "Any"}


def py_option_type(k: dict[str, Any]) -> str:
    if k["type"] == "array":
        item = k.get("items", "json")
        inner = ("PendingOrder" if k.get("object") == "pending_order" else "dict[str, Any]") if item == "object" else PY_SCALAR[item]
        if k["name"] == "ocsp_responses":
            inner = "Union[str, bytes]"          # the binding encodes bytes as base64
        text = f"list[{inner}]"
    elif k["type"] in ("map", "object"):
        text = "dict[str, Any]"
    elif k.get("values") and not k.get("open") and k["type"] == "string":
        text = "Literal[" + ", ".join(json.dumps(v) for v in k["values"]) + "]"
        if k["name"] == "environment":
            text = "Union[" + text + ", str]"    # and the deprecated lower-case spellings
    else:
        text = PY_SCALAR[k["type"]]
    return f"Optional[{text}]" if k.get("nullable") else text


def options_module(desc: Description) -> str:
    lines = ['"""The per-call options of each entry point, as TypedDicts for type checkers (docs/options.md).',
             "",
             "Generated by scripts/surface.py from `iapverify fields --json`: do not edit. Pass one as the",
             "``options=`` of the matching Verifier call (any mapping with these keys works the same);",
             "a key the call does not read is refused by the library.",
             '"""',
             "from __future__ import annotations",
             "",
             "from typing import Any, Literal, Optional, TypedDict, Union",
             "",
             "__all__ = [" + ", ".join(json.dumps(c) for c in ["PendingOrder"] + [OPTIONS_CLASS[e] for e in desc.entry_points
                                                                                 if e in OPTIONS_CLASS]) + "]",
             "", ""]
    order = desc.objects.get("pending_order")
    lines += ["class PendingOrder(TypedDict):",
              f'    """{(order or {}).get("meaning", "a pending order").capitalize()}."""', ""]
    for m in (order or {}).get("members", []):
        lines.append(f"    {m['name']}: {PY_SCALAR[m['type']]}")
    for entry, keys in desc.entry_points.items():
        if entry not in OPTIONS_CLASS:
            continue
        lines += ["", "", f"class {OPTIONS_CLASS[entry]}(TypedDict, total=False):", f'    """The options {entry} reads."""', ""]
        for name in keys:
            k = desc.option_keys[name]
            lines.append(f"    {name}: {py_option_type(k)}")
    return "\n".join(lines) + "\n"


def python_options_module(desc: Description, write: bool) -> None:
    if not desc.entry_points:
        return
    missing = [e for e in desc.entry_points if e not in OPTIONS_CLASS]
    for e in missing:
        problem("scripts/surfacelib/python_binding.py", f"OPTIONS_CLASS has no class name for the entry point {e}: add one")
    path = ROOT / OPTIONS_MODULE
    text = options_module(desc)
    old = path.read_text() if path.exists() else ""
    if old == text:
        return
    if write:
        path.write_text(text)
        print(f"surface: wrote {OPTIONS_MODULE}")
        return
    have = set(re.findall(r"^    (\w+): ", old, re.M))
    want = set(re.findall(r"^    (\w+): ", text, re.M))
    detail = "; ".join(filter(None, [f"lacks {sorted(want - have)}" if want - have else "",
                                     f"has {sorted(have - want)}, which the description lacks" if have - want else ""]))
    problem(OPTIONS_MODULE, f"stale ({detail or 'a type or an entry point differs'}): generated from the description, "
                            "never edited by hand; run python3 scripts/surface.py --write")
