"""The deployment for more than one process (README.md, "Behind nginx"): the real nginx with
deploy/nginx.conf in front of two fronts started with --trusted-proxies. A reconnecting
slowloris from one address leaves /livez and /readyz at 200; the client's address the fronts log
and limit by is the one nginx saw, whatever X-Forwarded-For the client sent; 100 users
behind one address are not refused for sharing it."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from support import EXAMPLE, Cluster, get, post, user_headers, wait_for
from test_attacker import slowloris

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed (scripts/bootstrap installs it)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, prefix: Path, fronts: list[str]):
        self.prefix, self.port = prefix, free_port()
        prefix.mkdir(parents=True, exist_ok=True)
        text = (EXAMPLE / "deploy" / "nginx.conf").read_text()
        text = text.replace("@PREFIX@", str(prefix)).replace("@LISTEN@", f"127.0.0.1:{self.port}").replace(
            "@FRONTS@", " ".join(f"server {f.removeprefix('http://')};" for f in fronts))
        (prefix / "nginx.conf").write_text(text)
        subprocess.run([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-e", str(prefix / "error.log")],
                       check=True, capture_output=True, timeout=60)
        self.url = f"http://127.0.0.1:{self.port}"
        wait_for(lambda: _answers(self.url + "/livez"), "nginx to answer")

    def stop(self) -> None:
        subprocess.run([NGINX, "-p", str(self.prefix), "-c", str(self.prefix / "nginx.conf"), "-e",
                        str(self.prefix / "error.log"), "-s", "stop"], capture_output=True, timeout=60)


def _answers(url: str) -> bool:
    try:
        return get(url)[0] == 200
    except OSError:
        return False


@pytest.fixture
def behind_nginx(tmp_path, apple):
    yield from nginx_and_fronts(tmp_path, apple, 2)


@pytest.fixture
def one_front_behind_nginx(tmp_path, apple):
    yield from nginx_and_fronts(tmp_path, apple, 1)


def nginx_and_fronts(tmp_path, apple, n: int):
    cluster = Cluster(tmp_path, apple.url)
    nginx = None
    try:
        # The default claim limits, and the default connection cap: nginx's address has none.
        fronts = [cluster.start("front", "--port", "0", "--trusted-proxies", "127.0.0.1")[1] for _ in range(n)]
        nginx = Nginx(tmp_path / "nginx", ["http://" + line.split(" listening on ")[1].split(" ")[0] for line in fronts])
        yield cluster, nginx
    finally:
        if nginx:
            nginx.stop()
        cluster.stop()


def access_lines(cluster: Cluster) -> list[dict]:
    lines = []
    for log in cluster.logs:
        for line in log.read_text().splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if doc.get("event") == "http":
                lines.append(doc)
    return lines


def test_a_reconnecting_slowloris_behind_nginx_leaves_probes_at_200(behind_nginx):
    cluster, nginx = behind_nginx
    stop = threading.Event()
    attacker = threading.Thread(target=slowloris, args=(nginx.port, "127.0.0.2", 230, stop))
    attacker.start()
    try:
        time.sleep(1.0)
        probes = [get(nginx.url + path)[0] for _ in range(40) for path in ("/livez", "/readyz")]
        assert probes == [200] * 80
    finally:
        stop.set()
        attacker.join()


def test_the_client_address_is_the_one_nginx_saw(behind_nginx, apple):
    cluster, nginx = behind_nginx
    forged = {"X-Forwarded-For": "203.0.113.7"}
    with socket.socket() as s:   # from 127.0.0.2, with a forged header
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", nginx.port))
        s.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.7\r\nConnection: close\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 200")
    assert get(nginx.url + "/livez", headers=forged)[0] == 200
    wait_for(lambda: len(access_lines(cluster)) >= 3, "the access lines")
    clients = [line["client"] for line in access_lines(cluster) if line["path"] == "/livez"]
    assert "127.0.0.2" in clients and "203.0.113.7" not in clients, clients


def test_many_users_behind_one_address_are_not_refused_for_it(one_front_behind_nginx, apple):
    """100 users behind one address (a NAT), one claim each, on one front: before, the front's
    per-address limit (60 a minute) refused 40 of them. 100 requests at once are within nginx's
    own burst for an address."""
    cluster, nginx = one_front_behind_nginx
    garbage = {"receipt": "bm90IGEgcmVjZWlwdA=="}       # refused by the library, Apple never asked
    codes = [post(nginx.url + "/receipts", garbage, headers=user_headers(f"nat{i}"))[0] for i in range(100)]
    assert codes == [400] * 100
