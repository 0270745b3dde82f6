"""The example service under load, as `make bench` runs it: a throwaway PostgreSQL, 2 fronts and 2
workers as processes, the fake /verifyReceipt of try_locally.py, and 50 clients at once. Each
client, for each purchase, creates an order, sends a receipt (a new purchase each time), then asks
for the user's entitlements three times: what an app does around a purchase and at launch.

    python examples/python/loadtest.py [--clients 50] [--purchases 8] [--rounds 2] [--out FILE]

It runs the same load with keep-alive connections (each client keeps one connection per front)
and with a new connection per request, interleaved round by round so the machine's noise falls on
both, and prints requests per second and the 50th and 99th percentile latency of each, with
their ratio. This is a measurement, never a test: it passes or fails only on the service's
answers (every purchase delivered once, to its user, and its order paid), not on its speed.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import try_locally  # noqa: E402
from fake_apple import FakeApple  # noqa: E402
from fake_receipts import make_receipt  # noqa: E402
from http_api import Auth  # noqa: E402

USER_SECRET, OPERATOR_TOKEN = "loadtest-user-secret-0123456789", "loadtest-operator-token-0123456789"


class PostgreSQL:
    """A throwaway server on a Unix socket in a temporary directory (as root, run as postgres)."""

    def __init__(self, extra: tuple = ()):
        self.bin = next(Path("/usr/lib/postgresql").glob("*/bin"))
        self.run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.tmp = Path(tempfile.mkdtemp(prefix="iapv-load-pg-"))
        self.data, self.sock = self.tmp / "data", self.tmp / "sock"
        self.sock.mkdir()
        if self.run_as:
            shutil.chown(self.tmp, "postgres")
            shutil.chown(self.sock, "postgres")
        subprocess.run(self.run_as + [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"],
                       check=True, capture_output=True)
        subprocess.run(self.run_as + [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.tmp / "log"), "-w",
                                      "-o", f"-k {self.sock} -c listen_addresses='' -c max_connections=200 {' '.join(extra)}",
                                      "start"],
                       check=True, capture_output=True)
        self.url = f"postgresql://postgres@/postgres?host={self.sock}"

    def database(self, name: str) -> str:
        """A new database on this server; its URL."""
        import psycopg
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@/{name}?host={self.sock}"

    def stop(self) -> None:
        subprocess.run(self.run_as + [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"],
                       capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


class Services:
    def __init__(self, tmp: Path, database_url: str, apple_url: str):
        self.tmp, self.procs, self.fronts = tmp, [], []
        config = tmp / "config.json"
        config.write_text(json.dumps(try_locally.local_config()))
        env = dict(os.environ, DATABASE_URL=database_url, APPLE_BASE_URL=apple_url, APPLE_SHARED_SECRET="load",
                   SERVICE_USER_TOKEN_SECRET=USER_SECRET, SERVICE_OPERATOR_TOKEN=OPERATOR_TOKEN, PYTHONUNBUFFERED="1")
        env.pop("APPLE_API_KEY_FILE", None)
        common = ["--config", str(config), "--pool-size", "10"]
        for i in range(2):
            line = self._start(env, ["front", "--port", "0", "--claims-per-user", "1000000",
                                     "--claims-per-address", "1000000", "--orders-per-user", "1000000",
                                     "--apple-concurrency", "64", "--max-concurrency", "500", *common], f"front{i}")
            self.fronts.append(line.split(" listening on ")[1].split(" ")[0])
        for i in range(2):
            self._start(env, ["worker", "--poll-ms", "100", *common], f"worker{i}")

    def _start(self, env: dict, args: list[str], name: str) -> str:
        log = open(self.tmp / f"{name}.log", "w")
        proc = subprocess.Popen([sys.executable, str(HERE / "service.py"), *args], env=env, cwd=self.tmp,
                                stdout=subprocess.PIPE, stderr=log, text=True)
        self.procs.append(proc)
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"{name} did not start: {(self.tmp / f'{name}.log').read_text()[-2000:]}")
        return line.strip()

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


class Client:
    """One app user: its own connections (kept, or one per request) and its latencies."""

    def __init__(self, fronts: list[str], user: str, keep_alive: bool):
        self.fronts, self.user, self.keep_alive = fronts, user, keep_alive
        self.headers = {"Authorization": "Bearer " + Auth(USER_SECRET, OPERATOR_TOKEN).user_token(user, 4102444800000),
                        "Content-Type": "application/json"}
        self.connections: dict[str, http.client.HTTPConnection] = {}
        self.latencies: list[float] = []
        self.errors: list[str] = []

    def call(self, front: str, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        start = time.perf_counter()
        conn = self.connections.get(front) if self.keep_alive else None
        if conn is None:
            host, port = front.split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
        headers = dict(self.headers, Connection="keep-alive" if self.keep_alive else "close")
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        payload = response.read()
        self.latencies.append(time.perf_counter() - start)
        if self.keep_alive and not response.will_close:
            self.connections[front] = conn
        else:
            conn.close()
            self.connections.pop(front, None)
        if response.status >= 300:
            self.errors.append(f"{method} {path}: {response.status} {payload[:200]!r}")
        return json.loads(payload or b"null")

    def purchase(self, receipt: str, product: str, i: int) -> None:
        front = self.fronts[i % len(self.fronts)]
        self.call(front, "POST", "/orders", {"product_id": product})
        self.call(front, "POST", "/receipts", {"receipt": receipt})
        for k in range(3):
            self.call(self.fronts[(i + k + 1) % len(self.fronts)], "GET", f"/users/{self.user}/entitlements")


def run_round(fronts: list[str], receipts: dict[str, list[str]], keep_alive: bool) -> tuple[float, list[float], list[str]]:
    clients = [Client(fronts, user, keep_alive) for user in receipts]
    start = threading.Barrier(len(clients) + 1)

    def work(client: Client) -> None:
        start.wait()
        for i, receipt in enumerate(receipts[client.user]):
            try:
                client.purchase(receipt, try_locally.COINS, i)
            except Exception as e:   # reported, and the run fails on it
                client.errors.append(f"{type(e).__name__}: {e}")
    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    start.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    for c in clients:
        for conn in c.connections.values():
            conn.close()
    return elapsed, [x for c in clients for x in c.latencies], [e for c in clients for e in c.errors]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--purchases", type=int, default=8, help="per client and round")
    parser.add_argument("--rounds", type=int, default=2, help="of each mode, interleaved")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="iapv-load-"))
    pg, apple, services = PostgreSQL(), FakeApple(), None
    apple.answer_with(lambda endpoint, name, n: try_locally.verify_receipt_answer(name))
    try:
        services = Services(tmp, pg.url, apple.url)
        modes: dict[str, list[tuple[float, list[float]]]] = {"keep-alive": [], "new connection per request": []}
        number, expected = 0, {}
        for r in range(args.rounds):
            for mode in modes:
                receipts: dict[str, list[str]] = {}
                for c in range(args.clients):
                    user = f"r{r}{mode[0]}c{c}"
                    for _ in range(args.purchases):
                        number += 1
                        name = str(10_000_000 + number)   # the fake answers with transaction `name`
                        receipts.setdefault(user, []).append(make_receipt(name, bundle_id=try_locally.BUNDLE_ID))
                        expected[name] = user
                elapsed, latencies, errors = run_round(services.fronts, receipts, mode == "keep-alive")
                if errors:
                    raise SystemExit(f"loadtest: {len(errors)} requests failed, first: {errors[0]}")
                modes[mode].append((elapsed, latencies))
        check_ledger(pg.url, expected)
        report(modes, args)
    finally:
        if services:
            services.stop()
        apple.close()
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def check_ledger(url: str, expected: dict[str, str]) -> None:
    """The answers, not the speed: every purchase delivered once, to its user, and one order paid by it."""
    import psycopg
    with psycopg.connect(url) as conn:
        deliveries = dict(conn.execute("SELECT transaction_id, user_id FROM deliveries").fetchall())
        paid = conn.execute("SELECT COUNT(*) FROM orders WHERE status = 'paid'").fetchone()[0]
    if deliveries != expected or paid != len(expected):
        raise SystemExit(f"loadtest: {len(deliveries)} deliveries and {paid} paid orders for {len(expected)} purchases")


def compare(value: float, baseline: float) -> str:
    """How value stands against baseline, in words that match the ratio: "1.25x lower" only when
    it is lower (before, 0.80x "lower" said higher)."""
    if baseline <= 0 or value <= 0:
        return "not comparable"
    if abs(value - baseline) <= 0.005 * baseline:
        return "the same"
    return f"{baseline / value:.2f}x lower" if value < baseline else f"{value / baseline:.2f}x higher"


def report(modes: dict, args) -> None:
    lines = [f"service load: {args.clients} clients, 2 fronts, 2 workers, PostgreSQL; per purchase an order, a receipt "
             f"and 3 entitlement reads; {args.rounds} interleaved rounds of {args.clients * args.purchases} purchases per mode",
             f"{'mode':<28} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8}"]
    figures = {}
    for mode, rounds in modes.items():
        latencies = [x for _, lat in rounds for x in lat]
        rate = statistics.median(len(lat) / elapsed for elapsed, lat in rounds)
        figures[mode] = (rate, percentile(latencies, 0.50) * 1000, percentile(latencies, 0.99) * 1000)
        lines.append(f"{mode:<28} {rate:>11.0f} {figures[mode][1]:>8.1f} {figures[mode][2]:>8.1f}")
    keep, fresh = figures["keep-alive"], figures["new connection per request"]
    lines.append(f"keep-alive against a new connection per request: {keep[0] / fresh[0]:.2f}x the requests/s, "
                 f"p50 {compare(keep[1], fresh[1])}, p99 {compare(keep[2], fresh[2])}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
