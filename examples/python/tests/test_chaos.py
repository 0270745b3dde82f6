"""Chaos, with real processes on a PostgreSQL of this test's own (so it can be restarted): two
fronts and two workers take purchases while a worker and a front are killed, Apple is down past
the library's back-off, and PostgreSQL restarts. Nothing is lost or doubled, and once Apple is
back every purchase is delivered within a minute of its return, by the service's clock. Every
wait is for a condition; the clock moves only when the test says."""
from __future__ import annotations

import collections
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from ledger import Ledger
from service import OUTAGE_RETRY_MS
from support import Cluster, consumable, post, signed_receipt, wait_for

MERCURY_ID = "com.test.app.mercury"
LEASE_MS = 30_000     # the killed worker's jobs come back within the minute


def txn(name: str) -> str:
    return "7" + name.rjust(15, "0")


class OwnPostgreSQL:
    """A PostgreSQL server for one test, which the test may restart."""

    def __init__(self):
        self.bin = next(Path("/usr/lib/postgresql").glob("*/bin"))
        self.run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.tmp = Path(tempfile.mkdtemp(prefix="iapv-chaos-pg-"))
        self.data, self.sock = self.tmp / "data", self.tmp / "sock"
        self.sock.mkdir()
        if self.run_as:
            shutil.chown(self.tmp, "postgres")
            shutil.chown(self.sock, "postgres")
        subprocess.run(self.run_as + [str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"],
                       check=True, capture_output=True)
        self.pg_ctl("start")
        self.url = f"postgresql://postgres@/postgres?host={self.sock}"

    def pg_ctl(self, action: str, *extra: str) -> None:
        subprocess.run(self.run_as + [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.tmp / "log"),
                                      "-w", "-o", f"-k {self.sock} -c listen_addresses='' -c fsync=off", *extra, action],
                       check=True, capture_output=True)

    def restart(self) -> None:
        self.pg_ctl("restart", "-m", "fast")   # every open connection is cut

    def stop(self) -> None:
        subprocess.run(self.run_as + [str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture
def own_pg():
    server = OwnPostgreSQL()
    yield server
    server.stop()


def test_killed_processes_an_apple_outage_and_a_database_restart_lose_and_double_nothing(tmp_path, apple, own_pg):
    apple.answer_with(lambda endpoint, name, n: consumable(txn(name)))
    cluster = Cluster(tmp_path, apple.url, own_pg.url)
    view = Ledger(url=own_pg.url)
    users: dict[str, str] = {}

    def buy(front: str, n: int, expect: int) -> None:
        name, user = f"{n}", f"u{n}"
        assert post(front + "/orders", {"user_id": user, "product_id": MERCURY_ID})[0] == 201
        status, body = post(front + "/receipts", {"user_id": user, "receipt": signed_receipt(name)})
        assert status == expect, body
        users[name] = user
    try:
        fronts = [cluster.front(), cluster.front()]
        workers = [cluster.worker("--lease-ms", str(LEASE_MS), "--batch", "5") for _ in range(2)]
        for n in range(10):                              # Apple answers: delivered at once
            buy(fronts[n % 2], n, 200)

        apple.go_down("503")
        for n in range(10, 30):                          # Apple fails: queued
            buy(fronts[n % 2], n, 202)
        apple.hold_from(1)                               # the next call a worker makes hangs...
        cluster.advance(1_000)                           # ...once the first retries are due
        apple.wait_until(lambda a: a.held >= 1)
        workers[0].send_signal(signal.SIGKILL)           # a worker dies holding leases, one mid-call
        workers[0].wait()
        cluster.procs[1].send_signal(signal.SIGKILL)     # and a front dies
        cluster.procs[1].wait()
        apple.release()
        workers.append(cluster.worker("--lease-ms", str(LEASE_MS), "--batch", "5"))

        own_pg.restart()                                 # every pooled connection is now dead
        for n in range(30, 40):                          # the surviving front still takes purchases
            buy(fronts[0], n, 202)

        dead = f"{socket.gethostname()}:{workers[0].pid}"

        def quiet() -> bool:
            """Nothing due, and no live worker holds a job: no call to Apple is in flight."""
            return all(j["next_at_ms"] > cluster.now and j["lease_owner"] in (None, dead) for j in view.jobs())
        for step in (2_000, 4_000, 8_000, LEASE_MS):     # through the back-off; the dead worker's leases end
            cluster.advance(step)
            wait_for(quiet, "the workers to try every due job", on_fail=cluster.log_text)
        assert view.pending_count() == 30 and len(view.deliveries()) == 10

        apple.come_back()                                # Apple is back at cluster.now...
        back_at = cluster.now
        cluster.advance(OUTAGE_RETRY_MS)                 # ...and a minute later everything is delivered
        wait_for(lambda: view.pending_count() == 0, "every purchase after Apple's return",
                 on_fail=lambda: f"now {cluster.now}, jobs {view.jobs()}\n" + cluster.log_text())
        assert cluster.now - back_at <= 60_000

        deliveries = collections.Counter((d["transaction_id"], d["user_id"]) for d in view.deliveries())
        assert deliveries == {(txn(name), user): 1 for name, user in users.items()}
        assert sorted((o["user_id"], o["status"], o["transaction_id"]) for o in view.orders()) == \
            sorted((user, "paid", txn(name)) for name, user in users.items())
        assert {f["outcome"] for f in view.finished()} == {"delivered"}
    except BaseException:
        print(cluster.log_text())
        raise
    finally:
        apple.release()
        cluster.stop()
        view.close()
