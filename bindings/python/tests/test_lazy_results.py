"""Results are read lazily: a call keeps the JSON text, validity and verdict, and builds each other
field from the JSON the first time it is read. What a field holds must not depend on when, or in
which order, it is read."""
import base64
import copy
import dataclasses
import json
import pickle

import pytest

import iapverify
from iapverify.results import APIResult, JWSResult, ResponseResult, Result, parse

JWS = "jws/transaction_autorenew_sandbox_2022-11.jws"
BODY = "verifyreceipt/alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json"


@pytest.fixture(scope="module")
def jws_call(fixtures):
    token = (fixtures / JWS).read_bytes().strip()
    payload = json.loads(base64.urlsafe_b64decode(token.split(b".")[1] + b"=="))
    verifier = iapverify.Verifier({"bundle_id": payload["bundleId"], "environments": ["Production", "Sandbox"]})
    return lambda: verifier.verify_jws(token, now_ms=payload["signedDate"] + 1000)


def every_field(result):
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}


def test_a_call_decodes_nothing_until_a_field_is_read(jws_call):
    r = jws_call()
    assert set(vars(r)) == {"json", "valid", "verdict"}
    assert r.valid is True and r.verdict == iapverify.Verdict.VALID
    assert set(vars(r)) == {"json", "valid", "verdict"}
    assert r.transaction is not None
    assert {"raw", "transaction"} <= set(vars(r))


def test_each_field_is_what_the_json_holds_in_any_order(jws_call):
    forwards, backwards = jws_call(), jws_call()
    names = [f.name for f in dataclasses.fields(JWSResult)]
    ahead = {n: getattr(forwards, n) for n in names}
    behind = {n: getattr(backwards, n) for n in reversed(names)}
    assert ahead == behind
    d = json.loads(forwards.json)
    assert forwards.raw == d and forwards.reason == d["reason"] and forwards.kind == d["kind"]
    assert forwards.transaction.transaction_id == d["transaction"]["transaction_id"]
    assert forwards.revocation is not None and forwards.revocation.status == d["revocation"]["status"]
    assert [e.id for e in forwards.entitlements] == [e["id"] for e in d["entitlements"]]
    assert forwards == backwards


def test_a_lazy_result_is_still_a_frozen_dataclass(jws_call):
    r = jws_call()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.reason = "changed"            # type: ignore[misc]
    with pytest.raises(AttributeError, match="no attribute 'transactoin'"):
        r.transactoin                   # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(r)) == r and copy.deepcopy(r) == r
    assert dataclasses.replace(r, reason="x").reason == "x"
    assert every_field(jws_call()) == every_field(r)
    assert "transaction_id" in repr(r)


@pytest.mark.parametrize("cls, flags", [(Result, {}), (ResponseResult, {"response": True}),
                                        (JWSResult, {"jws": True}), (APIResult, {"api": True})])
def test_defaults_stay_defaults_when_the_json_lacks_them(cls, flags):
    r = parse('{"verdict":"malformed","reason":"r"}', False, **flags)
    assert type(r) is cls and r.entitlements == [] and r.revocation is None and r.receipt is None
    if cls is not Result:
        assert r.environment is None
    if cls in (ResponseResult, APIResult):
        assert r.action == "reject" and r.retry_after_ms is None and r.deprecations == []


def test_the_library_defaults_are_not_sent_as_options(fixtures):
    body = (fixtures / BODY).read_bytes()
    v = iapverify.Verifier({"bundle_id": "com.test.app", "environments": ["Production", "Sandbox"]})
    quiet = v.interpret_response(body, now_ms=1608636518031)
    said = v.interpret_response(body, now_ms=1608636518031, options={"environment": "Production", "attempt": 1})
    assert quiet.json == said.json
    sandbox = v.interpret_response(body, environment="Sandbox", attempt=2, now_ms=1608636518031)
    assert sandbox.json == v.interpret_response(body, now_ms=1608636518031,
                                                options={"environment": "Sandbox", "attempt": 2}).json
