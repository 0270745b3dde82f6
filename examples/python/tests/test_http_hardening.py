"""The HTTP front under hostile and broken input (each of these failed on the previous front):
credentials for user and operator endpoints, bodies checked against a schema with short JSON
reasons, no internal text in any answer, body size and arrival limits, idle connections, and the
entitlements endpoint's ETag. SQLite and PostgreSQL where the database matters."""
from __future__ import annotations

import json
import os
import resource
import socket
import time

import pytest

from http_api import Auth, Limits
from service import serve
from support import (CONSUMABLE, MERCURY, NOW, OPERATOR_TOKEN, USER_SECRET, Cluster, get, operator_headers, post,
                     user_headers, wait_for, signed_receipt)


@pytest.fixture
def front(service):
    server = serve(service, "127.0.0.1", 0, retry_every_s=None, limits=Limits(body_timeout_s=0.5))
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def raw(url: str, request: bytes, read_timeout_s: float = 30) -> bytes:
    """Sends bytes as they are and returns everything the server answers before it closes."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=read_timeout_s) as s:
        s.sendall(request)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and b"Connection: close" not in request:
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                length = [int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")]
                if length and len(body) >= length[0]:
                    break
        return b"".join(chunks)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


# -- who may ask what ----------------------------------------------------------------------------

def test_operator_endpoints_need_the_operator_token(service, front):
    assert post(front + "/jobs/retry", {}, headers={})[0] == 401
    assert post(front + "/jobs/retry", {}, headers=user_headers("u1"))[0] == 401
    assert post(front + "/jobs/retry", {}, headers={"Authorization": "Bearer " + OPERATOR_TOKEN[:-1] + "x"})[0] == 401
    assert post(front + "/jobs/retry", {}, headers=operator_headers()) == (200, {"results": []})
    assert get(front + "/metrics")[0] == 401


def test_user_endpoints_answer_only_for_the_authenticated_user(service, apple, front):
    apple.script("R", "production", CONSUMABLE)
    assert post(front + "/receipts", {"user_id": "alice", "receipt": signed_receipt("R")})[0] == 200
    code, body = get(front + "/users/alice/entitlements", headers=user_headers("alice"))
    assert code == 200 and body["entitlements"][0]["active"] is True
    assert get(front + "/users/alice/entitlements", headers=user_headers("mallory"))[0] == 403
    assert get(front + "/users/alice/entitlements")[0] == 401
    expired = Auth(USER_SECRET, OPERATOR_TOKEN).user_token("alice", NOW - 1)      # the service's clock is NOW
    assert get(front + "/users/alice/entitlements", headers={"Authorization": "Bearer " + expired})[0] == 401
    forged = Auth("another-secret-0123456789", OPERATOR_TOKEN).user_token("alice", NOW + 3_600_000)
    assert get(front + "/users/alice/entitlements", headers={"Authorization": "Bearer " + forged})[0] == 401
    # A body naming another user than the token is refused, and makes nothing.
    code, body = post(front + "/orders", {"user_id": "alice", "product_id": "com.test.app.mercury"},
                      headers=user_headers("mallory"))
    assert (code, body) == (403, {"error": "user_id is not the authenticated user"})
    assert post(front + "/receipts", {"receipt": signed_receipt("R")}, headers={})[0] == 401
    assert len(service.ledger.orders()) == 0


def test_entitlements_carry_an_etag_that_changes_with_access(service, apple, front):
    apple.script("R", "production", CONSUMABLE)
    headers = user_headers("alice")
    first = _get_raw(front + "/users/alice/entitlements", headers)
    assert first[0] == 200
    tag = first[1]["etag"]
    assert _get_raw(front + "/users/alice/entitlements", {**headers, "If-None-Match": tag})[0] == 304
    assert post(front + "/receipts", {"user_id": "alice", "receipt": signed_receipt("R")})[0] == 200
    second = _get_raw(front + "/users/alice/entitlements", {**headers, "If-None-Match": tag})
    assert second[0] == 200 and second[1]["etag"] != tag


def _get_raw(url: str, headers: dict) -> tuple[int, dict]:
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}


def test_metrics_are_prometheus_text(service, apple, front):
    apple.script("R", "production", CONSUMABLE)
    post(front + "/receipts", {"user_id": "alice", "receipt": signed_receipt("R")})
    post(front + "/apple/notifications", {"signedPayload": "a.b.c"})
    import urllib.request
    with urllib.request.urlopen(urllib.request.Request(front + "/metrics", headers=operator_headers())) as r:
        text = r.read().decode()
        assert r.headers["Content-Type"].startswith("text/plain")
    assert 'iapverify_verdicts_total{entry_point="receipt",verdict="valid"} 1.0' in text
    assert 'iapverify_verdicts_total{entry_point="notification",verdict="malformed"} 1.0' in text
    assert 'apple_calls_total{api="verifyReceipt",outcome="accept"}' in text
    assert 'queue_jobs{state="pending"} 0.0' in text and "queue_oldest_due_wait_seconds" in text


# -- bodies: a schema, short reasons, nothing internal ---------------------------------------------

@pytest.mark.parametrize("body, status, field", [
    (b'{"user_id": 12345, "product_id": "com.test.app.mercury"}', 422, "user_id"),     # a number is not an id
    (b'{"user_id": 1e999, "product_id": "com.test.app.mercury"}', 422, "user_id"),     # nor is Infinity
    (b'{"user_id": "u1", "product_id": "com.test.app.mercury", "extra": 1}', 422, "extra"),
    (b'{"user_id": "u1"}', 422, "product_id"),
    (b'{"user_id": "u1", "product_id": "' + b"x" * 200 + b'"}', 422, "product_id"),
    (b'{"user_id": "' + b"u" * 65 + b'", "product_id": "p"}', 422, "user_id"),
    (b'["u1"]', 422, "body"),
    (b'{"user_id": "u1", "product_id": ', 400, None),
    (b'\xff\xfe', 400, None),
])
def test_bad_bodies_get_a_short_reason_and_make_nothing(service, front, body, status, field):
    code, answer = post(front + "/orders", body, headers=user_headers("u1"))
    assert code == status, answer
    assert set(answer) <= {"error", "field", "problem"} and len(json.dumps(answer)) < 400
    if field:
        assert answer["field"] == field
    assert service.ledger.orders() == []


def test_an_order_for_a_product_outside_the_catalog_is_refused(service, front):
    code, body = post(front + "/orders", {"user_id": "u1", "product_id": "com.nope"})
    assert (code, body) == (422, {"error": "product_id 'com.nope' is not in the service's catalog"})
    assert service.ledger.orders() == []


def test_a_body_without_the_json_content_type_is_415(service, front):
    import urllib.error
    import urllib.request
    req = urllib.request.Request(front + "/orders", data=b'{"product_id": "com.test.app.mercury"}',
                                 headers={**user_headers("u1"), "Content-Type": "application/x-www-form-urlencoded"})
    try:
        urllib.request.urlopen(req, timeout=30)
        raise AssertionError("accepted")
    except urllib.error.HTTPError as e:
        assert (e.code, json.loads(e.read())) == (415, {"error": "send the body as JSON with Content-Type: application/json"})
    assert service.ledger.orders() == []


def test_a_database_failure_answers_503_without_internals(tmp_path, apple):
    from ledger import Ledger
    from service import PurchaseService
    from support import config
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    service = PurchaseService(config(), ledger, "", apple.url)
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        (tmp_path / "p.db").unlink()
        (tmp_path / "p.db").mkdir()          # the database cannot be opened any more
        code, body = post(url + "/orders", {"user_id": "u1", "product_id": "com.test.app.mercury"})
        assert (code, body) == (503, {"error": "temporarily unavailable, try again"})
        code, body = get(url + "/health")
        assert (code, body) == (503, {"ok": False, "error": "the database does not answer"})
    finally:
        server.shutdown()


# -- sizes, slow bodies and idle connections -------------------------------------------------------

def test_a_body_over_the_limit_is_refused_before_it_is_read(service, apple, front):
    # 200 MB announced: refused at once from the header, nothing read, Apple never asked.
    head = (b"POST /receipts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 200000000\r\n" + b"Authorization: " + user_headers("u1")["Authorization"].encode()
            + b"\r\n\r\n")
    answer = raw(front, head + b'{"receipt": "')
    assert status_of(answer) == 413 and b"larger than 1048576 bytes" in answer
    # The same without a Content-Length (chunked): refused once it passes the limit.
    chunk = b"A" * 65536
    chunked = head.replace(b"Content-Length: 200000000", b"Transfer-Encoding: chunked") + \
        b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(20))
    answer = raw(front, chunked)
    assert status_of(answer) == 413
    assert apple.calls == [] and service.ledger.pending_count() == 0


def test_a_body_shorter_than_announced_times_out_with_408(service, front):
    head = (b"POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
            + b"Authorization: " + user_headers("u1")["Authorization"].encode() + b"\r\n\r\n")
    answer = raw(front, head + b'{"user_id": "u1"')     # 16 of the 100 bytes, then nothing
    assert status_of(answer) == 408 and b"did not arrive in time" in answer
    assert service.ledger.orders() == []


def test_idle_connections_take_no_thread_and_are_closed(tmp_path, apple):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))
    cluster = Cluster(tmp_path, apple.url)
    try:
        url = cluster.front("--connections-per-address", "2000")   # all from 127.0.0.1: the cap is not what this tests
        port = int(url.rsplit(":", 1)[1])
        pid = cluster.procs[0].pid
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1500)]
        try:
            wait_for(lambda: len(os.listdir(f"/proc/{pid}/fd")) >= 1500, "the front to accept them")
            assert len(os.listdir(f"/proc/{pid}/task")) < 50      # an event loop, not a thread per connection

            def closed_by_server(s: socket.socket) -> bool:
                s.settimeout(30)          # a deadline for a hung server, far above the 5 s idle limit
                try:
                    return s.recv(1) == b""
                except ConnectionResetError:
                    return True
                except TimeoutError:
                    return False
            assert all(closed_by_server(s) for s in idle)          # after keep_alive_s without a request
        finally:
            for s in idle:
                s.close()
        assert get(url + "/health")[0] == 200
    finally:
        cluster.stop()


def test_a_slow_request_head_is_cut_off(service):
    """A client that sends its headers a byte at a time no longer holds its slot: the head must be
    complete within head_timeout_s, and the server closes the connection when it is not."""
    server = serve(service, "127.0.0.1", 0, retry_every_s=None, limits=Limits(head_timeout_s=0.5, keep_alive_s=30))
    port = server.server_address[1]
    try:
        slow = socket.create_connection(("127.0.0.1", port))
        slow.settimeout(0.2)
        head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 400
        closed = False
        for i in range(len(head)):           # one byte every 0.1 s: 40 s for the whole head
            try:
                slow.sendall(head[i:i + 1])
                if slow.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
        slow.close()
        assert closed, "the server kept a connection whose head never completed"
        # A prompt request on a new connection, and two on one keep-alive connection, still work.
        assert get(f"http://127.0.0.1:{port}/health")[0] == 200
        keep = socket.create_connection(("127.0.0.1", port))
        keep.settimeout(10)
        for _ in range(2):
            keep.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += keep.recv(4096)
            assert answer.startswith(b"HTTP/1.1 200"), answer[:40]
            length = int([line for line in answer.split(b"\r\n") if line.lower().startswith(b"content-length:")][0].split(b":")[1])
            body = answer.split(b"\r\n\r\n", 1)[1]
            while len(body) < length:
                body += keep.recv(4096)
        keep.close()
    finally:
        server.shutdown()
