"""Fixtures for the example service: a fake Apple, an SQLite ledger, and one throwaway PostgreSQL
server per test session (on a Unix socket) with a fresh database for each test that asks."""
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from fake_apple import FakeApple  # noqa: E402
from ledger import Ledger  # noqa: E402
from service import PurchaseService  # noqa: E402
from support import NOW, OPERATOR_TOKEN, USER_SECRET, config  # noqa: E402

os.environ.setdefault("SERVICE_USER_TOKEN_SECRET", USER_SECRET)
os.environ.setdefault("SERVICE_OPERATOR_TOKEN", OPERATOR_TOKEN)


def _pg_bin() -> Path:
    return next(Path("/usr/lib/postgresql").glob("*/bin"))


def _run_as() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@pytest.fixture(scope="session")
def pg_server():
    """Starts PostgreSQL on a Unix socket in a temporary directory; yields the socket directory."""
    tmp = Path(tempfile.mkdtemp(prefix="iapv-pg-"))
    data, sock = tmp / "data", tmp / "sock"
    sock.mkdir()
    if _run_as():
        shutil.chown(tmp, "postgres")
        shutil.chown(sock, "postgres")
    subprocess.run(_run_as() + [str(_pg_bin() / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True)
    # fsync off: the server is thrown away; durability across a crash of PostgreSQL itself is not what is tested
    subprocess.run(_run_as() + [str(_pg_bin() / "pg_ctl"), "-D", str(data), "-l", str(tmp / "log"), "-w", "-o",
                                f"-k {sock} -c listen_addresses='' -c max_connections=300 -c fsync=off", "start"],
                   check=True, capture_output=True)
    try:
        yield sock
    finally:
        subprocess.run(_run_as() + [str(_pg_bin() / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


_names = itertools.count()


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the session's server."""
    import psycopg
    name = f"t{os.getpid()}_{next(_names)}"
    with psycopg.connect(f"postgresql://postgres@/postgres?host={pg_server}", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql://postgres@/{name}?host={pg_server}"


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger(request, tmp_path):
    if request.param == "sqlite":
        led = Ledger(url="", sqlite_path=str(tmp_path / "purchases.db"))
    else:
        led = Ledger(url=request.getfixturevalue("pg_url"))
    yield led
    led.close()


@pytest.fixture
def api():
    """The fake App Store Server API of Tests/shared/fakeapple, on two ports (production, sandbox)."""
    sys.path.insert(0, str(HERE.parents[2] / "Tests" / "shared" / "fakeapple"))
    from fakeapi import FakeAppleAPI
    fake = FakeAppleAPI(HERE.parents[2] / "Tests" / "shared" / "fakeapple")
    fake.start()
    yield fake
    fake.stop()
    # Every request the fake got carried a valid bearer token and a known path.
    assert fake.errors == []


@pytest.fixture
def apple():
    fake = FakeApple()
    yield fake
    fake.close()


@pytest.fixture
def service(ledger, apple):
    clock = {"now": NOW}
    s = PurchaseService(config(), ledger, "secret", apple.url, clock=lambda: clock["now"])
    s.test_clock = clock
    return s


@pytest.fixture
def front(service):
    """The service's HTTP API on a free port (no worker thread); yields its base URL."""
    from service import serve
    server = serve(service, "127.0.0.1", 0, retry_every_s=None)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
