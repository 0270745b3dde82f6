"""Typing: the package and the manual's Python examples pass `mypy --strict`, as users' code sees them.

- The package itself (bindings/python/src/iapverify) passes `mypy --strict`.
- Every Python code block of README.md, docs/*.md and bindings/python/README.md (found with the
  block parser of Tests/docs/run_examples.py) is written to a file and checked with
  `mypy --strict` against the installed package: `<!-- run -->` blocks as they are, fragments (and
  the unmarked blocks of bindings/python/README.md) after a preamble that declares the names they
  leave to the reader (``verifier``, ``token``, ``db`` ...). Blocks marked skip are left out.
- Apple's camelCase aliases of the records are properties typed as their fields, the TypedDicts
  describe the JSON objects results hand over, and a misspelt module attribute is a type error while
  the deprecated ``APIEnvironment`` still works at run time (with its DeprecationWarning).

mypy runs in this interpreter (`python -m mypy`), so it sees the package installed here; the
tests are skipped when mypy is not installed.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
import typing
import warnings
from pathlib import Path

import pytest

import iapverify
from iapverify import AppTransaction, Notification, RenewalInfo, SubscriptionStatus, Transaction

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "bindings" / "python" / "src" / "iapverify"
MANUAL = [ROOT / "README.md", ROOT / "bindings" / "python" / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
PYTHON = {"python", "py", "python3"}
MYPY_TIMEOUT = 900

needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (pip install mypy): the type checks cannot run")

# What a fragment leaves to the reader, declared for the type checker (names only: nothing runs).
FRAGMENT_PREAMBLE = '''\
import logging
from typing import Any, Callable, Protocol, TypeVar

import iapverify
import iapverify.http

_F = TypeVar("_F", bound=Callable[..., Any])


class _WebApp(Protocol):                # a web framework's application object
    def post(self, path: str) -> Callable[[_F], _F]: ...


app: _WebApp
db: Any                                 # the host's own storage
log: logging.Logger
verifier: iapverify.Verifier
signer: iapverify.Signer
token: str                              # a JWS (a signed transaction, renewal info or notification)
receipt_base64: str                     # what the app uploaded
transaction_id: str
# -- the fragment --
'''


def _block_parser() -> typing.Any:
    """Tests/docs/run_examples.py, the parser `make docs-test` runs the blocks with."""
    path = ROOT / "Tests" / "docs" / "run_examples.py"
    spec = importlib.util.spec_from_file_location("_iapverify_run_examples", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module            # its dataclass looks its module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@dataclasses.dataclass
class Example:
    where: str          # README.md:136
    path: Path          # the .md file
    first_line: int     # the .md line of the block's first line of code
    preamble: str       # "" for a complete program
    code: str

    @property
    def text(self) -> str:
        return self.preamble + self.code


def python_examples() -> list[Example]:
    """The Python blocks to check, in file order: every one but those marked skip."""
    parser = _block_parser()
    examples: list[Example] = []
    for path in MANUAL:
        for b in parser.blocks(path):
            language = (b.arg if b.action == "run" and b.arg else b.lang).lower()
            if language not in PYTHON or b.action == "skip":
                continue
            preamble = "" if b.action == "run" else FRAGMENT_PREAMBLE
            examples.append(Example(f"{path.relative_to(ROOT)}:{b.line}", path, b.line + 1, preamble, b.code))
    return examples


def mypy(tmp_path: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    """`mypy --strict` in this interpreter, with a fresh cache (the same answer on every run).
    Modules imported but not named on the command line (the fake Apple of the tests, the example
    service, the installed packages) give their types without their own errors being reported."""
    config = tmp_path / "mypy.ini"
    config.write_text(textwrap.dedent(f"""\
        [mypy]
        strict = True
        follow_imports = silent
        mypy_path = {ROOT / "Tests" / "shared" / "fakeapple"}{os.pathsep}{ROOT / "examples" / "python"}
        show_error_codes = True
        show_column_numbers = False
        pretty = False
        color_output = False
        error_summary = True
        """))
    argv = [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache"),
            *map(str, files)]
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=MYPY_TIMEOUT)


ERROR = re.compile(r"^(?P<file>[^:\n]+\.py):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$", re.M)


# -- the package -------------------------------------------------------------------------------------

@needs_mypy
@pytest.mark.skipif(not SOURCE.is_dir(), reason="the package's source tree is not here")
def test_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    p = mypy(tmp_path, [SOURCE])
    assert p.returncode == 0, f"mypy --strict {SOURCE.relative_to(ROOT)}:\n{p.stdout}{p.stderr}"


# -- the manual's examples ---------------------------------------------------------------------------

def test_the_manual_has_python_examples() -> None:
    examples = python_examples()
    where = {e.where.split(":")[0] for e in examples}
    assert {"README.md", "docs/python.md", "docs/server-api.md", "bindings/python/README.md"} <= where, sorted(where)
    assert len(examples) >= 15, [e.where for e in examples]
    assert any(e.preamble for e in examples) and any(not e.preamble for e in examples)


@needs_mypy
def test_the_manual_examples_pass_mypy_strict(tmp_path: Path) -> None:
    examples = python_examples()
    files: dict[str, Example] = {}
    for n, e in enumerate(examples):
        stem = re.sub(r"[^A-Za-z0-9]+", "_", e.where).strip("_").lower()
        path = tmp_path / f"example_{n:02d}_{stem}.py"     # a module name of its own for each
        path.write_text(e.text)
        files[path.name] = e
    p = mypy(tmp_path, [tmp_path / name for name in files])
    problems = []
    for m in ERROR.finditer(p.stdout):
        e = files.get(Path(m["file"]).name)
        if e is None:
            problems.append(m.group(0))
            continue
        line = int(m["line"]) - e.preamble.count("\n")
        where = f"{e.path.relative_to(ROOT)}:{e.first_line + line - 1}" if line > 0 else f"{e.where} (preamble)"
        problems.append(f"{where}: {m['kind']}: {m['message']}")
    assert p.returncode == 0 and not problems, (
        "mypy --strict finds errors in the manual's Python examples (fix the example, or the package's types):\n"
        + "\n".join(problems or [p.stdout + p.stderr]))


# -- what type checkers see ------------------------------------------------------------------------

USES = '''\
from typing import Any, Optional, Union
from typing_extensions import assert_type

import iapverify
from iapverify import (AppTransaction, Environment, EntitlementState, Evidence, Notification, NotificationType,
                       Receipt, RenewalInfo, ServerEnvironment, SubscriptionStatus, Transaction, UnsignedFields)


def records(t: Transaction, i: RenewalInfo, n: Notification, a: AppTransaction, s: SubscriptionStatus) -> None:
    assert_type(t.transactionId, str)
    assert_type(t.originalTransactionId, Optional[str])
    assert_type(t.expiresDate, Optional[int])
    assert_type(t.revocationDate, Optional[int])
    assert_type(t.isUpgraded, bool)
    assert_type(t.environment, Union[Environment, str, None])
    assert_type(i.autoRenewStatus, Optional[bool])
    assert_type(i.eligibleWinBackOfferIds, Optional[tuple[str, ...]])
    assert_type(n.notificationType, Union[NotificationType, str])
    assert_type(n.notificationUUID, Optional[str])
    assert_type(a.receiptType, Union[Environment, str, None])
    assert_type(a.appAppleId, Optional[int])
    assert_type(s.status, Optional[int])
    assert_type(Transaction.from_dict(t.to_dict()), Transaction)
    assert_type(RenewalInfo.maybe(None), Optional[RenewalInfo])


def results(verifier: iapverify.Verifier) -> None:
    r = verifier.verify_receipt(b"")
    assert_type(r.entitlements[0].evidence, Evidence)
    assert_type(r.entitlements[0].evidence["rule"], str)
    assert_type(r.entitlements[0].state, Union[EntitlementState, str])
    assert_type(r.receipt, Optional[Receipt])
    if r.receipt is not None:
        assert_type(r.receipt["trusted"], bool)
        assert_type(r.receipt["signing"]["chain"][0]["sha256"], str)
    a = verifier.interpret_api_response(b"", endpoint="transaction_history", http_status=200)
    assert_type(a.unsigned, Optional[UnsignedFields])
    if a.unsigned is not None:
        assert_type(a.unsigned["revision"], str)
        assert_type(a.unsigned.get("somethingNew"), object)
    assert_type(a.environment, Union[ServerEnvironment, str, None])
    old: type[ServerEnvironment] = iapverify.APIEnvironment          # the deprecated name (it warns)
    print(old.SANDBOX)
'''

MISTAKES = '''\
import iapverify
from iapverify import Transaction


def mistakes(t: Transaction, r: iapverify.APIResult) -> None:
    iapverify.Verifer({})                           # line 6
    print(t.transactionID)                          # line 7
    n: int = t.transactionId                        # line 8
    assert r.unsigned is not None
    print(r.unsigned["revison"])                    # line 10
    print(iapverify.enums.APIEnvironmnet)           # line 11
'''


@needs_mypy
def test_types_as_a_type_checker_sees_them(tmp_path: Path) -> None:
    uses, mistakes = tmp_path / "uses.py", tmp_path / "mistakes.py"
    uses.write_text(USES)
    mistakes.write_text(MISTAKES)
    p = mypy(tmp_path, [uses])
    assert p.returncode == 0, p.stdout + p.stderr
    p = mypy(tmp_path, [mistakes])
    errors = {(int(m["line"]), m["message"]) for m in ERROR.finditer(p.stdout) if m["kind"] == "error"}
    lines = sorted(line for line, _ in errors)
    assert p.returncode == 1 and lines == [6, 7, 8, 10, 11], p.stdout + p.stderr
    assert any('has no attribute "Verifer"' in message for _, message in errors), errors
    assert any('has no attribute "transactionID"' in message for _, message in errors), errors


def test_the_deprecated_name_still_works_at_run_time() -> None:
    with pytest.warns(DeprecationWarning, match="ServerEnvironment"):
        assert iapverify.APIEnvironment is iapverify.ServerEnvironment
    with pytest.warns(DeprecationWarning):
        assert iapverify.enums.APIEnvironment is iapverify.ServerEnvironment
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="Verifer"):
            getattr(iapverify, "Verifer")


# -- Apple's names ---------------------------------------------------------------------------------

RECORDS = (Transaction, RenewalInfo, Notification, AppTransaction, SubscriptionStatus)


def aliases(cls: type) -> dict[str, str]:
    """Apple's name -> the field it reads, found by reading every property of a record whose
    fields each hold a value of their own."""
    fields = [f.name for f in dataclasses.fields(cls)]
    marks = {name: object() for name in fields}
    record = cls(**marks)
    found = {}
    for name, value in vars(cls).items():
        if isinstance(value, property) and name not in fields:
            read = getattr(record, name)
            field = next((f for f, mark in marks.items() if mark is read), None)
            assert field is not None, f"{cls.__name__}.{name} reads no field"
            found[name] = field
    return found


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_each_apple_name_is_a_property_typed_as_its_field(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    found = aliases(cls)
    assert found, cls
    for apple, field in found.items():
        assert apple != field and "_" not in apple and apple[0].islower(), (cls.__name__, apple)
        prop = vars(cls)[apple]
        assert prop.fset is None and prop.__doc__, (cls.__name__, apple)
        assert typing.get_type_hints(prop.fget)["return"] == hints[field], (cls.__name__, apple, field)


def test_apple_names_are_the_documented_ones() -> None:
    found = {cls.__name__: aliases(cls) for cls in RECORDS}
    assert found["Transaction"]["transactionId"] == "transaction_id"
    assert found["Transaction"]["expiresDate"] == "expires_date_ms"
    assert found["Transaction"]["revocationDate"] == "cancellation_date_ms"
    assert found["Transaction"]["offerIdentifier"] == "promotional_offer_id"
    assert found["RenewalInfo"]["autoRenewStatus"] == "auto_renew_status"
    assert found["Notification"] == {"notificationType": "notification_type", "notificationUUID": "notification_uuid",
                                     "signedDate": "signed_date_ms"}
    assert found["AppTransaction"]["appAppleId"] == "app_apple_id" and "environment" not in found["AppTransaction"]
    assert found["SubscriptionStatus"]["status"] == "apple_status"
    assert sum(len(v) for v in found.values()) == 69
    # Members only /verifyReceipt has, and the receipt-only ones, have no Apple name.
    assert not {"is_trial_period", "price_consent_status", "product_type", "unknown_attributes"} & {
        f for names in found.values() for f in names.values()}


def test_the_options_typeddicts_are_every_key_of_their_call() -> None:
    """iapverify.options is generated from `iapverify fields --json` (scripts/surface.py): each
    TypedDict's keys are exactly what its call reads, and a dict of them is accepted."""
    from typing import get_type_hints

    from iapverify import options
    jws = set(get_type_hints(options.JWSOptions))
    assert {"kind", "max_age_ms", "seen_request_identifiers", "ocsp_responses"} <= jws and "device_id" not in jws
    assert set(get_type_hints(options.PendingOrder)) == {"order_id", "product_id", "created_ms"}
    opts: options.JWSOptions = {"kind": "transaction", "max_age_ms": 1000, "seen_request_identifiers": []}
    with iapverify.Verifier({"bundle_id": "*"}) as verifier:
        r = verifier.verify_jws(b"not a token", options=opts)
    assert r.verdict == "malformed"
