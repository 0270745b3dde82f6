"""Helpers shared by the example's tests: real Apple responses, HTTP calls, waiting on a
condition, and front/worker processes driven by a clock the test moves."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Optional

from fake_receipts import fake_config, make_receipt as signed_receipt  # noqa: F401 (the tests' receipts)

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent
ROOT = HERE.parents[2]
CONFIG = EXAMPLE / "config.json"
RESPONSES = ROOT / "Tests" / "IAPVerifyTests" / "Fixtures" / "verifyreceipt"

CONSUMABLE = (RESPONSES / "alexalok_Valid_Sandbox_Consumable_And_Active_Subscription_Excluding_Old_Transactions.json").read_bytes()
FROM_TEST_ENV = (RESPONSES / "alexalok_Invalid_Receipt_Is_From_Test_Environment.json").read_bytes()
NOW = 1608230700000  # while the response's subscription is active
MERCURY = "1000000736318436"
MERCURY_BOUGHT = 1604059039000
MARS_LATEST = "1000000755926609"
MARS_LATEST_BOUGHT = 1608230644000
DEADLINE_S = 120.0  # generous: a condition that holds is met long before; this only ends a hung test
# The credentials of the tests' services (conftest.py puts them in the environment, so that
# fronts started as processes use them too).
USER_SECRET = "test-user-token-secret-0123456789"
OPERATOR_TOKEN = "test-operator-token-0123456789"
FOREVER_MS = 253_402_300_799_000


def config(sandbox: bool = True) -> dict:
    """The example's config; the tests replay Apple's sandbox answers, so Sandbox is accepted
    (the service's --allow-sandbox)."""
    doc = fake_config(json.loads(CONFIG.read_text()))   # the tests' receipts are signed by the fake PKI
    if sandbox:
        doc["environments"] = doc["environments"] + ["Sandbox"]
    return doc


def user_headers(user: str) -> dict:
    from http_api import Auth
    return {"Authorization": "Bearer " + Auth(USER_SECRET, OPERATOR_TOKEN).user_token(user, FOREVER_MS)}


def operator_headers() -> dict:
    return {"Authorization": "Bearer " + OPERATOR_TOKEN}


def consumable(transaction_id: str, purchase_ms: int = NOW) -> bytes:
    """The real response with its consumable purchase renamed and re-dated: one distinct purchase per receipt."""
    doc = json.loads(CONSUMABLE)
    for t in doc["receipt"]["in_app"]:
        if t["transaction_id"] == MERCURY:
            t["transaction_id"] = t["original_transaction_id"] = transaction_id
            t["purchase_date_ms"] = t["original_purchase_date_ms"] = str(purchase_ms)
    return json.dumps(doc).encode()


def post(url: str, body, timeout_s: float = 60, headers: Optional[dict] = None) -> tuple[int, dict]:
    """POSTs JSON (or bytes as they are). Without headers, a body with a user_id is sent with
    that user's token, and /jobs/retry with the operator's: what the app and the cron job do."""
    if headers is None:
        headers = (operator_headers() if url.endswith("/jobs/retry")
                   else user_headers(body["user_id"]) if isinstance(body, dict) and isinstance(body.get("user_id"), str)
                   and body["user_id"] else {})
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def get(url: str, headers: Optional[dict] = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def concurrently(n: int, call: Callable[[int], object]) -> list:
    """Runs call(0..n-1) on n threads started together; returns the results in index order."""
    results: list = [None] * n
    errors: list = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = call(i)
        except BaseException as e:  # surfaced below, not lost in a thread
            errors.append(e)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def wait_for(condition: Callable[[], object], what: str, deadline_s: float = DEADLINE_S, on_fail: Callable[[], str] = lambda: ""):
    """Polls until condition() is truthy and returns it. The deadline only ends a hung test; no
    outcome depends on how long anything took."""
    end = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}\n{on_fail()}")
        time.sleep(0.05)


class Cluster:
    """Fronts and workers as real processes (`python service.py front|worker|all`), all reading
    the time from one file that the test moves: leases and backoff end when the test says."""

    def __init__(self, tmp: Path, apple_url: str, database_url: str = "", start_ms: int = NOW):
        self.tmp = tmp
        self.clock_file = tmp / "clock"
        self.now = start_ms
        self.set_clock(start_ms)
        self.env = dict(os.environ, APPLE_BASE_URL=apple_url, DATABASE_URL=database_url,
                        SERVICE_CLOCK_FILE=str(self.clock_file), APPLE_SHARED_SECRET="secret", PYTHONUNBUFFERED="1",
                        ALLOW_SANDBOX="1", SERVICE_USER_TOKEN_SECRET=USER_SECRET, SERVICE_OPERATOR_TOKEN=OPERATOR_TOKEN)
        if not database_url:
            self.env.pop("DATABASE_URL")
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.config_file = tmp / "cluster-config.json"   # trusts the fake PKI the tests' receipts are signed by
        self.config_file.write_text(json.dumps(config()))

    def set_clock(self, ms: int) -> None:
        self.now = ms
        part = self.clock_file.with_suffix(".new")
        part.write_text(str(ms))
        os.replace(part, self.clock_file)  # readers see the old time or the new one, never half

    def advance(self, ms: int) -> None:
        self.set_clock(self.now + ms)

    def start(self, role: str, *args: str) -> tuple[subprocess.Popen, str]:
        """Starts a process and waits for the line it prints once ready; returns (process, that line)."""
        log = self.tmp / f"{role}-{len(self.procs)}.log"
        with open(log, "w") as err:
            proc = subprocess.Popen([sys.executable, str(EXAMPLE / "service.py"), role, "--poll-ms", "20",
                                     "--config", str(self.config_file), *args],
                                    cwd=self.tmp, env=self.env, stdout=subprocess.PIPE, stderr=err, text=True)
        self.procs.append(proc)
        self.logs.append(log)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(DEADLINE_S)
        if not line or not line[0]:
            raise AssertionError(f"{role} did not start:\n{self.log_text()}")
        return proc, line[0].strip()

    # The tests' clocks stand still, so every claim falls in one rate-limit minute: not what they test.
    # And 50 clients at once each ask Apple themselves (not queued for a worker), as they did before.
    UNLIMITED = ("--claims-per-user", "100000", "--claims-per-address", "100000", "--orders-per-user", "100000",
                 "--apple-concurrency", "64")

    def front(self, *args: str) -> str:
        """A front on a free port; returns its base URL."""
        _, line = self.start("front", "--port", "0", *self.UNLIMITED, *args)
        return "http://" + line.split(" listening on ")[1].split(" ")[0]

    def all_in_one(self, *args: str) -> str:
        _, line = self.start("all", "--port", "0", *self.UNLIMITED, *args)
        return "http://" + line.split(" listening on ")[1].split(" ")[0]

    def worker(self, *args: str) -> subprocess.Popen:
        proc, _ = self.start("worker", *args)
        return proc

    def log_text(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text()[-4000:]}" for log in self.logs if log.exists())

    def stop(self, proc: Optional[subprocess.Popen] = None) -> None:
        for p in [proc] if proc else self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in [proc] if proc else self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if p.stdout:
                p.stdout.close()
