"""A fake /verifyReceipt on 127.0.0.1 for tests: it replays stored Apple responses.

Each receipt-data maps to a script per endpoint: a list of responses served in order (the last
one repeats). Every call is recorded, so tests can check the order of endpoints.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeApple:
    def __init__(self):
        self.scripts: dict[tuple[str, str], list[bytes]] = {}
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                endpoint = self.path.strip("/").split("/")[0]
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                body = fake._next(endpoint, request.get("receipt-data", ""))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def script(self, receipt: str, endpoint: str, *responses: bytes) -> None:
        self.scripts[(receipt, endpoint)] = list(responses)

    def _next(self, endpoint: str, receipt: str) -> bytes:
        with self.lock:
            self.calls.append((endpoint, receipt))
            script = self.scripts.get((receipt, endpoint)) or [b'{"status": 21003}']
            return script.pop(0) if len(script) > 1 else script[0]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
