"""The worker: runs what the work queue holds (receipts and StoreKit 2 claims to retry, the
recurring recovery of what Apple said while nobody listened, answers to consumption requests),
each under a lease, its outcome written with its effects in one database transaction."""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from typing import Optional

from apple import ENVIRONMENTS, Answer, Apple, server_environment
from ledger import Job, Ledger
from notifications import Notifications
from observability import log_event
from purchases import Purchases
from work_queue import BATCH, CONSUMPTION, GIVE_UP_AFTER_MS, LEASE_MS, RECOVERY, job_id, next_try

RECOVERY_EVERY_MS = 60 * 60 * 1000           # how often the history is read when all is well
HISTORY_OVERLAP_MS = 10 * 60 * 1000          # each read starts this much before the last one ended
HISTORY_MAX_BACK_MS = 179 * 24 * 3600 * 1000 # Apple keeps 180 days of notification history
RENEWAL_SLACK_MS = 60 * 60 * 1000            # a renewal this late without news is asked about
ORDER_SWEEP_S = 300                          # how often the worker expires stale pending orders


class Worker:
    def __init__(self, ledger: Ledger, apple: Apple, purchases: Purchases, notifications: Notifications,
                 environments: list[str], *, lease_ms: int = LEASE_MS, heartbeat_ms: Optional[int] = None,
                 give_up_after_ms: int = GIVE_UP_AFTER_MS, recovery_every_ms: int = RECOVERY_EVERY_MS,
                 renewal_slack_ms: int = RENEWAL_SLACK_MS, consumption_consent: bool = True,
                 worker_id: Optional[str] = None):
        self.ledger, self.apple, self.purchases, self.notifications = ledger, apple, purchases, notifications
        self.environments = environments
        self.lease_ms = lease_ms
        self.heartbeat_ms = heartbeat_ms if heartbeat_ms is not None else lease_ms // 3
        self.give_up_after_ms = give_up_after_ms
        self.recovery_every_ms = recovery_every_ms
        self.renewal_slack_ms = renewal_slack_ms
        self.consumption_consent = consumption_consent
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.last_pass: Optional[float] = None   # when the loop last started a pass (monotonic): its liveness

    def clock(self) -> int:
        return self.ledger.now()

    def ensure_recovery_jobs(self) -> None:
        """One recurring recovery job per environment the config accepts (a worker calls this when
        it starts). The first run reads history from when the service first started."""
        if not self.apple.has_server_api:
            return

        def add(db) -> None:
            now = self.ledger.now(db)
            for env in self.environments:
                key = env.lower()      # the job's and the mark's names, as release 0.1 stored them
                self.ledger.set_mark(db, "history:" + key, now, only_if_missing=True)
                self.ledger.enqueue(db, job_id("apple", RECOVERY, key), "", RECOVERY, key, env, 1, now, now,
                                    "scheduled")
        self.ledger.run(add)

    def run_due_jobs(self, limit: int = BATCH, stop: Optional[threading.Event] = None) -> list[dict]:
        """One pass: claims up to `limit` due jobs and runs them one by one. Once `stop` is set, the
        jobs not started yet are given back instead of waiting for their leases to end. The whole
        batch's leases are renewed while it runs (the heartbeat), so a slow Apple never lets
        another worker take a job this one still works on."""
        jobs = self.ledger.claim(self.worker_id, None, self.lease_ms, limit)
        if not jobs:
            return []
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(jobs[0], done), daemon=True)
        beat.start()
        results = []
        try:
            for job in jobs:
                if stop is not None and stop.is_set():
                    self.ledger.release(job, self.clock())
                else:
                    results.append(self.run_job(job))
        finally:
            done.set()
            beat.join()
        return results

    def _heartbeat(self, job: Job, done: threading.Event) -> None:
        while not done.wait(self.heartbeat_ms / 1000):
            try:
                self.ledger.heartbeat(job, self.lease_ms)
            except Exception as e:  # the database is away: the lease may lapse; the late outcome is then not written
                log_event(logging.WARNING, "heartbeat_failed", job=job.id, error=f"{type(e).__name__}")

    def retry_pending(self) -> list[dict]:
        """Every job due now, in batches (POST /jobs/retry: an operator who knows Apple is back, or a
        cron job when no worker runs); the purchases waiting out an outage are made due first."""
        self.ledger.run(lambda db: self.ledger.wake_waiting(db, self.ledger.now(db)))
        results: list[dict] = []
        while True:
            batch = self.run_due_jobs(100)
            results += batch
            if not batch:
                return results

    def run_job(self, job: Job) -> dict:
        """One attempt for a claimed job. Its outcome is written with its effects, in one database
        transaction, and only while the lease is still ours; otherwise nothing is written."""
        if job.kind == RECOVERY:
            return self._run_recovery(job)
        if job.kind == CONSUMPTION:
            return self._run_consumption(job)
        answer = self.apple.ask(job.kind, job.subject, server_environment(job.environment), job.attempt)

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            now = self.ledger.now(db)
            if answer.kind == "accept":
                # Apple answers again: the purchases that waited out an outage are due now.
                self.ledger.wake_waiting(db, now)
                result = self.purchases.settle(db, job.user_id, answer)
                if result["status"] == "accepted":
                    self.ledger.finish(db, job, "delivered", ",".join(result["delivered"]) or "nothing new", now)
                else:
                    self.ledger.finish(db, job, "rejected", f"{result['verdict']}: {result['reason']}", now)
                return result
            if answer.kind == "reject":
                self.ledger.finish(db, job, "rejected", f"{answer.verdict}: {answer.why}", now)
                return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
            return self._reschedule(db, job, answer, now)
        result = self.ledger.run(record)
        log_event(logging.INFO, "job", job=job.id[:16], user_id=job.user_id, tries=job.tries, status=result["status"],
                  why=result.get("why") or result.get("reason"))
        return result

    def _reschedule(self, db, job: Job, answer: Answer, now: int) -> dict:
        if answer.kind == "give_up" and now - job.created_ms >= self.give_up_after_ms and job.kind != RECOVERY:
            self.ledger.finish(db, job, "given_up", f"still {answer.why} after {job.tries} tries", now)
            return {"status": "given_up", "why": answer.why}
        attempt, delay = next_try(answer.kind, answer.attempt, answer.delay_ms)
        self.ledger.reschedule(db, job, answer.environment, attempt, now + delay, answer.why)
        return {"status": "pending", "retry_after_ms": delay, "why": answer.why}

    def work(self, stop: threading.Event, poll_s: float = 1.0, batch: int = BATCH) -> None:
        """The worker loop: a pass, then a pause when nothing was due. A failing pass (database
        down, ...) is logged; the jobs it held come back when their leases end."""
        try:
            self.ensure_recovery_jobs()
        except Exception as e:
            log_event(logging.ERROR, "recovery_jobs_not_scheduled", error=f"{type(e).__name__}")
        swept = None
        while not stop.is_set():
            self.last_pass = time.monotonic()   # the worker's liveness (a stuck pass stops moving it)
            try:
                if swept is None or self.last_pass - swept >= ORDER_SWEEP_S:
                    swept = self.last_pass
                    self.purchases.expire_stale_orders()
                if self.run_due_jobs(batch, stop):
                    continue
            except Exception as e:  # keep the worker alive; the queue keeps the work
                log_event(logging.ERROR, "worker_pass_failed", worker=self.worker_id, error=f"{type(e).__name__}: {e}")
            stop.wait(poll_s)

    # -- recovery: what Apple said while nobody listened ----------------------------------------------

    def _run_recovery(self, job: Job) -> dict:
        """Reads Apple's notification history since the last read (less an overlap) and applies
        each notification through handle_notification, so a pushed notification and its recovered
        copy apply once; the mark moves on only when every page was read. Then asks Get All
        Subscription Statuses about subscriptions past their expected renewal with no news (one
        that fails is asked again next run). On Apple's retry_later the job runs again at the
        library's delay, from the same mark; otherwise at the next period."""
        env = server_environment(job.environment)
        with self.ledger.transaction() as db:
            now = self.ledger.now(db)
            covered = self.ledger.mark(db, "history:" + env.lower()) or now
        start = max(covered - HISTORY_OVERLAP_MS, now - HISTORY_MAX_BACK_MS)
        applied = {"recovered": 0, "statuses": 0}
        answer = self._read_history(env, start, now, job.attempt, applied)
        if answer.kind == "accept":
            with self.ledger.transaction() as db:
                overdue = [o for o, e in self.ledger.overdue_subscriptions(db, now, self.renewal_slack_ms, 100)
                           if (e if e in ENVIRONMENTS else ENVIRONMENTS[0]) == env]
            for original in overdue:
                checked = self._check_subscription(original, env, 1, now)
                if checked.kind == "accept":
                    applied["statuses"] += 1
                else:
                    log_event(logging.WARNING, "status_check_failed", original_transaction_id=original,
                              environment=env, verdict=checked.verdict, reason=checked.why)
                    if checked.kind != "reject":
                        break   # Apple is busy or down: the rest waits for the next run

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            t = self.ledger.now(db)
            if answer.kind == "accept":
                self.ledger.set_mark(db, "history:" + env.lower(), now)
                self.ledger.reschedule(db, job, env, 1, t + self.recovery_every_ms,
                                       f"recovered {applied['recovered']}, checked {applied['statuses']}")
                return {"status": "recovered", **applied}
            if answer.kind == "reject":   # logged, and tried again at the next run
                log_event(logging.ERROR, "recovery_refused", environment=env, verdict=answer.verdict, reason=answer.why)
                self.ledger.reschedule(db, job, env, 1, t + self.recovery_every_ms, f"{answer.verdict}: {answer.why}")
                return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
            return self._reschedule(db, job, answer, t)
        result = self.ledger.run(record)
        log_event(logging.INFO, "recovery", environment=env, status=result["status"], **applied)
        return result

    def _read_history(self, env: str, start: int, end: int, attempt: int, applied: dict) -> Answer:
        """Every page of the notification history from start to end. The library verified every
        signed item of every page; each notification then goes through the same path as a pushed
        one, from the page as Apple sent it (its UUID makes a second copy a duplicate)."""
        done = self.apple.api_call({"endpoint": "notification_history", "environment": env,
                                    "body": {"startDate": start, "endDate": end}}, attempt)
        if isinstance(done, Answer):
            return done
        for body in done.bodies:
            for item in json.loads(body).get("notificationHistory", []):
                status, outcome = self.notifications.handle_notification(item["signedPayload"], source="history")
                if status == 200 and outcome["status"] != "ignore_duplicate":
                    applied["recovered"] += 1
        return Answer("accept", env, attempt)

    def _check_subscription(self, original: str, env: str, attempt: int, now: int) -> Answer:
        done = self.apple.api_call({"endpoint": "subscription_statuses", "environment": env,
                                    "transaction_id": original}, attempt)
        if isinstance(done, Answer):
            return done

        def apply(db) -> None:
            t = self.ledger.now(db)
            self.ledger.lock_subscription(db, original)
            owner = self.ledger.owner(db, original)
            if owner:
                self.ledger.lock_user(db, owner)
            self.purchases.merge(db, done.transactions, done.renewal_info, t)
            self.ledger.mark_checked(db, original, t)
            if owner:
                self.purchases.plan(db, owner, t)
        self.ledger.run(apply)
        return Answer("accept", env, attempt)

    def _run_consumption(self, job: Job) -> dict:
        """Answers Apple's CONSUMPTION_REQUEST with the send-consumption call."""
        transaction_id = job.subject
        with self.ledger.transaction() as db:
            delivered = db.query("SELECT 1 FROM deliveries WHERE transaction_id = ? AND revoked_ms IS NULL",
                                 (transaction_id,))
        body = {"customerConsented": True, "sampleContentProvided": False,
                "deliveryStatus": "DELIVERED" if delivered else "UNDELIVERED_OTHER"}
        env = server_environment(job.environment)
        if not self.consumption_consent:
            answer = Answer("reject", env, job.attempt, verdict="not_sent",
                            why="consumption data is not sent without the customer's consent (CONSUMPTION_CONSENT=0)")
        else:
            done = self.apple.api_call({"endpoint": "consumption_info", "environment": env,
                                        "transaction_id": transaction_id, "body": body}, job.attempt)
            answer = done if isinstance(done, Answer) else Answer("accept", env, job.attempt)

        def record(db) -> dict:
            if not self.ledger.hold_lease(db, job):
                return {"status": "lease_lost", "job": job.id}
            now = self.ledger.now(db)
            if answer.kind in ("accept", "reject"):
                outcome = "delivered" if answer.kind == "accept" else "rejected"
                self.ledger.finish(db, job, outcome, body["deliveryStatus"] if outcome == "delivered" else answer.why, now)
                return {"status": "sent" if outcome == "delivered" else "rejected", "transaction_id": transaction_id}
            return self._reschedule(db, job, answer, now)
        return self.ledger.run(record)

