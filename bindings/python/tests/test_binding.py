import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import iapverify
from iapverify import ConfigError, IAPVerifyError, InvalidArgumentError, TooLargeError


def run_case(case, fixtures):
    data = (fixtures / case["input"]).read_bytes()
    with iapverify.Verifier(case["config"]) as v:
        if case["kind"] == "receipt":
            return v.verify_receipt(data, now_ms=case["now_ms"], options=case["options"] or None)
        return v.interpret_response(data, now_ms=case["now_ms"], options=case["options"])


def test_shared_expectations(expectations, fixtures):
    assert len(expectations) >= 15
    for case in expectations:
        r = run_case(case, fixtures)
        assert r.verdict == case["verdict"], case["name"]
        assert r.valid == (case["verdict"] == "valid")
        got = [{"id": e.id, "active": e.active, "state": e.state, "transaction_id": e.transaction_id} for e in r.entitlements]
        assert got == case["entitlements"], case["name"]
        assert [d.transaction_id for d in r.delivery.to_deliver] == case["to_deliver"], case["name"]
        if case["kind"] == "response":
            assert isinstance(r, iapverify.ResponseResult)
            assert (r.status, r.action, r.retry_after_ms) == (case["status"], case["action"], case["retry_after_ms"]), case["name"]


def test_typed_results_keep_the_raw_json(fixtures):
    der = (fixtures / "receipts/production_2025-04-18_com.dashedspace.analytics_sha256.der").read_bytes()
    with iapverify.Verifier({"bundle_id": "com.dashedspace.analytics"}) as v:
        r = v.verify_receipt(base64.b64encode(der).decode(), now_ms=1745000000000)
    assert r.valid and r.verdict == "valid"
    e = r.entitlement("api.dashedspace.com.plan.yearly")
    assert e is not None and e.active and e.state == "active" and e.expires_date_ms == 1776474136000
    assert r.active_entitlements == ["api.dashedspace.com.plan.yearly"]
    assert r.purchases[0].transaction_id == "730001855992385"
    assert json.loads(r.json) == r.raw
    assert r.receipt["bundle_id"] == "com.dashedspace.analytics"


def test_rejections_are_results_not_exceptions(fixtures):
    der = (fixtures / "receipts/production_2016-09-27_com.devsisters.gb.der").read_bytes()
    with iapverify.Verifier({"bundle_id": "com.example.other"}) as v:
        r = v.verify_receipt(der, now_ms=0)
        assert not r.valid and r.verdict == "bundle_mismatch" and r.entitlements == []
        assert v.verify_receipt(b"garbage", now_ms=0).verdict == "malformed"


def test_config_errors_name_the_key():
    with pytest.raises(ConfigError) as e:
        iapverify.Verifier({"bundle_id": "a", "colour": "red"})
    assert e.value.code == -2 and e.value.name == "IAPV_E_CONFIG" and "colour" in e.value.message
    assert isinstance(e.value, IAPVerifyError) and isinstance(e.value, ValueError)
    with pytest.raises(ConfigError):
        iapverify.Verifier("{not json")


def test_call_errors():
    with iapverify.Verifier({"bundle_id": "*", "max_input_bytes": 10}) as v:
        with pytest.raises(TooLargeError) as e:
            v.verify_receipt(b"x" * 11, now_ms=0)
        assert e.value.code == -3
    with iapverify.Verifier({"bundle_id": "*"}) as v:
        with pytest.raises(InvalidArgumentError):
            v.verify_receipt(b"x", now_ms=0, options={"colour": 1})
        with pytest.raises(InvalidArgumentError):
            v.verify_receipt(b"x", now_ms=-1)
    with pytest.raises(InvalidArgumentError, match="closed"):
        v.verify_receipt(b"x", now_ms=0)


def test_response_and_entitlements():
    with iapverify.Verifier({"bundle_id": "com.example.app", "environments": ["Production", "Sandbox"],
                             "products": {"coins": {"type": "consumable"}}}) as v:
        r = v.interpret_response({"status": 21007}, environment="Production")
        assert r.action == "retry_sandbox" and r.verdict == "wrong_environment" and r.status == 21007
        r = v.interpret_response(b'{"status":21005}', attempt=2)
        assert (r.action, r.retry_after_ms) == ("retry_later", 2000)
        e = v.compute_entitlements({"transactions": [{"transaction_id": "1", "product_id": "coins", "purchase_date_ms": "1000"}]},
                                   now_ms=2000, options={"orders": [{"order_id": "A", "product_id": "coins", "created_ms": 900}]})
        assert e.valid and [d.transaction_id for d in e.delivery.to_deliver] == ["1"]
        assert e.delivery.orders[0].status == "matched"


def test_threads_share_one_verifier(fixtures):
    files = sorted((fixtures / "receipts").glob("*.der"))
    data = [f.read_bytes() for f in files]
    with iapverify.Verifier({"bundle_id": "*", "environments": ["Production", "Sandbox"]}) as v:
        expected = [v.verify_receipt(d, now_ms=1893456000000).json for d in data]
        failures = []

        def work():
            for _ in range(5):
                for d, want in zip(data, expected):
                    if v.verify_receipt(d, now_ms=1893456000000).json != want:
                        failures.append(1)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


def test_library_version_and_loader_override(tmp_path):
    assert iapverify.library_version() == (Path(__file__).resolve().parents[3] / "VERSION").read_text().strip()
    code = "import iapverify; iapverify.Verifier({'bundle_id': '*'})"
    env = dict(os.environ, IAPVERIFY_LIBRARY=str(tmp_path / "missing.so"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode != 0 and "missing.so" in proc.stderr


def test_verify_jws(fixtures):
    token = (fixtures / "jws/notification_REFUND_sandbox_2025-02a.jws").read_text()
    with iapverify.Verifier({"bundle_id": "*", "environments": ["Sandbox"]}) as v:
        r = v.verify_jws(token, now_ms=1893456000000)
        assert r.valid and r.kind == "notification" and r.notification["notification_type"] == "REFUND"
        assert r.notification["transaction"]["transaction_id"]
        again = v.verify_jws(token, now_ms=1893456000000, options={"seen_notification_uuids": [r.notification["notification_uuid"]]})
        assert again.notification["action"] == "ignore_duplicate"
        assert v.verify_jws("not.a.jws", now_ms=0).verdict == "malformed"
