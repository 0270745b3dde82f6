"""The Lua binding's option keys, and Python's ctypes prototypes against Include/iapverify.h."""
from __future__ import annotations

import ast
import re


from .common import (Description, HEADER, LUA, PY, problem)


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
            loops[node.target.id if isinstance(node.target, ast.Name) else ""] = [str(e.value) for e in node.iter.elts if isinstance(e, ast.Constant)]
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
