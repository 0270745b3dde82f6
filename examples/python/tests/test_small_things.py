"""The smaller findings of issue 42, each of which failed on the previous service: a request
without a token read the database first; a 503 and a forged notification were each logged twice;
what uvicorn answered itself had no access line or metric; the token parser took non-ASCII digits;
a missing secret stopped a front with plain text; try_locally.py needed a package no requirements
file named; nothing showed how to run PostgreSQL fronts and workers against the fakes by hand;
loadtest.py called a higher latency lower."""
from __future__ import annotations

import ast
import hashlib
import hmac
import json
import logging
import os
import socket
import subprocess
import sys
import threading

import pytest

from service import serve
from support import (EXAMPLE, ROOT, USER_SECRET, get, operator_headers, post, user_headers,
                     wait_for)


@pytest.fixture
def sqlite_service(tmp_path, apple):
    from ledger import Ledger
    from service import PurchaseService
    from support import config
    ledger = Ledger(url="", sqlite_path=str(tmp_path / "p.db"))
    yield PurchaseService(config(), ledger, "", apple.url)
    ledger.close()


def started(service):
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def test_a_request_without_a_valid_token_never_waits_on_the_database(sqlite_service):
    def away() -> int:
        raise OSError("the database does not answer")
    sqlite_service.ledger.clock = away          # the database's clock: what a token's expiry is read by
    server, base = started(sqlite_service)
    try:
        assert get(base + "/users/alice/entitlements")[0] == 401
        assert get(base + "/users/alice/entitlements", headers={"Authorization": "Bearer alice.1.abc"})[0] == 401
        assert get(base + "/users/alice/entitlements", headers=user_headers("alice"))[0] == 503
    finally:
        server.shutdown()


def test_the_token_parser_takes_ascii_digits_only(sqlite_service):
    message = "alice.\u00b2\u00b3"                # '²³': str.isdigit() says yes, int() says no
    token = message + "." + hmac.new(USER_SECRET.encode(), message.encode(), hashlib.sha256).hexdigest()
    server, base = started(sqlite_service)
    try:
        assert get(base + "/users/alice/entitlements", headers={"Authorization": "Bearer " + token})[0] == 401
    finally:
        server.shutdown()


def test_a_503_and_a_forged_notification_are_each_logged_once(tmp_path, sqlite_service, caplog):
    caplog.set_level(logging.INFO)
    server, base = started(sqlite_service)
    try:
        assert post(base + "/apple/notifications", {"signedPayload": "a.b.c"})[0] == 400
        (tmp_path / "p.db").unlink()
        (tmp_path / "p.db").mkdir()             # the database cannot be opened any more
        assert post(base + "/orders", {"user_id": "u1", "product_id": "com.test.app.mercury"})[0] == 503
        wait_for(lambda: len([r for r in caplog.records if r.getMessage() == "http"]) >= 2, "both access lines")
    finally:
        server.shutdown()
    events = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sorted(events) == ["notification_refused", "request_failed"], events


def test_what_uvicorn_answers_itself_has_an_access_line_and_a_metric(sqlite_service, caplog):
    caplog.set_level(logging.INFO, logger="purchases")
    server, base = started(sqlite_service)
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=30) as s:
            s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400")
        wait_for(lambda: [r for r in caplog.records if r.getMessage() == "http"], "the access line")
        with __import__("urllib.request").request.urlopen(__import__("urllib.request").request.Request(
                base + "/metrics", headers=operator_headers()), timeout=30) as r:
            text = r.read().decode()
    finally:
        server.shutdown()
    [line] = [r.fields for r in caplog.records if r.getMessage() == "http" and r.fields.get("status") == 400]
    assert line["client"] == "127.0.0.1" and line["route"] == "unparsed"
    assert 'connection_refusals_total{reason="bad_request"} 1.0' in text


def test_a_front_without_its_secrets_stops_with_one_json_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SERVICE_USER_TOKEN_SECRET", "SERVICE_OPERATOR_TOKEN")}
    done = subprocess.run([sys.executable, str(EXAMPLE / "service.py"), "front", "--port", "0",
                           "--sqlite-path", str(tmp_path / "p.db")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    event = json.loads(line)
    assert event["event"] == "startup_failed" and "SERVICE_USER_TOKEN_SECRET" in event["error"]


def test_every_package_the_example_imports_is_in_its_requirements():
    """try_locally.py and the fakes it runs included: cryptography was named nowhere."""
    local = {p.stem for p in EXAMPLE.glob("*.py")} | {"fakeapi", "iapverify"}
    files = list(EXAMPLE.glob("*.py")) + [ROOT / "Tests" / "shared" / "fakeapple" / "fakeapi.py"]
    imported = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {m for m in imported if m not in sys.stdlib_module_names and m not in local and m != "__future__"}
    named = {line.split("#")[0].strip().split("[")[0].split(">")[0].split("=")[0].strip().replace("-", "_")
             for line in (EXAMPLE / "requirements.txt").read_text().splitlines() if line.split("#")[0].strip()}
    assert third_party <= named, sorted(third_party - named)
    assert "cryptography" in third_party


def test_loadtest_says_higher_for_higher():
    from loadtest import compare
    assert compare(10.0, 8.0) == "1.25x higher"
    assert compare(8.0, 10.0) == "1.25x lower"
    assert compare(5.0, 5.0) == "the same"


def test_postgresql_fronts_and_a_worker_against_the_fakes_by_hand(tmp_path, pg_url):
    """README.md's "Several processes by hand": try_locally.py fakes, then two fronts and a worker
    on PostgreSQL, started as the README says, serve a receipt and a StoreKit 2 transaction."""
    script = str(EXAMPLE / "try_locally.py")
    fakes = subprocess.Popen([sys.executable, script, "fakes", "--dir", str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    procs = [fakes]
    try:
        wait_for(lambda: (tmp_path / "env").exists(), "the fakes' env file")
        env = dict(os.environ, DATABASE_URL=pg_url, PYTHONUNBUFFERED="1")
        for line in (tmp_path / "env").read_text().splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = __import__("shlex").split(value)[0]
        fronts = []
        for role in ("front", "front", "worker"):
            proc = subprocess.Popen([sys.executable, str(EXAMPLE / "service.py"), role, "--config",
                                     str(tmp_path / "config.json"), *(["--port", "0"] if role == "front" else [])],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            procs.append(proc)
            line: list = []
            reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
            reader.start()
            reader.join(120)
            assert line and line[0], role
            if role == "front":
                fronts.append("http://" + line[0].split(" listening on ")[1].split(" ")[0])

        def command(*args: str) -> str:
            return subprocess.run([sys.executable, script, *args], check=True, capture_output=True, text=True,
                                  timeout=120).stdout.strip()
        headers = {"Authorization": "Bearer " + command("token", "alice")}
        code, body = post(fronts[0] + "/receipts", {"receipt": command("receipt", "1001")}, headers=headers)
        assert (code, body["delivered"]) == (200, ["1001"]), body
        code, body = post(fronts[1] + "/storekit2/transactions", {"signed_transaction": command("transaction", "2002")},
                          headers=headers)
        assert (code, body["delivered"]) == (200, ["2002"]), body
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(60)
