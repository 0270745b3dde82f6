"""The str enums (a member is its plain string; an unknown value stays a plain string), now_ms in
seconds refused, cancellation_reason as the library writes it, and APIResult.is_valid deprecated."""
import json
import pickle
import sys
from pathlib import Path

import pytest

import iapverify
from iapverify import (Action, EntitlementState, Environment, NotificationAction, NotificationSubtype,
                       NotificationType, ServerEnvironment, Verdict)
from iapverify.results import parse

ROOT = Path(__file__).resolve().parents[3]
FAKE = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE))
from fakeapi import sign_notification  # noqa: E402

VERIFIER = json.loads((FAKE / "verifier.json").read_text())
SIGNER = json.loads((FAKE / "signer.json").read_text())
DAY = 86_400_000
BASE = 1_700_000_000_000
ENUMS = [Verdict, Action, NotificationAction, EntitlementState, Environment, ServerEnvironment, NotificationType,
         NotificationSubtype]


@pytest.fixture(scope="module")
def verifier():
    with iapverify.Verifier(VERIFIER) as v:
        yield v


@pytest.mark.parametrize("cls", ENUMS)
def test_a_member_is_its_plain_string(cls):
    assert cls.__name__ in iapverify.__all__ and getattr(iapverify, cls.__name__) is cls
    for member in cls:
        plain = member.value
        assert isinstance(member, str) and member == plain and plain == member
        assert hash(member) == hash(plain) and {plain: 1}[member] == 1
        assert str(member) == plain and f"{member}" == plain and "%s" % member == plain
        assert json.dumps({"k": member}) == json.dumps({"k": plain})
        assert pickle.loads(pickle.dumps(member)) is member


def test_the_schemas_values_are_named():
    """Every verdict, action and state the schemas list has a member."""
    schema = ROOT / "docs" / "schema"
    api = json.loads((schema / "api-response-result.schema.json").read_text())["properties"]
    common = json.loads((schema / "common.schema.json").read_text())["$defs"]
    assert set(api["verdict"]["enum"]) <= {v.value for v in Verdict}
    assert set(api["action"]["enum"]) <= {a.value for a in Action}
    assert set(api["environment"]["enum"]) == {e.value for e in ServerEnvironment}
    assert set(common["serverEnvironment"]["enum"]) == {e.value for e in ServerEnvironment}
    assert set(common["entitlement"]["properties"]["state"]["enum"]) == {s.value for s in EntitlementState}
    assert set(common["environment"]["enum"]) - {None} == {e.value for e in Environment}


def test_result_fields_give_members(verifier):
    r = verifier.interpret_api_response(b'{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}',
                                        endpoint="transaction_history", environment="Sandbox", http_status=429,
                                        now_ms=BASE)
    assert r.verdict is Verdict.TEMPORARILY_UNAVAILABLE and r.action is Action.RETRY_LATER
    assert r.environment is ServerEnvironment.SANDBOX and r.deprecations == []
    assert (r.verdict, r.action, r.environment) == ("temporarily_unavailable", "retry_later", "Sandbox")
    assert r.raw["verdict"] == "temporarily_unavailable" and type(r.raw["verdict"]) is str   # raw stays plain

    t = {"transaction_id": "7001", "original_transaction_id": "7000", "product_id": "pro.monthly",
         "purchase_date_ms": BASE, "expires_date_ms": BASE + 30 * DAY, "signed_date_ms": BASE}
    e = verifier.compute_entitlements({"transactions": [t], "renewal_info": []}, now_ms=BASE + DAY).entitlements[0]
    assert e.state is EntitlementState.ACTIVE and e.state == "active"


def test_unknown_values_stay_plain_strings():
    text = json.dumps({"verdict": "brand_new_verdict", "reason": "", "action": "brand_new_action",
                       "environment": "elsewhere", "entitlements": [
                           {"id": "x", "active": False, "state": "brand_new_state", "reason": "", "evidence": {}}]})
    r = parse(text, False, api=True)
    assert (r.verdict, r.action, r.environment) == ("brand_new_verdict", "brand_new_action", "elsewhere")
    assert type(r.verdict) is str and type(r.action) is str and type(r.environment) is str
    assert type(r.entitlements[0].state) is str and r.entitlements[0].state == "brand_new_state"


def test_notification_type_subtype_and_action(verifier):
    signed = sign_notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD", uuid="00000000-0000-4000-8000-000000000001",
                               signed_date=BASE)
    r = verifier.verify_jws(signed, now_ms=BASE)
    assert r.valid, r.reason
    assert r.notification_type is NotificationType.DID_FAIL_TO_RENEW
    assert r.notification_subtype is NotificationSubtype.GRACE_PERIOD
    assert r.action is NotificationAction.APPLY and r.environment is Environment.PRODUCTION
    assert r.notification["notification_type"] == "DID_FAIL_TO_RENEW"

    new = verifier.verify_jws(sign_notification("SOMETHING_NEW", uuid="00000000-0000-4000-8000-000000000002",
                                                signed_date=BASE), now_ms=BASE)
    assert new.notification_type == "SOMETHING_NEW" and type(new.notification_type) is str
    assert new.notification_subtype is None and new.action is NotificationAction.RECORD_ONLY


@pytest.mark.parametrize("seconds", [1_000_000_000, 1_700_000_000, 9_999_999_999])
def test_now_ms_in_seconds_is_refused(verifier, seconds):
    calls = [lambda: verifier.verify_receipt(b"x", now_ms=seconds),
             lambda: verifier.verify_jws("a.b.c", now_ms=seconds),
             lambda: verifier.compute_entitlements({"transactions": []}, now_ms=seconds),
             lambda: verifier.interpret_response({"status": 0}, now_ms=seconds),
             lambda: verifier.interpret_api_response(b"", endpoint="finish_transaction", http_status=200, now_ms=seconds)]
    with iapverify.Signer(SIGNER) as signer:
        calls += [lambda: signer.api_token(now_ms=seconds),
                  lambda: signer.api_request({"endpoint": "test_notification"}, now_ms=seconds)]
        for call in calls:
            with pytest.raises(iapverify.InvalidArgumentError) as info:
                call()
            assert isinstance(info.value, ValueError)
            message = str(info.value)
            assert "seconds" in message and f"now_ms={seconds * 1000}" in message and "1000" in message


def test_now_ms_around_the_seconds_range_is_taken(verifier):
    for ms in (0, 2_000, 999_999_999, 10_000_000_000, 1_700_000_000_000):
        verifier.compute_entitlements({"transactions": []}, now_ms=ms)


def test_cancellation_reason_is_the_string_the_library_writes(verifier):
    t = {"transaction_id": "7001", "original_transaction_id": "7000", "product_id": "pro.monthly",
         "purchase_date_ms": BASE, "expires_date_ms": BASE + 30 * DAY, "cancellation_date_ms": BASE + 5 * DAY,
         "cancellation_reason": "1", "revocation_type": "REFUND_FULL", "signed_date_ms": BASE + 5 * DAY}
    e = verifier.compute_entitlements({"transactions": [t], "renewal_info": []}, now_ms=BASE + 10 * DAY).entitlements[0]
    assert e.state is EntitlementState.REFUNDED and e.cancellation_reason == "1"
    assert iapverify.Entitlement.__dataclass_fields__["cancellation_reason"].type == "Optional[str]"


def test_is_valid_is_a_deprecated_alias_of_valid(verifier):
    r = verifier.interpret_api_response(b"", endpoint="finish_transaction", http_status=200, now_ms=BASE)
    assert r.valid is True
    with pytest.deprecated_call(match="use APIResult.valid"):
        assert r.is_valid is True


# The server environment in Apple's spelling; the old spellings work until the next release.

def test_api_environment_is_a_deprecated_alias_of_server_environment():
    with pytest.deprecated_call(match="use iapverify.ServerEnvironment"):
        alias = iapverify.APIEnvironment
    assert alias is ServerEnvironment and ServerEnvironment.PRODUCTION == "Production" == Environment.PRODUCTION
    assert "APIEnvironment" not in iapverify.__all__ and "ServerEnvironment" in iapverify.__all__


def test_lower_case_environments_still_work_and_are_reported(verifier):
    r = verifier.interpret_api_response(b"", endpoint="finish_transaction", environment="sandbox", http_status=200,
                                        now_ms=BASE)
    assert r.valid and r.environment is ServerEnvironment.SANDBOX
    assert len(r.deprecations) == 1 and '"Sandbox"' in r.deprecations[0]
    r = verifier.interpret_response({"status": 21005}, environment=ServerEnvironment.SANDBOX, now_ms=BASE)
    assert r.deprecations == [] and r.action is Action.RETRY_LATER
    r = verifier.interpret_response({"status": 21005}, options={"environment": "production"}, now_ms=BASE)
    assert len(r.deprecations) == 1 and '"Production"' in r.deprecations[0]
    with iapverify.Signer(SIGNER) as signer:
        req = signer.api_request({"endpoint": "test_notification", "environment": "sandbox"}, now_ms=BASE)
        assert req.environment is ServerEnvironment.SANDBOX and len(req.deprecations) == 1
        req = signer.api_request({"endpoint": "test_notification", "environment": "Sandbox"}, now_ms=BASE)
        assert req.environment == "Sandbox" and req.deprecations == []


def test_interpret_response_endpoint_keyword_is_deprecated(verifier):
    with pytest.deprecated_call(match=r"endpoint=\.\.\.\) is deprecated: use environment="):
        r = verifier.interpret_response({"status": 21007}, endpoint="production", now_ms=BASE)
    assert r.action == "retry_sandbox" and r.deprecations == []       # sent as "environment": "Production"
    with pytest.deprecated_call():
        r = verifier.interpret_response({"status": 21008}, endpoint="SANDBOX", now_ms=BASE)
    assert r.action == "retry_production"
    with pytest.raises(TypeError, match="both environment= and"):
        verifier.interpret_response({"status": 0}, endpoint="sandbox", environment="Sandbox", now_ms=BASE)
    # The options' own old key goes to the library, which says so in deprecations.
    r = verifier.interpret_response({"status": 21005}, options={"endpoint": "sandbox"}, now_ms=BASE)
    assert len(r.deprecations) == 1 and "options.endpoint is deprecated" in r.deprecations[0]


def test_a_key_of_another_entry_point_is_refused(verifier):
    with pytest.raises(iapverify.InvalidArgumentError, match='"device_id" does not apply to iapv_interpret_response'):
        verifier.interpret_response({"status": 21005}, options={"device_id": "C68BCE28-7E27-494A-A082-ACECB9328171"},
                                    now_ms=BASE)
    with pytest.raises(iapverify.InvalidArgumentError, match='"environment" does not apply to iapv_compute_entitlements'):
        verifier.compute_entitlements({"transactions": []}, options={"environment": "Sandbox"}, now_ms=BASE)
