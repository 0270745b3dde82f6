"""A fake /verifyReceipt on 127.0.0.1 for tests: it replays stored Apple responses.

A receipt is known by its name: the name a receipt of fake_receipts.py carries, or the text itself
for any other. Each name maps to a script per endpoint: a list of responses served in order (the last
one repeats); `answer_with` covers receipts without a script. Every call is recorded, so tests
can check the order of endpoints and count calls per receipt.

Tests also control when and how it fails, without timers:
- `hold_from(n)`: the n-th call from now on and every later one waits until `release()`: a slow
  Apple whose slowness ends when the test says.
- `go_down(kind)`: "refuse" stops listening (connection refused; the port stays reserved), "503" answers HTTP 503,
  "21005" answers Apple's temporary status, "timeout" never answers until `come_back()`, "drip" sends
  the headers and then one byte of the body every 0.2 s (for 60 s): a per-read timeout never fires.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional

from fake_receipts import name_of


class FakeApple:
    def __init__(self):
        self.scripts: dict[tuple[str, str], list[bytes]] = {}
        self.default: Optional[Callable[[str, str, int], bytes]] = None
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.outage: Optional[str] = None
        self.held = 0                      # calls waiting right now
        self._hold_at: Optional[int] = None
        self._gate = threading.Event()
        self._gate.set()
        self._served: dict[str, int] = {}  # answers given per receipt from its script or answer_with
        self.port = 0
        self._placeholder: Optional[socket.socket] = None
        self.server = self._start()
        self.url = f"http://127.0.0.1:{self.port}"

    # -- what it answers ----------------------------------------------------------------------------

    def script(self, receipt: str, endpoint: str, *responses: bytes) -> None:
        self.scripts[(receipt, endpoint)] = list(responses)

    def answer_with(self, respond: Callable[[str, str, int], bytes]) -> None:
        """respond(endpoint, receipt, n) for receipts without a script; n counts its answers from 0."""
        self.default = respond

    # -- failures the test switches on and off -------------------------------------------------------

    def hold_from(self, n: int) -> None:
        """Counting from now, call number n (1-based) and all later calls wait for release()."""
        with self.lock:
            self._hold_at = len(self.calls) + n
            self._gate.clear()

    def release(self) -> None:
        with self.lock:
            self._hold_at = None
            self._gate.set()

    def go_down(self, kind: str) -> None:
        assert kind in ("refuse", "503", "21005", "timeout", "drip"), kind
        with self.lock:
            was, self.outage = self.outage, kind
            if kind == "timeout":
                self._gate.clear()
            elif was == "timeout" and self._hold_at is None:
                self._gate.set()
        if kind == "refuse" and was != "refuse":
            self._stop()
        elif kind != "refuse" and was == "refuse":
            self.server = self._start()

    def come_back(self) -> None:
        with self.lock:
            was, self.outage = self.outage, None
        if was == "refuse":
            self.server = self._start()
        self.release()

    # -- what happened -------------------------------------------------------------------------------

    def calls_for(self, receipt: str) -> int:
        with self.lock:
            return sum(1 for _, r in self.calls if r == receipt)

    def wait_until(self, condition: Callable[["FakeApple"], bool], timeout_s: float = 60.0) -> None:
        """Waits, under the lock, until condition(self) holds (a generous deadline, not a measure)."""
        with self.changed:
            if not self.changed.wait_for(lambda: condition(self), timeout_s):
                raise AssertionError(f"fake Apple: condition not met; {len(self.calls)} calls, {self.held} held")

    def close(self) -> None:
        self.release()
        if self.outage == "refuse":
            self._placeholder.close()
        else:
            self._stop(keep_port=False)

    # -- inside -------------------------------------------------------------------------------------

    def _answer(self, endpoint: str, receipt: str) -> tuple[int, bytes]:
        with self.lock:
            self.calls.append((endpoint, receipt))
            number = len(self.calls)
            outage = self.outage
            hold = outage == "timeout" or (self._hold_at is not None and number >= self._hold_at)
            if hold:
                self.held += 1
            self.changed.notify_all()
        if hold:
            self._gate.wait()
            with self.lock:
                self.held -= 1
                self.changed.notify_all()
            if outage == "timeout":
                return 503, b"{}"  # whoever still listens has long given up
        if outage == "503":
            return 503, b"<html>Service Unavailable</html>"
        if outage == "21005":
            return 200, b'{"status": 21005}'
        with self.lock:
            script = self.scripts.get((receipt, endpoint))
            if script:
                return 200, script.pop(0) if len(script) > 1 else script[0]
            n = self._served.get(receipt, 0)
            self._served[receipt] = n + 1
        return 200, self.default(endpoint, receipt, n) if self.default else b'{"status": 21003}'

    def _start(self) -> ThreadingHTTPServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                endpoint = self.path.strip("/").split("/")[0]
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if fake.outage == "drip":
                    with fake.lock:
                        fake.calls.append((endpoint, name_of(request.get("receipt-data", ""))))
                        fake.changed.notify_all()
                    try:
                        self.send_response(200)
                        self.send_header("Content-Length", "300")
                        self.end_headers()
                        for _ in range(300):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(0.2)
                            if fake.outage != "drip":
                                break
                    except OSError:
                        pass  # the caller gave up at its deadline
                    return
                code, body = fake._answer(endpoint, name_of(request.get("receipt-data", "")))
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the caller gave up (its timeout) or was killed

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address) -> None:
                pass

        if self._placeholder is not None:
            self._placeholder.close()
            self._placeholder = None
        server = Server(("127.0.0.1", self.port), Handler)
        self.port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def _stop(self, keep_port: bool = True) -> None:
        """Closes the server. With keep_port, a socket stays bound to the port without listening:
        connections are refused, and no other program can take the port before come_back()."""
        self.server.shutdown()
        self.server.server_close()
        if keep_port:
            self._placeholder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._placeholder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._placeholder.bind(("127.0.0.1", self.port))
