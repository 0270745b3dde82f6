"""The front under an attacker and at capacity (issue 42), directly exposed; tests/test_nginx.py
does the same behind nginx. Each of these failed on the previous front:

- a reconnecting slowloris from one address kept every probe at 503: now that address holds at
  most its connection cap, probes are answered outside the request limit, and the refusal is
  logged with the client's address;
- invented HTTP methods grew /metrics without bound: labels now come from fixed sets;
- any X-Forwarded-For from 127.0.0.1 was believed (uvicorn's default); honest users behind one
  address shared its claim limit: the address counts only behind a trusted proxy;
- POST /orders had no limit, and pending orders never expired;
- claims waiting on an Apple that never answers filled the thread pool that serves reads;
- /metrics failed while the database was away."""
from __future__ import annotations

import logging
import socket
import threading
import time
import urllib.request

import pytest

from http_api import Limits
from service import serve
from support import CONSUMABLE, NOW, get, operator_headers, post, signed_receipt, user_headers, wait_for


@pytest.fixture
def sqlite_service(tmp_path, apple):
    """For what does not depend on the database: SQLite only."""
    from ledger import Ledger
    from service import PurchaseService
    from support import config
    clock = {"now": NOW}
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    service = PurchaseService(config(), ledger, "secret", apple.url, clock=lambda: clock["now"])
    service.test_clock = clock
    yield service
    ledger.close()


def start(service, **limits):
    server = serve(service, "127.0.0.1", 0, retry_every_s=None, limits=Limits(**limits))
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def metrics_text(base: str) -> str:
    with urllib.request.urlopen(urllib.request.Request(base + "/metrics", headers=operator_headers()), timeout=30) as r:
        return r.read().decode()


def slowloris(port: int, source: str, n: int, stop: threading.Event) -> list[int]:
    """n connections from `source`, each sending a header byte now and then and reopened as soon
    as the server closes it, until stop; returns how many times connections were opened."""
    opened = [0]
    socks: list = [None] * n

    def reopen(i: int) -> None:
        s = socket.socket()
        s.bind((source, 0))
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass
        socks[i] = s
        opened[0] += 1
    for i in range(n):
        reopen(i)
    while not stop.is_set():
        for i, s in enumerate(socks):
            try:
                s.sendall(b"X")
                s.setblocking(False)
                closed = s.recv(1) == b""
            except BlockingIOError:
                closed = False
            except OSError:
                closed = True
            if closed:
                s.close()
                reopen(i)
        time.sleep(0.05)
    for s in socks:
        s.close()
    return opened


def test_a_reconnecting_slowloris_from_one_address_leaves_probes_and_others_served(sqlite_service, apple, caplog):
    """230 connections from 127.0.0.2, each reopened when the front closes it: the front holds 50
    of them (the default connections_per_address) and closes the rest when accepted; every probe
    and an honest user's request, from 127.0.0.1, are answered 200. (Before, with the same
    limits, every probe was 503.)"""
    caplog.set_level(logging.WARNING, logger="purchases")
    server, base = start(sqlite_service, max_concurrency=20, head_timeout_s=0.5)
    stop = threading.Event()
    opened: list = []
    attacker = threading.Thread(target=lambda: opened.append(slowloris(server.server_address[1], "127.0.0.2", 230, stop)))
    attacker.start()
    began = time.monotonic()
    try:
        time.sleep(1.0)   # the attacker's connections are open (and being reopened)
        probes = [get(base + path)[0] for _ in range(40) for path in ("/livez", "/readyz")]
        assert probes == [200] * 80
        assert get(base + "/users/alice/entitlements", headers=user_headers("alice"))[0] == 200
    finally:
        stop.set()
        attacker.join()
        text = metrics_text(base)
        server.shutdown()
    assert opened[0][0] > 230                  # it did reconnect
    refused = [r for r in caplog.records if r.getMessage() == "connection_refused"]
    assert refused and all(r.fields["client"] == "127.0.0.2" for r in refused)
    assert "connections_per_address" in {r.fields["reason"] for r in refused}
    # Throttled: one line per address and reason (here also head_timeout) every 10 s, the rest counted.
    assert len(refused) <= 2 * (1 + int((time.monotonic() - began) / 10)), len(refused)
    assert 'connection_refusals_total{reason="connections_per_address"}' in text


def test_requests_beyond_the_limit_are_refused_but_probes_are_answered(sqlite_service, apple, caplog):
    """Requests in hand count, not connections: with 2 claims waiting on Apple and a limit of 2,
    a third request is 503 (counted, and with its access line) while /livez and /readyz are 200."""
    caplog.set_level(logging.INFO, logger="purchases")
    apple.script("R", "production", CONSUMABLE)
    apple.hold_from(1)
    server, base = start(sqlite_service, max_concurrency=2, apple_concurrency=4)
    results: list = []
    try:
        claims = [threading.Thread(target=lambda i=i: results.append(
            post(base + "/receipts", {"user_id": f"u{i}", "receipt": signed_receipt("R")}))) for i in range(2)]
        for t in claims:
            t.start()
        apple.wait_until(lambda a: a.held == 2)
        assert post(base + "/orders", {"user_id": "u9", "product_id": "com.test.app.mercury"})[0] == 503
        assert get(base + "/livez")[0] == 200 and get(base + "/readyz")[0] == 200
        apple.release()
        for t in claims:
            t.join()
        wait_for(lambda: post(base + "/orders", {"user_id": "u9", "product_id": "com.test.app.mercury"})[0] == 201,
                 "the claims' requests to leave the count")
        assert 'connection_refusals_total{reason="max_concurrency"} 1.0' in metrics_text(base)
        assert [(r.fields["path"], r.fields["client"]) for r in caplog.records
                if r.getMessage() == "http" and r.fields.get("status") == 503] == [("/orders", "127.0.0.1")]
    finally:
        apple.release()
        server.shutdown()


def test_invented_methods_do_not_grow_the_metrics(sqlite_service):
    """5,000 requests, each with its own invented method (h11 takes any token): /metrics stays
    small, because the method label is one of a fixed set (and the status is its class)."""
    server, base = start(sqlite_service)
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=60) as s:
            for batch in range(10):
                s.sendall(b"".join(b"M%dX /nowhere HTTP/1.1\r\nHost: x\r\n\r\n" % (batch * 500 + i) for i in range(500)))
                seen = b""
                while seen.count(b"HTTP/1.1 ") < 500:
                    seen += s.recv(1 << 20)
        text = metrics_text(base)
    finally:
        server.shutdown()
    assert len(text.encode()) < 100_000, len(text)
    assert 'method="other",route="unmatched",status="4xx"' in text
    assert "M17X" not in text


def test_x_forwarded_for_is_believed_only_from_a_trusted_proxy(sqlite_service, caplog):
    caplog.set_level(logging.INFO, logger="purchases")
    forged = {"X-Forwarded-For": "203.0.113.7"}
    server, base = start(sqlite_service)                       # no trusted proxy: the header is the client's text
    try:
        assert get(base + "/livez", headers=forged)[0] == 200
    finally:
        server.shutdown()
    server, base = start(sqlite_service, trusted_proxies=("127.0.0.1",))   # as behind nginx on this host
    try:
        assert get(base + "/livez", headers={"X-Forwarded-For": "198.51.100.1, 203.0.113.9"})[0] == 200
    finally:
        server.shutdown()
    clients = [r.fields.get("client") for r in caplog.records if r.getMessage() == "http"]
    assert clients == ["127.0.0.1", "203.0.113.9"]     # the proxy's own entry, the last


def test_claims_are_limited_per_user_and_per_address_only_behind_a_trusted_proxy(sqlite_service):
    """100 honest users behind one address (a NAT, or a balancer nobody said to trust) each send
    one claim: none is refused for the address. Behind a trusted proxy the client's own address
    is known, and it is limited; another address is not."""
    garbage = {"receipt": "bm90IGEgcmVjZWlwdA=="}       # refused by the library, Apple never asked
    server, base = start(sqlite_service, claims_per_address=10)
    try:
        codes = [post(base + "/receipts", garbage, headers=user_headers(f"nat{i}"))[0] for i in range(100)]
        assert codes == [400] * 100
    finally:
        server.shutdown()
    server, base = start(sqlite_service, claims_per_address=10, trusted_proxies=("127.0.0.0/8",))
    try:
        via = {"X-Forwarded-For": "192.0.2.50"}
        codes = [post(base + "/receipts", garbage, headers={**user_headers(f"p{i}"), **via})[0] for i in range(12)]
        assert codes == [400] * 10 + [429] * 2
        other = {"X-Forwarded-For": "192.0.2.51"}
        assert post(base + "/receipts", garbage, headers={**user_headers("q1"), **other})[0] == 400
    finally:
        server.shutdown()


def test_orders_are_rate_limited_per_user_and_expire(service):
    server, base = start(service, orders_per_user=5)
    try:
        codes = [post(base + "/orders", {"user_id": "u1", "product_id": "com.test.app.mercury"})[0] for _ in range(8)]
        assert codes == [201] * 5 + [429] * 3
        assert post(base + "/orders", {"user_id": "u2", "product_id": "com.test.app.mercury"})[0] == 201
    finally:
        server.shutdown()
    ttl = service.purchases.order_ttl_ms
    service.test_clock["now"] = NOW + ttl + 1
    service.create_order("u1", "com.test.app.mercury")       # the user's old pending orders expire
    statuses = sorted(o["status"] for o in service.ledger.orders() if o["user_id"] == "u1")
    assert statuses == ["expired"] * 5 + ["pending"]


def test_an_expired_order_is_not_paid(service, apple):
    apple.script("R", "production", CONSUMABLE)
    service.create_order("u1", "com.test.app.mercury")
    service.test_clock["now"] = NOW + service.purchases.order_ttl_ms + 1
    assert service.purchases.expire_stale_orders() == 1          # what the worker does every few minutes
    result = service.submit_receipt("u1", signed_receipt("R"))
    assert result["status"] == "accepted" and result["paid"] == {}
    assert [o["status"] for o in service.ledger.orders()] == ["expired"]


def test_a_silent_apple_never_stalls_reads_or_readiness(service, apple):
    """Apple accepts connections and never answers. 50 claims: 2 take the front's Apple slots and
    wait; the other 48 are answered 202 at once and queued for a worker. Reads and readiness are
    answered while Apple is still silent (each within a generous bound: a stalled pool took 10 s)."""
    service.apple.timeout_s = 120.0
    apple.script("R", "production", CONSUMABLE)
    apple.go_down("timeout")
    server, base = start(service, apple_concurrency=2, claims_per_user=1000)
    answers: list = [None] * 50
    try:
        threads = [threading.Thread(target=lambda i=i: answers.__setitem__(i, post(
            base + "/receipts", {"user_id": f"u{i}", "receipt": signed_receipt("R")}, timeout_s=300)))
                   for i in range(50)]
        for t in threads:
            t.start()
        apple.wait_until(lambda a: len(a.calls) >= 2)
        for t in threads:
            t.join(timeout=0.01)
        deadline = time.monotonic() + 60
        while sum(a is not None for a in answers) < 48 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(a[0] for a in answers if a is not None) == [202] * 48
        assert all(a[1]["why"] == "front busy" for a in answers if a is not None)
        for _ in range(20):
            started = time.monotonic()
            assert get(base + "/users/u1/entitlements", headers=user_headers("u1"))[0] == 200
            assert get(base + "/readyz")[0] == 200
            assert time.monotonic() - started < 5.0
        assert len(apple.calls) == 2 and service.ledger.pending_count() == 48
    finally:
        apple.come_back()
        for t in threads:
            t.join()
        server.shutdown()


def test_metrics_are_served_while_the_database_is_away(tmp_path, apple):
    """The database's gauges are the last ones read, marked stale; the scrape never fails."""
    from ledger import Ledger
    from service import PurchaseService
    from support import config
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    service = PurchaseService(config(), ledger, "", apple.url)
    server, base = start(service)
    try:
        text = wait_for(lambda: (lambda t: t if "db_stats_stale 0.0" in t else None)(metrics_text(base)),
                        "a fresh read of the database's gauges")
        assert 'queue_jobs{state="pending"} 0.0' in text
        (tmp_path / "p.db").unlink()
        (tmp_path / "p.db").mkdir()          # the database cannot be opened any more
        text = metrics_text(base)
        assert "db_stats_stale 1.0" in text and 'queue_jobs{state="pending"} 0.0' in text
        assert get(base + "/livez")[0] == 200 and get(base + "/readyz")[0] == 503
        # A worker's own /metrics (--health-port) too: before, its connection was closed.
        from service import worker_health
        health = worker_health(service, "127.0.0.1", 0, live_within_s=60)
        try:
            port = health.server_address[1]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
                assert r.status == 200 and b"db_stats_stale 1.0" in r.read()
        finally:
            health.shutdown()
    finally:
        server.shutdown()
