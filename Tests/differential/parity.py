"""Classifying and reporting the differential cases (Apple's app-store-server-library against
iapverify's Python binding).

Every case ends as one of:

- ``exact``: both libraries give the same answer (the same verdict and the same decoded fields,
  the same request, the same claims);
- ``stricter``: iapverify refuses what Apple's library accepts, or checks or sends more, and a
  page of docs/ says why: the case matches an entry of ``EXPLAINED`` (a case pattern, the doc
  file and a phrase that must be found in it; the report cites the file and line);
- ``different``: anything else. A ``different`` case fails its test.

The report (one line per case) is printed at the end of the pytest run.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

EXACT, STRICTER, DIFFERENT = "exact", "stricter", "different"


@dataclass(frozen=True)
class Explanation:
    doc: str          # a file under docs/
    phrase: str       # words that must be found in it (one line)
    why: str          # what iapverify does beyond Apple's library, in short


# Case id patterns (fnmatch) -> why iapverify may refuse or add what Apple's library accepts or
# leaves out. Keep each pattern narrow: it must not excuse more than its doc line explains.
EXPLAINED: dict[str, Explanation] = {
    # Xcode / LocalTesting: Apple's verifier skips every signature and chain check for them.
    "jws/*/Xcode/wrong_root": Explanation(
        "config.md", "then they must chain to a certificate in `roots_pem`",
        "Xcode-signed data must chain to the configured Xcode certificate; Apple checks no signature there"),
    "jws/*/LocalTesting/wrong_root": Explanation(
        "config.md", "then they must chain to a certificate in `roots_pem`",
        "LocalTesting data must chain to the configured Xcode certificate; Apple checks no signature there"),
    "jws/fake/*/Xcode/tampered": Explanation(
        "config.md", "then they must chain to a certificate in `roots_pem`",
        "the signature of Xcode-signed data is checked; Apple's verifier does not check it"),
    "jws/fake/*/LocalTesting/tampered": Explanation(
        "config.md", "then they must chain to a certificate in `roots_pem`",
        "the signature of LocalTesting data is checked; Apple's verifier does not check it"),
    # The app id is checked in every environment once configured; Apple checks it in Production only.
    "jws/*/Sandbox/wrong_app_apple_id": Explanation(
        "config.md", "Sandbox, Xcode and LocalTesting payloads are checked only when it is set",
        "appAppleId is compared in Sandbox too when app_apple_id is configured"),
    "jws/*/Xcode/wrong_app_apple_id": Explanation(
        "config.md", "Sandbox, Xcode and LocalTesting payloads are checked only when it is set",
        "appAppleId is compared for Xcode data too when app_apple_id is configured"),
    "jws/*/LocalTesting/wrong_app_apple_id": Explanation(
        "config.md", "Sandbox, Xcode and LocalTesting payloads are checked only when it is set",
        "appAppleId is compared for LocalTesting data too when app_apple_id is configured"),
    # Nested items of a notification are verified with the outer one.
    "jws/fake/notification_nested_other_bundle/*": Explanation(
        "storekit2.md", "For a notification, its `data.signedTransactionInfo` and `data.signedRenewalInfo`",
        "a notification's nested transaction and renewal info are verified with it; Apple's "
        "verify_and_decode_notification leaves them to the caller"),
    # Offer signatures: a field holding the separator would make the signed string read two ways.
    "sign/promotional_offer_v1/username_with_separator": Explanation(
        "offer-signatures.md", "it separates the fields of the signed string",
        "a field that contains U+2063 is refused; Apple's creator signs the ambiguous string"),
    # The bearer token carries iat, which Apple's page on API tokens lists; Apple's client omits it.
    "token/api/*": Explanation(
        "server-api.md", "the claims are `iss` (the",
        "the API token carries `iat` (Apple documents it); Apple's client leaves it out"),
    # Booleans in the query as Apple's API reference spells them; Apple's Python client writes str(bool).
    "request/transaction_history/*/revoked_*": Explanation(
        "server-api.md", "`revoked` is written `true`",
        "the revoked filter is sent as true/false, as Apple documents it; Apple's Python client sends True/False"),
    # Order ids exist in production only.
    "request/order_lookup/Sandbox": Explanation(
        "server-api.md", "production only (sandbox has no order ids)",
        "an order lookup is refused for the sandbox host"),
    # A host that names the kind it expects gets `malformed` for a payload of another shape.
    "jws/fake/unknown_shape_as_transaction/*": Explanation(
        "storekit2.md", "a token of another kind is",
        "asked for a transaction (options.kind), a payload without a transaction's fields is malformed; "
        "Apple's verify_and_decode_signed_transaction decodes any payload into its transaction model"),
    # Consumption v1: every field Apple's page marks required is required.
    "request/consumption_info_v1/*/partial_body": Explanation(
        "server-api.md", "`consumption_info_v1` requires every field Apple's page marks required",
        "a v1 consumption body without Apple's required fields is refused before the call"),
}


@dataclass
class Outcome:
    case: str
    label: str
    detail: str = ""
    citation: Optional[str] = None


RESULTS: list[Outcome] = []


def explanation_for(case: str) -> Optional[tuple[str, Explanation]]:
    for pattern, explanation in EXPLAINED.items():
        if fnmatch.fnmatchcase(case, pattern):
            return pattern, explanation
    return None


def doc_line(explanation: Explanation) -> str:
    """``docs/FILE:LINE`` of the explanation's phrase; AssertionError when the doc lost it."""
    path = DOCS / explanation.doc
    assert path.is_file(), f"docs/{explanation.doc} does not exist"
    # The doc's prose is wrapped: the phrase may run over a line break.
    text, starts = "", []
    for line in path.read_text(encoding="utf-8").splitlines():
        starts.append(len(text))
        text += " ".join(line.split()) + " "
    at = text.find(" ".join(explanation.phrase.split()))
    if at < 0:
        raise AssertionError(f"docs/{explanation.doc} no longer says {explanation.phrase!r}")
    number = max(i for i, start in enumerate(starts) if start <= at) + 1
    return f"docs/{explanation.doc}:{number}"


def settle(case: str, problems: list[str], *, iapverify_refused_more: bool = False, detail: str = "") -> Outcome:
    """The outcome of one case: ``problems`` lists what differs (empty: exact).
    ``iapverify_refused_more``: every problem is iapverify refusing, checking or sending more
    than Apple's library; then an EXPLAINED entry turns it into ``stricter``."""
    if not problems:
        outcome = Outcome(case, EXACT, detail)
    else:
        found = explanation_for(case) if iapverify_refused_more else None
        text = "; ".join(problems) + (f" [{detail}]" if detail else "")
        if found is not None:
            outcome = Outcome(case, STRICTER, text + f" -- {found[1].why}", doc_line(found[1]))
        else:
            outcome = Outcome(case, DIFFERENT, text)
    RESULTS.append(outcome)
    return outcome


def require(outcome: Outcome) -> None:
    """Fails the running test when the outcome is ``different``."""
    if outcome.label == DIFFERENT:
        pytest.fail(f"{outcome.case}: different: {outcome.detail}", pytrace=False)


def report_lines() -> list[str]:
    lines = []
    width = max((len(o.case) for o in RESULTS), default=10)
    for o in RESULTS:
        cite = f" ({o.citation})" if o.citation else ""
        lines.append(f"{o.label:<9} {o.case:<{width}} {o.detail}{cite}".rstrip())
    counts = {label: sum(o.label == label for o in RESULTS) for label in (EXACT, STRICTER, DIFFERENT)}
    lines.append(f"differential: {len(RESULTS)} cases: {counts[EXACT]} exact, {counts[STRICTER]} stricter, "
                 f"{counts[DIFFERENT]} different")
    return lines
