"""What an operator lives with (one test per defect found running the service): keep-alive
requests are not held by Nagle's algorithm, and the recurring recovery jobs do not count as a
purchase waiting on Apple."""
from __future__ import annotations

import json
import socket

from http_api import bind
from service import PurchaseService
from support import CONSUMABLE, config, signed_receipt
from test_subscriber_year import FAKE_DIR


def test_accepted_connections_send_without_delay():
    """asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP; a listening socket
    made with protocol 0 left every keep-alive response after the first waiting on a delayed ACK."""
    listener = bind("127.0.0.1", 0)
    client = socket.create_connection(listener.getsockname())
    try:
        conn, _ = listener.accept()
        with conn:
            assert conn.proto == socket.IPPROTO_TCP           # what asyncio checks before it sets nodelay
            assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        client.close()
        listener.close()


def test_recovery_jobs_do_not_age_the_queue(ledger, api):
    """The recurring history reads stay in the queue for good: counting them, the 'above an hour:
    Apple is failing' alert fired an hour after start and never stopped."""
    clock = {"now": 1_767_225_600_000}
    service = PurchaseService(config(), ledger, clock=lambda: clock["now"],
                              signer_config=json.loads((FAKE_DIR / "signer.json").read_text()),
                              api_base_url={"Production": api.base_url, "Sandbox": api.sandbox_url})
    service.ensure_recovery_jobs()
    clock["now"] += 3 * 3_600_000
    jobs = service.health()["jobs"]
    assert jobs["pending"] >= 1                      # the recovery jobs are there...
    assert jobs["oldest_pending_age_ms"] == 0        # ...and no purchase is waiting


def test_an_outage_parks_purchases_for_a_minute_and_apples_return_wakes_them(service, apple):
    """Apple failing past the library's back-off (1, 2, 4, 8 s) used to park a purchase for 15
    minutes: now the next round is a minute away, the first answer Apple gives again makes every
    waiting purchase due at once, and so does the operator's retry."""
    from service import OUTAGE_RETRY_MS
    from support import consumable
    clock = service.test_clock
    apple.go_down("503")
    for r in ("A", "B"):
        assert service.submit_receipt(f"u{r}", signed_receipt(r))["status"] == "pending"
    while True:                                   # the back-off runs out while Apple is down
        clock["now"] = min(j["next_at_ms"] for j in service.ledger.jobs())
        results = service.run_due_jobs()
        if all(r.get("retry_after_ms") == OUTAGE_RETRY_MS for r in results) and len(results) == 2:
            break
    assert all(j["next_at_ms"] == clock["now"] + OUTAGE_RETRY_MS for j in service.ledger.jobs())
    apple.come_back()
    apple.answer_with(lambda endpoint, receipt, n: consumable("7" + receipt))
    clock["now"] += 5_000                         # Apple is back; the parked jobs are not due yet
    assert service.health()["jobs"]["due"] == 0
    assert service.submit_receipt("uC", signed_receipt("C"))["status"] == "accepted"     # a front's call succeeds...
    assert service.health()["jobs"]["due"] == 2                          # ...and wakes both
    delivered = sorted(t for r in service.run_due_jobs() for t in r.get("delivered", []))
    assert delivered == ["7A", "7B"]


def test_the_operators_retry_reaches_waiting_purchases(service, apple):
    from service import OUTAGE_RETRY_MS
    from support import consumable
    apple.go_down("503")
    assert service.submit_receipt("u1", signed_receipt("R"))["status"] == "pending"
    while service.ledger.jobs()[0]["attempt"] != 1 or service.ledger.jobs()[0]["tries"] == 0:
        service.test_clock["now"] = service.ledger.jobs()[0]["next_at_ms"]   # through the back-off
        service.run_due_jobs()
    apple.come_back()
    apple.answer_with(lambda endpoint, receipt, n: consumable("7" + receipt))
    [job] = service.ledger.jobs()
    assert job["next_at_ms"] > service.test_clock["now"]        # not due: a worker would wait
    [result] = service.retry_pending()                           # POST /jobs/retry
    assert result["delivered"] == ["7R"]
    assert OUTAGE_RETRY_MS < 15 * 60 * 1000


def test_a_receipt_the_library_refuses_gets_400_and_is_neither_queued_nor_sent_to_apple(service, apple, front):
    """Garbage used to be queued (Apple's 21002) and re-sent for three days. Now the library checks
    the receipt first: not a receipt, another app's, or signed by someone else is 400 with its
    verdict, nothing is stored and Apple is never asked."""
    from support import post
    from fake_receipts import make_receipt
    apple.answer_with(lambda endpoint, receipt, n: b'{"status": 21002}')
    cases = {"AAAA": "malformed",
             make_receipt("OTHER", bundle_id="com.other.app"): "bundle_mismatch"}
    for receipt, verdict in cases.items():
        code, body = post(front + "/receipts", {"user_id": "u1", "receipt": receipt})
        assert (code, body["status"], body["verdict"]) == (400, "invalid", verdict), body
        assert body["reason"]
    assert apple.calls == [] and service.ledger.jobs() == []
    assert 'claim_refusals_total{entry_point="receipt",reason="malformed"} 1.0' in service.metrics.text().decode()


def test_a_queued_receipt_the_library_refuses_ends_without_asking_apple(service, apple):
    """A job stored by an earlier release that queued anything: the worker checks it first too."""
    now = service.clock()
    service.ledger.run(lambda db: service.ledger.enqueue(db, "old", "u1", "receipt", "AAAA", "Production", 1, now, now, "21002"))
    [result] = service.run_due_jobs()
    assert (result["status"], result["verdict"]) == ("rejected", "malformed")
    assert apple.calls == [] and service.ledger.jobs() == []


# -- what an operator expects ---------------------------------------------------------------------

def run_service(*args: str, env: dict | None = None):
    import os
    import subprocess
    import sys
    from support import EXAMPLE
    return subprocess.run([sys.executable, str(EXAMPLE / "service.py"), *args], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **(env or {})))


def test_options_are_checked_at_start():
    for args, message in ((["--batch", "-5"], "argument --batch: must be above 0, not -5"),
                          (["--lease-ms", "0"], "argument --lease-ms: must be above 0, not 0"),
                          (["--poll-ms", "x"], "argument --poll-ms: must be a whole number, not 'x'"),
                          (["--port", "70000"], "argument --port: must be a port from 0 to 65535"),
                          (["--lease-ms", "1000", "--heartbeat-ms", "1000"], "argument --heartbeat-ms: must be below")):
        done = run_service("worker", *args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)


def test_a_startup_failure_is_one_json_line(tmp_path):
    import json
    done = run_service("worker", "--config", str(tmp_path / "missing.json"))
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    event = json.loads(line)
    assert event["event"] == "startup_failed" and "missing.json" in event["error"] and event["level"] == "error"


def test_liveness_readiness_jobs_and_the_access_log(service, apple, tmp_path, caplog):
    import logging
    from service import serve
    from support import get, operator_headers, post, user_headers, wait_for
    apple.script("R", "production", CONSUMABLE)
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with caplog.at_level(logging.INFO, logger="purchases"):
            assert post(url + "/receipts", {"user_id": "alice", "receipt": signed_receipt("R")})[0] == 200
            assert get(url + "/users/alice/entitlements", headers=user_headers("alice"))[0] == 200
            # a request's line is written once its answer has gone out: wait for it, not for a time
            wait_for(lambda: len([r for r in caplog.records if r.getMessage() == "http"]) >= 2, "two access log lines")
        assert get(url + "/livez") == (200, {"ok": True})
        assert get(url + "/readyz") == (200, {"ok": True, "ledger": service.ledger.kind})
        assert get(url + "/jobs")[0] == 401 and get(url + "/jobs", headers=operator_headers())[0] == 200
        lines = [r.fields for r in caplog.records if r.getMessage() == "http"]
        assert {k: lines[0][k] for k in ("method", "path", "route", "status", "user_id", "client")} == \
            {"method": "POST", "path": "/receipts", "route": "/receipts", "status": 200, "user_id": "alice",
             "client": "127.0.0.1"}
        assert lines[1]["route"] == "/users/{user_id}/entitlements" and lines[1]["duration_ms"] >= 0
        text = get_text(url + "/metrics", operator_headers())
        assert 'http_request_duration_seconds_count{method="POST",route="/receipts",status="2xx"} 1.0' in text
        assert 'route="/users/{user_id}/entitlements"' in text
        assert "deliveries_total 1.0" in text and "revocations_total 0.0" in text
        assert "db_requests_waiting" in text
    finally:
        server.shutdown()


def get_text(url: str, headers: dict) -> str:
    import urllib.request
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
        return r.read().decode()


def test_readiness_fails_and_liveness_holds_without_the_database(tmp_path, apple):
    from ledger import Ledger
    from service import PurchaseService, serve, worker_health
    from support import get
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    service = PurchaseService(config(), ledger, "", apple.url)
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    service.last_pass = __import__("time").monotonic()
    worker = worker_health(service, "127.0.0.1", 0, live_within_s=3600)
    url, worker_url = f"http://127.0.0.1:{server.server_address[1]}", f"http://127.0.0.1:{worker.server_address[1]}"
    try:
        assert get(worker_url + "/readyz")[0] == 200 and get(worker_url + "/livez")[0] == 200
        (tmp_path / "p.db").unlink()
        (tmp_path / "p.db").mkdir()          # the database cannot be opened any more
        assert get(url + "/readyz") == (503, {"ok": False, "error": "the database does not answer"})
        assert get(url + "/livez") == (200, {"ok": True})
        assert get(worker_url + "/readyz")[0] == 503 and get(worker_url + "/livez")[0] == 200
        service.last_pass = None             # a worker whose loop never ran is not live
        assert get(worker_url + "/livez")[0] == 503
    finally:
        server.shutdown()
        worker.shutdown()


def test_the_documented_local_trial_runs_a_receipt_a_storekit2_transaction_and_a_refund(tmp_path):
    """README.md's "Try it by hand": try_locally.py serves the fake Apple and the service; its
    other commands make a token, a receipt, a signed transaction and a notification."""
    import subprocess
    import sys
    import threading
    from support import EXAMPLE, get, post
    script = str(EXAMPLE / "try_locally.py")

    def command(*args: str) -> str:
        return subprocess.run([sys.executable, script, *args], check=True, capture_output=True, text=True,
                              timeout=120).stdout.strip()
    proc = subprocess.Popen([sys.executable, script, "serve", "--port", "0", "--dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend([proc.stdout.readline(), proc.stdout.readline()]))
        reader.start()
        reader.join(120)
        assert lines and "listening on" in lines[-1], lines
        url = "http://" + lines[-1].split(" listening on ")[1].split(" ")[0]
        headers = {"Authorization": "Bearer " + command("token", "alice")}
        code, body = post(url + "/receipts", {"receipt": command("receipt", "1001")}, headers=headers)
        assert (code, body["delivered"]) == (200, ["1001"]), body
        code, body = post(url + "/storekit2/transactions", {"signed_transaction": command("transaction", "2002")},
                          headers=headers)
        assert (code, body["delivered"], body["entitlements"]) == (200, ["2002"], {"pro": True}), body
        code, body = post(url + "/apple/notifications", json.loads(command("notification", "REFUND", "1001")), headers={})
        assert (code, body["status"], body["revoked"]) == (200, "apply", ["1001"]), body
        assert get(url + "/readyz")[0] == 200
    finally:
        proc.terminate()
        proc.wait(60)
