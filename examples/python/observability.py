"""What an operator sees: one JSON object per log line, and the Prometheus metrics of /metrics."""
from __future__ import annotations

import json
import logging
import sys

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


class Metrics:
    """What an operator graphs, in Prometheus' text format (GET /metrics). Each service has its own
    registry, so several in one process (tests) do not mix; the queue is read from the database
    when scraped, so any front reports the whole queue."""

    def __init__(self, ledger) -> None:
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
        self.http = Histogram("http_request_duration_seconds", "HTTP requests by route, method and status",
                              ["route", "method", "status"], registry=self.registry,
                              buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.deliveries = Counter("deliveries", "Purchases delivered (each transaction once)", registry=self.registry)
        self.revocations = Counter("revocations", "Deliveries taken back (refunds, revocations)", registry=self.registry)

        class Queue:
            def collect(self):
                counts = ledger.queue_counts(ledger.now())
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
