"""Verifier.interpret_response(http_status=...): a /verifyReceipt call that got no 200, or no answer
at all, backs off exactly as a temporary status (21005) at the same attempt; no body is read."""
import pytest

import iapverify

CONFIG = {"bundle_id": "*", "environments": ["Production", "Sandbox"]}


@pytest.fixture(scope="module")
def verifier():
    with iapverify.Verifier(CONFIG) as v:
        yield v


@pytest.mark.parametrize("http_status", [0, 404, 429, 502, 503])
def test_no_200_backs_off_like_status_21005(verifier, http_status):
    for attempt in range(1, 8):
        reference = verifier.interpret_response({"status": 21005}, attempt=attempt, now_ms=0)
        r = verifier.interpret_response(b"", attempt=attempt, http_status=http_status, now_ms=0)
        assert (r.action, r.retry_after_ms) == (reference.action, reference.retry_after_ms), attempt
        assert r.verdict == "temporarily_unavailable" and r.status is None and not r.valid
        assert ("no answer" if http_status == 0 else f"HTTP {http_status}") in r.reason
    assert verifier.interpret_response(None, attempt=5, http_status=0, now_ms=0).action == iapverify.Action.GIVE_UP


def test_the_body_of_a_non_200_is_not_read(verifier, fixtures):
    body = (fixtures / "verifyreceipt" / "alexalok_Valid_Production_Family_Shared.json").read_bytes()
    now = 1_595_500_000_000
    assert verifier.interpret_response(body, http_status=200, now_ms=now).valid
    assert verifier.interpret_response(body, http_status=200, now_ms=now).json == verifier.interpret_response(body, now_ms=now).json
    r = verifier.interpret_response(body, http_status=503, now_ms=now)
    assert r.action == "retry_later" and not r.valid and r.entitlements == []


def test_the_options_key_wins_and_bad_values_are_refused(verifier):
    r = verifier.interpret_response(b"", http_status=503, options={"http_status": 0}, now_ms=0)
    assert "no answer" in r.reason
    for bad in (-1, 99, 600):
        with pytest.raises(iapverify.InvalidArgumentError, match="http_status"):
            verifier.interpret_response(b"", http_status=bad, now_ms=0)
    with pytest.raises(TypeError):
        verifier.interpret_response(b"", http_status="503", now_ms=0)
    with pytest.raises(TypeError):
        verifier.interpret_response(None, now_ms=0)        # a body is needed when there was an answer
