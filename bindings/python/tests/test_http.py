"""iapverify.http against the fake App Store Server API of Tests/shared/fakeapple, sync and async:
paging, Retry-After, Apple's backoff, the sandbox fallback, an id unknown in both hosts, Apple
unreachable, the deadline, a refused token, and fetching OCSP answers. Every clock is fake: the
client's sleeps are recorded, never slept."""
import asyncio
import json
import socket
import sys
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")

import iapverify  # noqa: E402
from iapverify import http as iaphttp  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
FAKE = ROOT / "Tests" / "shared" / "fakeapple"
OCSP = FAKE / "ocsp"
sys.path.insert(0, str(FAKE))
from fakeapi import FakeAppleAPI, sign_notification  # noqa: E402

SIGNED = 1_767_225_600_000          # 2026-01-01T00:00:00Z: when the fake's items are dated
NOW = SIGNED + 3_600_000            # the clients' clock, fixed
SIGNER = json.loads((FAKE / "signer.json").read_text())
VERIFIER = json.loads((FAKE / "verifier.json").read_text())
COINS = "com.example.fake.coins"


def purchase(transaction_id, original="", minute=0):
    return {"transactionId": transaction_id, "originalTransactionId": original or transaction_id, "productId": COINS,
            "purchaseDate": SIGNED - 3_600_000 + minute * 60_000, "originalPurchaseDate": SIGNED - 3_600_000,
            "quantity": 1, "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": SIGNED}


def history(transaction_id):
    return {"endpoint": "transaction_history", "transaction_id": transaction_id}


def targets(fake, environment):
    """What one host received, as path?query."""
    return [target for env, _, target in fake.requests if env == environment]


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FakeTime:
    """A monotonic clock that moves only when the client sleeps; every sleep is recorded."""

    def __init__(self):
        self.now, self.slept = 1_000.0, []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds

    async def asleep(self, seconds):
        self.sleep(seconds)


@pytest.fixture
def fake():
    with FakeAppleAPI(FAKE) as f:
        yield f
        assert f.errors == []      # every request carried a valid token, a known path and query


@pytest.fixture(scope="module")
def verifier():
    with iapverify.Verifier(VERIFIER) as v:
        yield v


def make_signer(fake=None, base=None):
    base = base or {"production": fake.base_url, "sandbox": fake.sandbox_url}
    return iapverify.Signer({**SIGNER, "test_base_url": base})


@pytest.fixture
def signer(fake):
    with make_signer(fake) as s:
        yield s


@pytest.fixture
def timer():
    return FakeTime()


@pytest.fixture(params=["sync", "async"])
def run(request, signer, verifier, timer):
    """run(call, **client_options): the call through Client or AsyncClient, with the fake clock."""
    def go(call, *, signer=signer, options=None, **kwargs):
        kwargs = {"clock": timer.clock, "now_ms": lambda: NOW, **kwargs}
        if request.param == "sync":
            with iaphttp.Client(signer, verifier, sleep=timer.sleep, **kwargs) as client:
                return client.call(call, options=options)

        async def main():
            async with iaphttp.AsyncClient(signer, verifier, sleep=timer.asleep, **kwargs) as client:
                return await client.call(call, options=options)
        return asyncio.run(main())
    return go


# ---- the actions ---------------------------------------------------------------------------

def test_a_three_page_history_is_collected(run, fake, timer, verifier):
    ids = [f"20000{i}" for i in range(5)]
    for i, t in enumerate(ids):
        fake.add_transaction("Production", purchase(t, original="200000", minute=i))

    got = run(history(ids[2]))

    assert isinstance(got, iaphttp.CallResult)
    assert [t["transaction_id"] for t in got.transactions] == ids
    assert [p.action for p in got.pages] == ["next_page", "next_page", "accept"] and got.result is got.pages[-1]
    assert all(p.valid for p in got.pages) and got.result.action is iapverify.Action.ACCEPT
    assert [t.partition("?")[2] for t in targets(fake, "Production")] == ["", "revision=rev-2", "revision=rev-4"]
    assert got.unsigned["revision"] == "rev-5" and got.environment == "Production" and got.requests == 3
    assert targets(fake, "Sandbox") == [] and timer.slept == []
    whole = verifier.compute_entitlements(got.entitlement_input, now_ms=NOW)
    assert whole.valid and sorted(i.transaction_id for i in whole.delivery.to_deliver) == ids


def test_notification_history_pages_with_a_token_in_a_post_body(run, fake):
    for i in range(3):
        signed = sign_notification("CONSUMPTION_REQUEST", uuid=f"00000000-0000-4000-8000-00000000000{i}",
                                   signed_date=SIGNED + i,
                                   transaction={**purchase(f"30000{i}"), "bundleId": SIGNER["bundle_id"],
                                                "environment": "Production"})
        fake.add_notification("Production", signed, SIGNED + i)
    call = {"endpoint": "notification_history", "body": {"startDate": SIGNED - 1, "endDate": SIGNED + 10}}

    got = run(call)

    assert [n["notification_uuid"][-1] for n in got.notifications] == ["0", "1", "2"]
    assert [n["notification_type"] for n in got.notifications] == ["CONSUMPTION_REQUEST"] * 3
    assert [t["transaction_id"] for t in got.transactions] == ["300000", "300001", "300002"]
    assert [t.partition("?")[2] for t in targets(fake, "Production")] == ["", "paginationToken=n-2"]


def test_the_request_is_sent_as_built(fake, signer, verifier, timer):
    """Method, URL, every header and the body are the ones api_request built; a fresh token each try."""
    fake.add_transaction("Production", purchase("250001"))
    fake.server_error_next(1)
    sent = []
    with httpx.Client(event_hooks={"request": [sent.append]}) as http:
        client = iaphttp.Client(signer, verifier, http=http, sleep=timer.sleep, clock=timer.clock)
        got = client.call({**history("250001"), "query": {"sort": "DESCENDING"}})
        client.close()                                   # leaves the caller's httpx.Client open
        assert not http.is_closed
    built = signer.api_request({**history("250001"), "query": {"sort": "DESCENDING"}})
    assert got.requests == 2 and len(sent) == 2
    for request in sent:
        assert (request.method, str(request.url)) == (built.method, built.url)
        assert {k: request.headers[k] for k in built.headers if k != "Authorization"} == \
            {k: v for k, v in built.headers.items() if k != "Authorization"}
        assert request.headers["Authorization"].startswith("Bearer ")
        assert request.content == (built.body or b"")


def test_a_429_waits_exactly_retry_after(run, fake, timer):
    fake.add_transaction("Production", purchase("500001"))
    fake.rate_limit_next(1, NOW + 7_000)      # Apple's Retry-After: a UNIX time in milliseconds

    got = run(history("500001"))

    assert timer.slept == [7.0]
    assert got.requests == 2 and [t["transaction_id"] for t in got.transactions] == ["500001"]


def test_server_errors_follow_the_library_backoff(run, fake, timer):
    fake.add_transaction("Production", purchase("600001"))
    fake.server_error_next(2)

    got = run(history("600001"))

    assert timer.slept == [1.0, 2.0] and got.requests == 3


def test_a_sandbox_transaction_is_read_from_sandbox_once(run, fake, timer):
    fake.add_transaction("Sandbox", purchase("700001"))

    got = run(history("700001"))

    assert got.environment is iapverify.ServerEnvironment.SANDBOX and got.environment == "Sandbox"
    assert [t["transaction_id"] for t in got.transactions] == ["700001"]
    assert len(targets(fake, "Production")) == 1 and len(targets(fake, "Sandbox")) == 1
    assert timer.slept == []


def test_an_id_unknown_in_both_hosts_is_refused_without_a_loop(run, fake, timer):
    with pytest.raises(iaphttp.RejectError) as info:
        run(history("799999"))

    err = info.value
    assert isinstance(err, iaphttp.APICallError)
    assert (err.action, err.result.verdict, err.result.environment) == ("reject", "rejected_by_apple", "Sandbox")
    assert err.result.error_code == 4040010 and err.call["environment"] == "Sandbox"
    assert len(targets(fake, "Production")) == 1 and len(targets(fake, "Sandbox")) == 1
    assert timer.slept == []
    assert "reject" in str(err) and "rejected_by_apple" in str(err)


def test_a_refused_token_stops_at_once(run, fake, timer):
    fake.fail_next(1, 401)
    with pytest.raises(iaphttp.FixConfigurationError) as info:
        run(history("1"))
    assert info.value.result.verdict == "configuration_error" and len(fake.requests) == 1 and timer.slept == []


def test_apple_unreachable_is_a_503_then_give_up(run, timer):
    port = closed_port()
    base = f"http://127.0.0.1:{port}"
    with make_signer(base={"production": base, "sandbox": base}) as unreachable:
        with pytest.raises(iaphttp.GiveUpError) as info:
            run(history("1"), signer=unreachable)
    err = info.value
    assert err.result.http_status == 503 and err.result.verdict == "temporarily_unavailable"
    assert isinstance(err.__cause__, httpx.ConnectError)
    assert timer.slept == [1.0, 2.0, 4.0, 8.0]          # attempts 1-4 wait, attempt 5 gives up


def test_a_wait_past_the_deadline_ends_the_call(run, fake, timer):
    fake.rate_limit_next(1, NOW + 3_600_000)
    with pytest.raises(iaphttp.DeadlineError) as info:
        run(history("1"), deadline_s=60)
    assert info.value.result.retry_after_ms == 3_600_000 and info.value.action == "retry_later"
    assert timer.slept == [] and len(fake.requests) == 1

    fake.server_error_next(3)
    with pytest.raises(iaphttp.DeadlineError):
        run(history("1"), deadline_s=2.5)                # waits 1 s, then 2 s would pass the deadline
    assert timer.slept == [1.0]


def test_client_arguments_are_checked(signer, verifier):
    with pytest.raises(TypeError):
        iaphttp.Client(verifier, signer)
    with iaphttp.Client(signer, verifier) as client:
        with pytest.raises(TypeError):
            client.call("transaction_history")
        with pytest.raises(iapverify.InvalidArgumentError):
            client.call({"endpoint": "no_such_endpoint"})


# ---- OCSP ----------------------------------------------------------------------------------

def ocsp_config():
    return {"bundle_id": "com.example.fake",
            "trust": {"include_apple_roots": False, "roots_pem": [(OCSP / "root.pem").read_text()]}}


OCSP_NOW = 1_767_229_200_000            # the prepared answers were made for this instant


def responder(answer=None, status=200, seen=None):
    def handle(request):
        if seen is not None:
            seen.append(request)
        return httpx.Response(status, content=answer or b"", headers={"Content-Type": "application/ocsp-response"})
    return httpx.MockTransport(handle)


def test_fetch_ocsp_posts_the_request_and_returns_the_answer():
    good = (OCSP / "good.der").read_bytes()
    token = (OCSP / "transaction.jws").read_text()
    with iapverify.Verifier(ocsp_config()) as v:
        r = v.verify_jws(token, now_ms=OCSP_NOW)
        assert r.revocation.status == "unchecked"
        seen = []
        with httpx.Client(transport=responder(good, seen=seen)) as http:
            answers = iaphttp.fetch_ocsp(r, http=http)
        assert answers == [good]
        [request] = seen
        assert (request.method, str(request.url)) == ("POST", r.revocation.responder_url)
        assert request.headers["Content-Type"] == "application/ocsp-request"
        assert request.content == r.revocation.request_der
        again = v.verify_jws(token, now_ms=OCSP_NOW, options={"ocsp_responses": answers})
        assert again.valid and again.revocation.status == "good"

        async def fetch_async():
            async with httpx.AsyncClient(transport=responder(good)) as http:
                return await iaphttp.afetch_ocsp(r.revocation, http=http)
        assert asyncio.run(fetch_async()) == [good]

        with httpx.Client(transport=responder(status=500)) as http:
            with pytest.raises(iaphttp.OCSPError, match="HTTP 500"):
                iaphttp.fetch_ocsp(r, http=http)
        assert iaphttp.fetch_ocsp(v.verify_jws("not.a.jws", now_ms=OCSP_NOW)) == []   # nothing to ask
        with pytest.raises(TypeError):
            iaphttp.fetch_ocsp("http://example.com")
