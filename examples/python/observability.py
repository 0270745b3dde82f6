"""What an operator sees: one JSON object per log line, and the Prometheus metrics of /metrics."""
from __future__ import annotations

import json
import logging
import sys
import threading
import time
from typing import Optional

log = logging.getLogger("purchases")


class JSONLogFormatter(logging.Formatter):
    """One JSON object per line: time, level, event and its fields (ids, verdicts, outcomes)."""

    def format(self, record: logging.LogRecord) -> str:
        doc = {"ts": round(record.created, 3), "level": record.levelname.lower(), "event": record.getMessage()}
        doc.update(getattr(record, "fields", {}))
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(doc, default=str)


def log_event(level: int, event: str, **fields) -> None:
    log.log(level, event, extra={"fields": {k: v for k, v in fields.items() if v is not None}})


def setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONLogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    logging.getLogger("uvicorn.access").disabled = True   # requests are logged by the service itself


HTTP_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"))


def method_label(method: str) -> str:
    """A request's method as a metric label: one of HTTP_METHODS or `other`. h11 accepts any
    token as a method, and each label value is a series kept until the process ends."""
    return method if method in HTTP_METHODS else "other"


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status <= 599 else "other"


class Metrics:
    """What an operator graphs, in Prometheus' text format (GET /metrics). Each service has its own
    registry, so several in one process (tests) do not mix. Every label comes from a fixed set
    (entry points, verdicts, routes' templates, methods, status classes, reasons), so no client
    can add series.

    The queue's gauges are read from the database when scraped, so any front reports the whole
    queue; a scrape waits at most `db_wait_s` for them, and while the database does not answer
    the last values read are served with `db_stats_stale 1` and their age: /metrics never fails
    and never waits on the database."""

    def __init__(self, ledger, db_wait_s: float = 0.5) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram
        from prometheus_client.core import GaugeMetricFamily
        self.registry = CollectorRegistry()
        self.verdicts = Counter("iapverify_verdicts", "Verdicts given, per entry point",
                                ["entry_point", "verdict"], registry=self.registry)
        self.apple_calls = Counter("apple_calls", "Calls to Apple, per API and outcome",
                                   ["api", "outcome"], registry=self.registry)
        self.notification_lag = Histogram("notification_lag_seconds", "Received minus signed, per notification",
                                           ["source"], registry=self.registry,
                                           buckets=(1, 5, 30, 60, 300, 1800, 3600, 6 * 3600, 86400, 7 * 86400))
        self.refusals = Counter("ownership_refusals", "Purchases refused because another user owns them",
                                ["entry_point"], registry=self.registry)
        self.claim_refusals = Counter("claim_refusals", "Claims refused before Apple was asked, per reason",
                                      ["entry_point", "reason"], registry=self.registry)
        self.connection_refusals = Counter(
            "connection_refusals", "Connections and requests the front refused before the API saw them, per reason"
            " (connections_per_address, max_connections, head_timeout, max_concurrency, bad_request)",
            ["reason"], registry=self.registry)
        self.http = Histogram("http_request_duration_seconds", "HTTP requests by route template, method and status class",
                              ["route", "method", "status"], registry=self.registry,
                              buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.deliveries = Counter("deliveries", "Purchases delivered (each transaction once)", registry=self.registry)
        self.revocations = Counter("revocations", "Deliveries taken back (refunds, revocations)", registry=self.registry)
        self.db_stats = DatabaseStats(ledger, db_wait_s)
        stats = self.db_stats

        class Queue:
            def collect(self):
                counts, age_s, stale = stats.read()
                yield GaugeMetricFamily("db_stats_stale", "1 while the database gauges below are not fresh"
                                        " (the database did not answer the last scrape in time)", value=1 if stale else 0)
                yield GaugeMetricFamily("db_stats_age_seconds", "Age of the database gauges below",
                                        value=age_s if counts is not None else -1)
                if counts is None:
                    return
                depth = GaugeMetricFamily("queue_jobs", "Jobs in the work queue", labels=["state"])
                for state in ("pending", "due", "leased"):
                    depth.add_metric([state], counts[state])
                yield depth
                yield GaugeMetricFamily("queue_oldest_due_wait_seconds", "How long the oldest due job has waited",
                                        value=counts["oldest_due_wait_ms"] / 1000)
                yield GaugeMetricFamily("queue_given_up_jobs", "Jobs given up (a user paid and did not get it)",
                                        value=counts["given_up"])
                # Every worker's job outcomes, from the database: any front reports them, no worker port needed.
                finished = GaugeMetricFamily("jobs_finished", "Jobs ended, per outcome (all workers)", labels=["outcome"])
                for outcome, n in counts["finished"].items():
                    finished.add_metric([outcome], n)
                yield finished

        class Pool:
            def collect(self):
                stats = ledger._pool.get_stats() if getattr(ledger, "_pool", None) is not None else {}
                for key, what in (("pool_size", "Database connections open"),
                                  ("pool_available", "Database connections idle in the pool"),
                                  ("requests_waiting", "Requests waiting for a database connection")):
                    yield GaugeMetricFamily(f"db_{key}", what, value=stats.get(key, 0))
        self.registry.register(Queue())
        self.registry.register(Pool())

    def text(self) -> bytes:
        from prometheus_client import generate_latest
        return generate_latest(self.registry)


class DatabaseStats:
    """The queue's counts for /metrics: read in a thread of their own, waited for at most wait_s;
    the last values read are kept for when the database does not answer. One read at a time."""

    def __init__(self, ledger, wait_s: float):
        self.ledger, self.wait_s = ledger, wait_s
        self.lock = threading.Lock()
        self.counts: Optional[dict] = None
        self.read_at = 0.0
        self.reading: Optional[threading.Thread] = None
        self.failed = False

    def _refresh(self) -> None:
        try:
            counts = self.ledger.queue_counts(self.ledger.now())
            with self.lock:
                self.counts, self.read_at, self.failed = counts, time.monotonic(), False
        except Exception as e:
            with self.lock:
                self.failed = True
            log_event(logging.WARNING, "metrics_database_stale", error=f"{type(e).__name__}: {e}"[:300])

    def read(self) -> tuple[Optional[dict], float, bool]:
        """(the counts or None if never read, their age in seconds, whether they are stale)."""
        with self.lock:
            thread = self.reading
            if thread is None or not thread.is_alive():
                thread = self.reading = threading.Thread(target=self._refresh, name="metrics-db", daemon=True)
                thread.start()
        thread.join(self.wait_s)
        with self.lock:
            fresh = not thread.is_alive() and not self.failed
            age = time.monotonic() - self.read_at if self.counts is not None else 0.0
            return self.counts, round(age, 3), not fresh
