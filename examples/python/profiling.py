"""Where a front's CPU goes, for `make service-bench` (capacity.py): with SERVICE_PROFILE=FILE a
thread samples every thread's Python stack every few milliseconds, and at exit writes what was
running (the innermost frame that is not waiting) per function and per layer to FILE as JSON.
A thread blocked in a socket, a lock or select is waiting, not spending CPU, and is not counted;
the library's own time shows as the binding's function that called it."""
from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time
from collections import Counter

WAITING = frozenset(("select", "poll", "wait", "acquire", "_wait_for_tstate_lock", "get", "recv", "recv_into",
                     "accept", "sleep", "readline", "_worker", "wait_for", "getconn", "run_once", "_run_once",
                     "read", "readinto", "connect", "sock_recv", "_poll", "epoll", "join"))
LAYERS = (("/iapverify/", "library (iapverify binding and the C call)"), ("/psycopg", "database driver (psycopg)"),
          ("/uvicorn/", "HTTP server (uvicorn, h11)"), ("/h11/", "HTTP server (uvicorn, h11)"),
          ("/starlette/", "framework (FastAPI, Starlette, pydantic, anyio)"), ("/fastapi/", "framework (FastAPI, Starlette, pydantic, anyio)"),
          ("/pydantic", "framework (FastAPI, Starlette, pydantic, anyio)"), ("/anyio/", "framework (FastAPI, Starlette, pydantic, anyio)"),
          ("/json/", "JSON (json module)"), ("/logging/", "logging"), ("/prometheus_client/", "metrics (prometheus_client)"),
          ("/asyncio/", "event loop (asyncio)"), ("/concurrent/", "threads (concurrent, threading)"),
          ("/threading.py", "threads (concurrent, threading)"), ("/hmac.py", "tokens (hmac)"))


def layer(filename: str) -> str:
    for part, name in LAYERS:
        if part in filename:
            return name
    if os.path.dirname(os.path.abspath(filename)) == os.path.dirname(os.path.abspath(__file__)):
        return "the service's own code"
    return "other Python"


def start(path: str, every_s: float = 0.005) -> None:
    functions: Counter = Counter()
    layers: Counter = Counter()
    samples = [0]

    def sample() -> None:
        me = threading.get_ident()
        while True:
            time.sleep(every_s)
            for ident, frame in sys._current_frames().items():
                if ident == me or frame is None:
                    continue
                if frame.f_code.co_name in WAITING:
                    continue
                code = frame.f_code
                functions[f"{os.path.basename(code.co_filename)}:{code.co_name}"] += 1
                layers[layer(code.co_filename)] += 1
                samples[0] += 1

    def write() -> None:
        with open(path, "w") as f:
            json.dump({"samples": samples[0], "functions": functions.most_common(25),
                       "layers": layers.most_common()}, f)
    threading.Thread(target=sample, name="profiler", daemon=True).start()
    atexit.register(write)
