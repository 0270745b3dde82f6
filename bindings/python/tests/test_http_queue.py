"""iapverify.http for a host that queues work instead of sleeping: a call that starts at a job's
attempt, max_wait_s, the whole-call deadline while an answer is read, max_response_bytes, and
every page's raw answer in CallResult.bodies. Against real servers on 127.0.0.1: the fake App Store
Server API of Tests/shared/fakeapple, and a small server that drips or oversends its answer.
Outcomes only: no test measures time. The sleeps of the fake clock are recorded, never slept."""
import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")

import iapverify  # noqa: E402
from iapverify import http as iaphttp  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
FAKE = ROOT / "Tests" / "shared" / "fakeapple"
sys.path.insert(0, str(FAKE))
from fakeapi import FakeAppleAPI  # noqa: E402

SIGNED = 1_767_225_600_000
NOW = SIGNED + 3_600_000
SIGNER = json.loads((FAKE / "signer.json").read_text())
VERIFIER = json.loads((FAKE / "verifier.json").read_text())
COINS = "com.example.fake.coins"


def purchase(transaction_id, original="", minute=0):
    return {"transactionId": transaction_id, "originalTransactionId": original or transaction_id, "productId": COINS,
            "purchaseDate": SIGNED - 3_600_000 + minute * 60_000, "originalPurchaseDate": SIGNED - 3_600_000,
            "quantity": 1, "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": SIGNED}


def history(transaction_id):
    return {"endpoint": "transaction_history", "transaction_id": transaction_id}


class FakeTime:
    def __init__(self):
        self.now, self.slept = 1_000.0, []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds

    async def asleep(self, seconds):
        self.sleep(seconds)


class BadServer:
    """Answers every request one way: "drip" sends a 200 whose body comes one byte at a time and
    never ends (until the client goes away); "long" says a Content-Length over the limit; "chunked"
    sends more than the limit without a length."""

    def __init__(self, mode):
        stop = self.stop = threading.Event()
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.requests += 1
                try:
                    if mode == "drip":
                        self._head({"Content-Length": "1000000"})
                        while not stop.wait(0.02):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                    elif mode == "long":
                        self._head({"Content-Length": "5000"})
                        self.wfile.write(b" " * 5000)
                    else:
                        self._head({"Transfer-Encoding": "chunked"})
                        for _ in range(10):
                            self.wfile.write(b"200\r\n" + b" " * 512 + b"\r\n")
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass                  # the client went away: what it should do

            def _head(self, headers):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    with FakeAppleAPI(FAKE) as f:
        yield f
        assert f.errors == []


@pytest.fixture(scope="module")
def verifier():
    with iapverify.Verifier(VERIFIER) as v:
        yield v


def make_signer(base):
    return iapverify.Signer({**SIGNER, "test_base_url": base})


@pytest.fixture
def timer():
    return FakeTime()


@pytest.fixture(params=["sync", "async"])
def run(request, verifier, timer):
    """run(base, call, client=dict(...), **call_kwargs): one call through Client or AsyncClient."""
    def go(base, call, *, client=None, **call_kwargs):
        client = {"clock": timer.clock, "now_ms": lambda: NOW, **(client or {})}
        with make_signer(base) as signer:
            if request.param == "sync":
                with iaphttp.Client(signer, verifier, sleep=timer.sleep, **client) as c:
                    return c.call(call, **call_kwargs)

            async def main():
                async with iaphttp.AsyncClient(signer, verifier, sleep=timer.asleep, **client) as c:
                    return await c.call(call, **call_kwargs)
            return asyncio.run(main())
    return go


def hosts(fake):
    return {"production": fake.base_url, "sandbox": fake.sandbox_url}


def backoff_ms(verifier, attempt):
    """The library's wait for an API 503 at this attempt."""
    r = verifier.interpret_api_response(b"", endpoint="transaction_history", http_status=503, attempt=attempt, now_ms=NOW)
    assert r.action == "retry_later"
    return r.retry_after_ms


def test_a_call_starts_at_the_jobs_attempt(run, fake, timer, verifier):
    fake.add_transaction("Production", purchase("810001"))
    fake.server_error_next(1)

    got = run(hosts(fake), history("810001"), attempt=3)

    assert timer.slept == [backoff_ms(verifier, 3) / 1000] == [4.0]      # the 3rd wait, not the 1st
    assert got.requests == 2 and [t["transaction_id"] for t in got.transactions] == ["810001"]


def test_the_last_attempt_gives_up_without_a_wait(run, fake, timer):
    fake.server_error_next(1)
    with pytest.raises(iaphttp.GiveUpError) as info:
        run(hosts(fake), history("810002"), attempt=5)
    assert info.value.attempt == 5 and timer.slept == [] and len(fake.requests) == 1


def test_max_wait_0_never_sleeps_and_says_when_to_come_back(run, fake, timer, verifier):
    fake.add_transaction("Production", purchase("820001"))
    fake.server_error_next(2)

    with pytest.raises(iaphttp.DeadlineError) as info:
        run(hosts(fake), history("820001"), max_wait_s=0)
    err = info.value
    assert err.action == "retry_later" and err.result.http_status == 500
    assert err.result.retry_after_ms == backoff_ms(verifier, 1) and err.attempt == 1
    assert "max_wait_s" in str(err) and timer.slept == [] and len(fake.requests) == 1

    # The queued job runs again with the next attempt: the library's next wait, then success.
    with pytest.raises(iaphttp.DeadlineError) as info:
        run(hosts(fake), err.call, attempt=err.attempt + 1, max_wait_s=0)
    assert info.value.result.retry_after_ms == backoff_ms(verifier, 2) and info.value.attempt == 2
    got = run(hosts(fake), info.value.call, attempt=info.value.attempt + 1, max_wait_s=0)
    assert [t["transaction_id"] for t in got.transactions] == ["820001"] and timer.slept == []


def test_a_wait_within_max_wait_is_slept(run, fake, timer, verifier):
    fake.add_transaction("Production", purchase("830001"))
    fake.server_error_next(1)
    got = run(hosts(fake), history("830001"), max_wait_s=backoff_ms(verifier, 1) / 1000)
    assert timer.slept == [1.0] and got.requests == 2


def test_bodies_hold_every_page_as_sent(run, fake, verifier):
    ids = [f"84000{i}" for i in range(5)]
    for i, t in enumerate(ids):
        fake.add_transaction("Production", purchase(t, original="840000", minute=i))

    got = run(hosts(fake), history(ids[0]))

    assert len(got.bodies) == len(got.pages) == 3 and all(isinstance(b, bytes) for b in got.bodies)
    pages = [json.loads(b) for b in got.bodies]
    assert [p["revision"] for p in pages] == ["rev-2", "rev-4", "rev-5"]
    assert sum(len(p["signedTransactions"]) for p in pages) == 5
    for body, page in zip(got.bodies, got.pages):
        again = verifier.interpret_api_response(body, endpoint="transaction_history", http_status=200, now_ms=NOW)
        assert [t["transaction_id"] for t in again.transactions] == [t["transaction_id"] for t in page.transactions]


def test_bodies_after_the_sandbox_fallback_are_the_sandbox_pages(run, fake):
    fake.add_transaction("Sandbox", purchase("850001"))
    got = run(hosts(fake), history("850001"))
    assert got.environment == "Sandbox" and len(got.bodies) == 1
    assert len(json.loads(got.bodies[0])["signedTransactions"]) == 1


def test_an_answer_that_drips_ends_at_the_deadline(run):
    # A real clock here: the deadline is what ends the call. Per-read timeouts alone never would.
    import time
    with BadServer("drip") as server:
        with pytest.raises(iaphttp.DeadlineError) as info:
            run({"production": server.url, "sandbox": server.url}, history("1"),
                client={"clock": time.monotonic, "timeout_s": 600}, deadline_s=1.0)
    err = info.value
    assert isinstance(err.__cause__, httpx.TimeoutException)
    assert err.result.http_status == iaphttp.UNREACHABLE_STATUS and err.result.verdict == "temporarily_unavailable"
    assert server.requests == 1


@pytest.mark.parametrize("mode", ["long", "chunked"])
def test_an_answer_over_max_response_bytes_is_no_answer(run, mode, timer):
    with BadServer(mode) as server:
        with pytest.raises(iaphttp.DeadlineError) as info:
            run({"production": server.url, "sandbox": server.url}, history("1"),
                client={"max_response_bytes": 1000}, max_wait_s=0)
    err = info.value
    assert isinstance(err.__cause__, iaphttp.ResponseTooLargeError), repr(err.__cause__)
    assert err.result.http_status == iaphttp.UNREACHABLE_STATUS and err.result.retry_after_ms == 1000
    assert timer.slept == []


def test_an_answer_at_the_limit_is_read(run, fake):
    fake.add_transaction("Production", purchase("860001"))
    got = run(hosts(fake), history("860001"))
    size = len(got.bodies[0])
    fake.add_transaction("Production", purchase("860002"))
    got = run(hosts(fake), history("860002"), client={"max_response_bytes": size + 10_000})
    assert got.result.action == "accept"


def test_arguments_are_checked(verifier):
    with make_signer({"production": "http://127.0.0.1:9", "sandbox": "http://127.0.0.1:9"}) as signer:
        with pytest.raises(ValueError):
            iaphttp.Client(signer, verifier, max_response_bytes=-1)
        with iaphttp.Client(signer, verifier) as client:
            for bad, error in [({"attempt": 0}, ValueError), ({"attempt": "1"}, TypeError), ({"attempt": True}, TypeError),
                               ({"max_wait_s": -1}, ValueError), ({"max_wait_s": float("nan")}, ValueError)]:
                with pytest.raises(error):
                    client.call(history("1"), **bad)
