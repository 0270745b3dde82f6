"""The purchase service against a fake Apple that replays real /verifyReceipt responses, with
an SQLite ledger and with a real PostgreSQL."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
ROOT = HERE.parents[2]
RESPONSES = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures" / "verifyreceipt"

from fake_apple import FakeApple  # noqa: E402
from ledger import Ledger  # noqa: E402
from service import PurchaseService, serve  # noqa: E402

CONSUMABLE = (RESPONSES / "alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json").read_bytes()
FROM_TEST_ENV = (RESPONSES / "alexalok_Invalid_Receipt_Is_From_Test_Environment.json").read_bytes()
NOW = 1608230700000  # while the response's subscription is active
MERCURY = "1000000736318436"


def refunded(body: bytes) -> bytes:
    """The same real response, as Apple answers after refunding the consumable."""
    doc = json.loads(body)
    for t in doc["receipt"]["in_app"]:
        if t["transaction_id"] == MERCURY:
            t["cancellation_date_ms"] = str(NOW - 1000)
            t["cancellation_reason"] = "0"
    return json.dumps(doc).encode()


def postgres_url(tmp: Path) -> str:
    """Starts a throwaway PostgreSQL on a Unix socket in tmp; returns its URL."""
    bindir = next(Path("/usr/lib/postgresql").glob("*/bin"))
    data, sock = tmp / "data", tmp / "sock"
    sock.mkdir()
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if run_as:
        shutil.chown(tmp, "postgres")
        shutil.chown(sock, "postgres")
    subprocess.run(run_as + [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True)
    subprocess.run(run_as + [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(tmp / "log"), "-w", "-o",
                             f"-k {sock} -c listen_addresses='' -c max_connections=200", "start"],
                   check=True, capture_output=True)
    return f"postgresql://postgres@/postgres?host={sock}"


def stop_postgres(tmp: Path) -> None:
    bindir = next(Path("/usr/lib/postgresql").glob("*/bin"))
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run(run_as + [str(bindir / "pg_ctl"), "-D", str(tmp / "data"), "-m", "immediate", "stop"], capture_output=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger(request, tmp_path):
    if request.param == "sqlite":
        yield Ledger(url="", sqlite_path=str(tmp_path / "purchases.db"))
        return
    pg = Path(tempfile.mkdtemp(prefix="iapv-pg-"))
    try:
        yield Ledger(url=postgres_url(pg))
    finally:
        stop_postgres(pg)
        shutil.rmtree(pg, ignore_errors=True)


@pytest.fixture
def apple():
    fake = FakeApple()
    yield fake
    fake.close()


@pytest.fixture
def service(ledger, apple):
    config = json.loads((HERE.parent / "config.json").read_text())
    clock = {"now": NOW}
    s = PurchaseService(config, ledger, "secret", apple.url, clock=lambda: clock["now"])
    s.test_clock = clock
    return s


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_50_concurrent_submissions_deliver_once(service, apple):
    apple.script("R1", "production", CONSUMABLE)
    server = serve(service, "127.0.0.1", 0, retry_every_s=3600)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        service.test_clock["now"] = 1604059000000   # the app created the order just before buying
        status, order = post(url + "/orders", {"user_id": "u1", "product_id": "com.test.app.mercury"})
        assert status == 201
        service.test_clock["now"] = NOW
        results = []
        threads = [threading.Thread(target=lambda: results.append(post(url + "/receipts", {"user_id": "u1", "receipt": "R1"})))
                   for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.shutdown()
    assert len(results) == 50 and all(code == 200 for code, _ in results), results[:3]
    delivered = [txn for _, body in results for txn in body["delivered"]]
    assert delivered == [MERCURY]                      # exactly once across 50 racing requests
    assert [d["transaction_id"] for d in service.ledger.deliveries()] == [MERCURY]
    assert all(body["entitlements"] == {"premium": True} for _, body in results)
    assert service.ledger.order(order["order_id"]) == {"status": "paid", "transaction_id": MERCURY}


def test_21007_is_followed_by_a_sandbox_call(service, apple):
    apple.script("R2", "production", FROM_TEST_ENV)
    apple.script("R2", "sandbox", CONSUMABLE)
    result = service.submit_receipt("u2", "R2")
    assert result["status"] == "accepted" and result["delivered"] == [MERCURY]
    assert [c[0] for c in apple.calls] == ["production", "sandbox"]


def test_21005_is_retried_later_then_delivered(service, apple):
    apple.script("R3", "production", b'{"status": 21005}', CONSUMABLE)
    first = service.submit_receipt("u3", "R3")
    assert first == {"status": "pending", "retry_after_ms": 1000, "why": "21005"}
    assert service.retry_pending() == []                # not due yet
    service.test_clock["now"] += 1000
    [second] = service.retry_pending()
    assert second["status"] == "accepted" and second["delivered"] == [MERCURY]
    assert service.ledger.pending_count() == 0


def test_timeouts_are_stored_for_later(ledger):
    config = json.loads((HERE.parent / "config.json").read_text())
    s = PurchaseService(config, ledger, apple_base_url="http://127.0.0.1:9", clock=lambda: NOW, timeout_s=0.5)
    result = s.submit_receipt("u5", "R5")
    assert result["status"] == "pending" and result["why"].startswith("timeout")
    assert ledger.pending_count() == 1


def test_a_refund_shows_up_in_to_revoke(service, apple):
    apple.script("R4", "production", CONSUMABLE, refunded(CONSUMABLE))
    assert service.submit_receipt("u4", "R4")["delivered"] == [MERCURY]
    later = service.submit_receipt("u4", "R4")
    assert later["delivered"] == [] and later["revoked"] == [MERCURY]
    assert service.ledger.deliveries()[0]["revoked_ms"] == NOW
