"""What an operator lives with (one test per defect found running the service): keep-alive
requests are not held by Nagle's algorithm, and the recurring recovery jobs do not count as a
purchase waiting on Apple."""
from __future__ import annotations

import json
import socket

from http_api import bind
from service import PurchaseService
from support import config
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
