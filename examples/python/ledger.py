"""The ledger: orders, deliveries and the queue of verifications to retry, in one database.

SQLite by default; PostgreSQL when DATABASE_URL is set (postgresql://...). The database itself
keeps the promises:

- `deliveries.transaction_id` is the primary key: of two requests racing to deliver the same
  purchase, only one insert succeeds.
- `orders.transaction_id` is unique: one App Store transaction pays at most one order, and an
  order is marked paid only in the database transaction whose delivery insert won.
- `verification_jobs` is a durable work queue. A worker claims due jobs with a lease instead of
  deleting them; the outcome of a job (delivery, new schedule, or its end) is written in the same
  database transaction as its effects, and only if the lease is still the worker's. A job leaves
  the queue only when it is done or given up, and then `finished_jobs` keeps why. A worker that
  dies keeps nothing: its lease runs out and the job is due again.

The connections, transactions, the database's clock and the schema's versions are in
ledger_database.py (Database, which Ledger extends) and ledger_schema.py.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Optional

from ledger_database import Cursor, Database, SchemaTooNew

__all__ = ["Job", "Ledger", "SchemaTooNew"]   # SchemaTooNew: what Ledger() raises on a newer schema

JOB_FIELDS = "id, user_id, kind, subject, environment, attempt, tries, created_ms, lease_token"


@dataclass(frozen=True)
class Job:
    id: str
    user_id: str
    kind: str          # work_queue's kinds: receipt, storekit2, storekit2_signed, recovery, consumption
    subject: str       # the receipt, the transaction id, or the environment a recovery job reads
    environment: str   # the Apple host to ask next: Production or Sandbox
    attempt: int
    tries: int
    created_ms: int
    lease_token: str

    @classmethod
    def from_row(cls, r: tuple) -> "Job":
        return cls(r[0], r[1], r[2], r[3], r[4], int(r[5]), int(r[6]), int(r[7]), r[8])


class Ledger(Database):
    """The service's reads and writes, each in the caller's transaction (db) or in one of its own."""

    # -- orders ---------------------------------------------------------------------------------

    def create_order(self, order_id: str, user_id: str, product_id: str, created_ms: int) -> None:
        with self.transaction() as db:
            self.create_order_in(db, order_id, user_id, product_id, created_ms)

    def create_order_in(self, db: Cursor, order_id: str, user_id: str, product_id: str, created_ms: int) -> None:
        db.execute("INSERT INTO orders (order_id, user_id, product_id, created_ms) VALUES (?, ?, ?, ?)",
                   (order_id, user_id, product_id, created_ms))

    def expire_orders(self, db: Cursor, user_id: Optional[str], created_before_ms: int) -> int:
        """Pending orders created before created_before_ms (the user's, or everyone's with None)
        expire: no purchase pays them any more."""
        if user_id is None:
            return db.execute("UPDATE orders SET status = 'expired' WHERE status = 'pending' AND created_ms < ?",
                              (created_before_ms,))
        return db.execute("UPDATE orders SET status = 'expired' WHERE user_id = ? AND status = 'pending'"
                          " AND created_ms < ?", (user_id, created_before_ms))

    def order(self, order_id: str) -> Optional[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT status, transaction_id FROM orders WHERE order_id = ?", (order_id,))
        return {"status": rows[0][0], "transaction_id": rows[0][1]} if rows else None

    def orders(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT order_id, user_id, product_id, status, transaction_id FROM orders ORDER BY order_id", ())
        return [dict(zip(("order_id", "user_id", "product_id", "status", "transaction_id"), r)) for r in rows]

    # -- what one user has: read and written inside one transaction -------------------------------

    def user_state(self, db: Cursor, user_id: str) -> tuple[list[str], list[dict]]:
        """(transaction ids already used, pending orders) for the delivery plan, as one consistent view.

        On PostgreSQL the user's pending orders are locked first (oldest first, so every
        transaction locks them in the same order): two requests of one user plan one after the
        other, and the second sees what the first delivered. The ids include transactions that pay
        an order without a delivery (subscriptions), so the library does not offer them again."""
        rows = db.query("SELECT order_id, product_id, created_ms FROM orders WHERE user_id = ? AND status = 'pending'"
                        " ORDER BY created_ms, order_id" + db.for_update, (user_id,))
        orders = [{"order_id": r[0], "product_id": r[1], "created_ms": int(r[2])} for r in rows]
        used = db.query("SELECT transaction_id FROM deliveries WHERE user_id = ?"
                        " UNION SELECT transaction_id FROM orders WHERE user_id = ? AND transaction_id IS NOT NULL",
                        (user_id, user_id))
        return [r[0] for r in used], orders

    def apply(self, db: Cursor, user_id: str, delivery, now_ms: int) -> tuple[list[str], list[str], dict[str, str]]:
        """Records a delivery plan. Returns (delivered now, revoked now, {order_id: transaction_id} paid now).

        An order is paid by a transaction this database transaction delivered; a transaction that
        lost the delivery race pays nothing. Matches the library makes without a delivery (a
        subscription purchase) are kept single by the unique index on orders.transaction_id."""
        delivered, revoked, paid = [], [], {}
        planned = {item.transaction_id for item in delivery.to_deliver}
        for item in delivery.to_deliver:
            inserted = db.execute(
                "INSERT INTO deliveries (transaction_id, original_transaction_id, product_id, user_id, quantity, delivered_ms)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (transaction_id) DO NOTHING",
                (item.transaction_id, item.original_transaction_id, item.product_id, user_id, item.quantity, now_ms))
            if inserted == 1:
                delivered.append(item.transaction_id)
        for item in delivery.to_revoke:
            if db.execute("UPDATE deliveries SET revoked_ms = ? WHERE transaction_id = ? AND revoked_ms IS NULL",
                          (now_ms, item.transaction_id)) == 1:
                revoked.append(item.transaction_id)
        for match in delivery.orders:
            txn = match.transaction_id
            if not txn or (txn in planned and txn not in delivered):
                continue
            if db.execute_unique("UPDATE orders SET status = 'paid', transaction_id = ?"
                                 " WHERE order_id = ? AND user_id = ? AND status = 'pending'",
                                 (txn, match.order_id, user_id)) == 1:
                paid[match.order_id] = txn
        return delivered, revoked, paid

    def deliveries(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT transaction_id, user_id, product_id, revoked_ms FROM deliveries ORDER BY transaction_id", ())
        return [{"transaction_id": r[0], "user_id": r[1], "product_id": r[2], "revoked_ms": r[3]} for r in rows]

    # -- the work queue ---------------------------------------------------------------------------

    def enqueue(self, db: Cursor, job_id: str, user_id: str, kind: str, subject: str, environment: str,
                attempt: int, next_at_ms: int, now_ms: int, why: str) -> bool:
        """Stores work to retry. A job already queued with the same id (user, kind and subject)
        stays as it is (a worker may hold it): the queue never has two jobs for one receipt."""
        return db.execute(
            "INSERT INTO verification_jobs (id, user_id, kind, subject, environment, attempt, next_at_ms, created_ms,"
            " last_status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (job_id, user_id, kind, subject, environment, attempt, next_at_ms, now_ms, why)) == 1

    def claim(self, worker: str, now_ms: Optional[int], lease_ms: int, limit: int) -> list[Job]:
        """Leases up to `limit` due jobs, oldest due first, to `worker` until now_ms + lease_ms.

        PostgreSQL: rows another worker is claiming are skipped (FOR UPDATE SKIP LOCKED), and a row
        claimed meanwhile no longer matches `next_at_ms <= now` when it is re-read under the lock,
        so no two workers hold one job. SQLite: the claim runs under the database write lock."""
        token = f"{worker}/{uuid.uuid4().hex}"

        def take(db: Cursor) -> list[Job]:
            now = self.now(db) if now_ms is None else now_ms   # the database's clock, not this host's
            lease_until = now + lease_ms
            if db.pg:
                rows = db.query(
                    "WITH due AS (SELECT id FROM verification_jobs WHERE next_at_ms <= ?"
                    "             ORDER BY next_at_ms, id LIMIT ? FOR UPDATE SKIP LOCKED)"
                    " UPDATE verification_jobs AS j SET lease_owner = ?, lease_token = ?, next_at_ms = ?, tries = j.tries + 1"
                    " FROM due WHERE j.id = due.id RETURNING " + ", ".join("j." + f for f in JOB_FIELDS.split(", ")),
                    (now, limit, worker, token, lease_until))
            else:
                ids = [r[0] for r in db.query("SELECT id FROM verification_jobs WHERE next_at_ms <= ?"
                                              " ORDER BY next_at_ms, id LIMIT ?", (now, limit))]
                for job_id in ids:
                    db.execute("UPDATE verification_jobs SET lease_owner = ?, lease_token = ?, next_at_ms = ?,"
                               " tries = tries + 1 WHERE id = ?", (worker, token, lease_until, job_id))
                rows = db.query(f"SELECT {JOB_FIELDS} FROM verification_jobs WHERE lease_token = ?", (token,))
            return sorted((Job.from_row(r) for r in rows), key=lambda j: j.id)
        return self.run(take)

    def hold_lease(self, db: Cursor, job: Job) -> bool:
        """True while `job` is still leased to the claim that returned it; locks it for this transaction."""
        return bool(db.query("SELECT 1 FROM verification_jobs WHERE id = ? AND lease_token = ?" + db.for_update,
                             (job.id, job.lease_token)))

    def reschedule(self, db: Cursor, job: Job, environment: str, attempt: int, next_at_ms: int, why: str) -> None:
        """Releases the lease; the job is due again at next_at_ms."""
        db.execute("UPDATE verification_jobs SET environment = ?, attempt = ?, next_at_ms = ?, last_status = ?,"
                   " lease_owner = NULL, lease_token = NULL WHERE id = ? AND lease_token = ?",
                   (environment, attempt, next_at_ms, why, job.id, job.lease_token))

    def wake_waiting(self, db: Cursor, now_ms: int) -> int:
        """Makes every purchase job that waits out an outage due now: those the library gave up on
        for a round (attempt 1 again), not those inside its back-off (their Retry-After stands),
        nor the recurring recovery jobs, jobs held by a worker, or those waiting on a
        configuration fix. Returns how many."""
        return db.execute("UPDATE verification_jobs SET next_at_ms = ? WHERE next_at_ms > ? AND lease_token IS NULL"
                          " AND attempt = 1 AND kind <> 'recovery' AND (last_status IS NULL OR last_status NOT LIKE ?)",
                          (now_ms, now_ms, "fix_configuration%"))

    def release(self, job: Job, now_ms: int) -> None:
        """Gives back a claimed job that was not started (the worker is stopping): due again now."""
        with self.transaction() as db:
            db.execute("UPDATE verification_jobs SET next_at_ms = ?, lease_owner = NULL, lease_token = NULL"
                       " WHERE id = ? AND lease_token = ?", (now_ms, job.id, job.lease_token))

    def finish(self, db: Cursor, job: Job, outcome: str, reason: str, now_ms: int) -> None:
        """Takes the job off the queue and keeps why it ended."""
        db.execute("INSERT INTO finished_jobs (id, user_id, kind, subject, outcome, reason, tries, created_ms,"
                   " finished_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (job.id, job.user_id, job.kind, job.subject, outcome, reason, job.tries, job.created_ms, now_ms))
        db.execute("DELETE FROM verification_jobs WHERE id = ? AND lease_token = ?", (job.id, job.lease_token))

    def supersede(self, db: Cursor, job_id: str, now_ms: int) -> bool:
        """The front settled a receipt that also waits in the queue: ends that job unless a worker
        holds it right now (that worker then delivers nothing new and ends it itself)."""
        rows = db.query(f"SELECT {JOB_FIELDS} FROM verification_jobs WHERE id = ?"
                        " AND (lease_token IS NULL OR next_at_ms <= ?)" + db.for_update_skip_locked, (job_id, now_ms))
        if not rows:
            return False
        job = Job.from_row(rows[0])
        db.execute("INSERT INTO finished_jobs (id, user_id, kind, subject, outcome, reason, tries, created_ms,"
                   " finished_ms) VALUES (?, ?, ?, ?, 'superseded', 'accepted when the app sent the receipt again', ?, ?, ?)",
                   (job.id, job.user_id, job.kind, job.subject, job.tries, job.created_ms, now_ms))
        db.execute("DELETE FROM verification_jobs WHERE id = ?", (job.id,))
        return True

    def jobs(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT id, user_id, kind, environment, attempt, next_at_ms, lease_owner, tries, last_status"
                            " FROM verification_jobs ORDER BY id", ())
        return [dict(zip(("id", "user_id", "kind", "environment", "attempt", "next_at_ms", "lease_owner", "tries",
                          "last_status"), r)) for r in rows]

    def finished(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT id, user_id, outcome, reason, tries FROM finished_jobs ORDER BY id, finished_ms", ())
        return [dict(zip(("id", "user_id", "outcome", "reason", "tries"), r)) for r in rows]

    def pending_count(self) -> int:
        with self.transaction() as db:
            return int(db.query("SELECT COUNT(*) FROM verification_jobs", ())[0][0])

    def queue_counts(self, now_ms: int) -> dict:
        """What an operator watches: see README.md, "What to alert on"."""
        with self.transaction() as db:
            total, leased, due, retried, misconfigured, oldest, oldest_due = db.query(
                "SELECT COUNT(*),"
                " COALESCE(SUM(CASE WHEN lease_token IS NOT NULL AND next_at_ms > ? THEN 1 ELSE 0 END), 0),"
                " COALESCE(SUM(CASE WHEN next_at_ms <= ? THEN 1 ELSE 0 END), 0),"
                " COALESCE(SUM(CASE WHEN tries > 0 THEN 1 ELSE 0 END), 0),"
                " COALESCE(SUM(CASE WHEN last_status LIKE ? THEN 1 ELSE 0 END), 0),"
                # The recurring recovery jobs never finish: their age says nothing about Apple
                # failing, so only purchases count towards the oldest pending age.
                " MIN(CASE WHEN kind <> 'recovery' THEN created_ms END),"
                " MIN(CASE WHEN next_at_ms <= ? THEN next_at_ms END) FROM verification_jobs",
                (now_ms, now_ms, "fix_configuration%", now_ms))[0]
            finished = dict(db.query("SELECT outcome, COUNT(*) FROM finished_jobs GROUP BY outcome", ()))
        return {"pending": int(total) - int(leased), "due": int(due), "leased": int(leased), "retried": int(retried),
                "given_up": int(finished.get("given_up", 0)), "misconfigured": int(misconfigured),
                "oldest_pending_age_ms": max(0, now_ms - int(oldest)) if oldest is not None else 0,
                "oldest_due_wait_ms": max(0, now_ms - int(oldest_due)) if oldest_due is not None else 0,
                "finished": {k: int(v) for k, v in sorted(finished.items())}}


    def heartbeat(self, job: Job, lease_ms: int) -> bool:
        """Extends the leases of a running batch (every job claimed with job's lease token and not
        finished yet) to the database's now + lease_ms. False once none is this claim's any more."""
        def renew(db: Cursor) -> bool:
            return db.execute("UPDATE verification_jobs SET next_at_ms = ? WHERE lease_token = ?",
                              (self.now(db) + lease_ms, job.lease_token)) > 0
        return self.run(renew)

    # -- who owns what, and what Apple signed ------------------------------------------------------

    def lock_user(self, db: Cursor, user_id: str) -> None:
        """Serialises the transactions that plan for one user (PostgreSQL; SQLite has one writer).
        Every path takes this lock first, so two paths never wait on each other in opposite order."""
        if db.pg:
            db.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 1))", ("user:" + user_id,))

    def lock_subscription(self, db: Cursor, original_transaction_id: str) -> None:
        """Serialises notifications about one purchase whose owner is not known yet."""
        if db.pg:
            db.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 2))", ("sub:" + original_transaction_id,))

    def owner(self, db: Cursor, original_transaction_id: str) -> Optional[str]:
        rows = db.query("SELECT user_id FROM owners WHERE original_transaction_id = ?", (original_transaction_id,))
        return rows[0][0] if rows else None

    def claim_owner(self, db: Cursor, original_transaction_id: str, user_id: str, via: str, now_ms: int) -> str:
        """Makes user_id the owner unless someone already is; returns the owner either way."""
        db.execute("INSERT INTO owners (original_transaction_id, user_id, via, claimed_ms) VALUES (?, ?, ?, ?)"
                   " ON CONFLICT (original_transaction_id) DO NOTHING", (original_transaction_id, user_id, via, now_ms))
        return self.owner(db, original_transaction_id) or user_id

    def merge_statement(self, db: Cursor, kind: str, key: str, original_transaction_id: str, body: dict,
                        now_ms: int) -> bool:
        """Stores a signed transaction or renewal info unless a statement Apple signed later is
        already stored. A statement without signed_date_ms (a receipt's) replaces one that has none
        either, never a signed one. Returns whether it was stored."""
        body = body.to_dict() if hasattr(body, "to_dict") else body   # an iapverify.Transaction or RenewalInfo
        signed = body.get("signed_date_ms")
        environment = body.get("environment")
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        return db.execute(
            "INSERT INTO statements (kind, id, original_transaction_id, signed_date_ms, environment, stored_ms, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (kind, id) DO UPDATE SET"
            " signed_date_ms = excluded.signed_date_ms, environment = excluded.environment,"
            " stored_ms = excluded.stored_ms, body = excluded.body"
            " WHERE (excluded.signed_date_ms IS NOT NULL AND (statements.signed_date_ms IS NULL"
            "        OR excluded.signed_date_ms > statements.signed_date_ms))"
            "    OR (excluded.signed_date_ms IS NULL AND statements.signed_date_ms IS NULL)",
            (kind, key, original_transaction_id, signed, environment, now_ms, text)) == 1

    def user_statements(self, db: Cursor, user_id: str) -> dict:
        """The user's stored transactions and renewal infos, as compute_entitlements reads them."""
        rows = db.query("SELECT s.kind, s.body FROM statements s JOIN owners o"
                        " ON o.original_transaction_id = s.original_transaction_id WHERE o.user_id = ?"
                        " ORDER BY s.kind, s.id", (user_id,))
        return {"transactions": [json.loads(b) for k, b in rows if k == "transaction"],
                "renewal_info": [json.loads(b) for k, b in rows if k == "renewal_info"]}

    def user_statements_json(self, user_id: str) -> bytes:
        """The user's stored statements as compute_entitlements reads them, as JSON text: the
        stored bodies as they are (no parse and no new encoding), in one statement outside a
        transaction (the entitlement read: see Database.read)."""
        rows = self.read("SELECT s.kind, s.body FROM statements s JOIN owners o"
                         " ON o.original_transaction_id = s.original_transaction_id WHERE o.user_id = ?"
                         " ORDER BY s.kind, s.id", (user_id,))
        return ('{"transactions":[' + ",".join(b for k, b in rows if k == "transaction") + '],"renewal_info":['
                + ",".join(b for k, b in rows if k == "renewal_info") + "]}").encode()

    def statements_of(self, db: Cursor, original_transaction_id: str) -> list[dict]:
        return [json.loads(r[0]) for r in db.query("SELECT body FROM statements WHERE original_transaction_id = ?"
                                                   " ORDER BY kind, id", (original_transaction_id,))]

    # -- subscriptions and notifications -----------------------------------------------------------

    def subscription(self, db: Cursor, original_transaction_id: str) -> dict:
        rows = db.query("SELECT last_signed_date_ms, expected_renewal_ms, last_news_ms, checked_ms, environment"
                        " FROM subscriptions WHERE original_transaction_id = ?", (original_transaction_id,))
        keys = ("last_signed_date_ms", "expected_renewal_ms", "last_news_ms", "checked_ms", "environment")
        return dict(zip(keys, rows[0])) if rows else dict.fromkeys(keys)

    def note_news(self, db: Cursor, original_transaction_id: str, environment: Optional[str], now_ms: int,
                  signed_date_ms: Optional[int] = None) -> None:
        """Apple said something about this purchase: last_news_ms moves on; a notification's
        signed date moves last_signed_date_ms forward, never back."""
        db.execute("INSERT INTO subscriptions (original_transaction_id, environment, last_signed_date_ms, last_news_ms)"
                   " VALUES (?, ?, ?, ?) ON CONFLICT (original_transaction_id) DO UPDATE SET"
                   " environment = COALESCE(excluded.environment, subscriptions.environment),"
                   " last_news_ms = excluded.last_news_ms,"
                   " last_signed_date_ms = CASE WHEN excluded.last_signed_date_ms IS NULL"
                   "   THEN subscriptions.last_signed_date_ms WHEN subscriptions.last_signed_date_ms IS NULL"
                   "   OR excluded.last_signed_date_ms > subscriptions.last_signed_date_ms"
                   "   THEN excluded.last_signed_date_ms ELSE subscriptions.last_signed_date_ms END",
                   (original_transaction_id, environment, signed_date_ms, now_ms))

    def expect_renewal(self, db: Cursor, original_transaction_id: str, expected_ms: Optional[int]) -> None:
        db.execute("UPDATE subscriptions SET expected_renewal_ms = ? WHERE original_transaction_id = ?",
                   (expected_ms, original_transaction_id))

    def overdue_subscriptions(self, db: Cursor, now_ms: int, slack_ms: int, limit: int) -> list[tuple[str, str]]:
        """(original_transaction_id, environment) of subscriptions that should have renewed more
        than slack_ms ago, with no news since and not asked about since."""
        return [(r[0], r[1] or "Production") for r in db.query(
            "SELECT original_transaction_id, environment FROM subscriptions WHERE expected_renewal_ms IS NOT NULL"
            " AND expected_renewal_ms + ? <= ? AND (last_news_ms IS NULL OR last_news_ms < expected_renewal_ms + ?)"
            " AND (checked_ms IS NULL OR checked_ms < expected_renewal_ms + ?)"
            " ORDER BY expected_renewal_ms, original_transaction_id LIMIT ?",
            (slack_ms, now_ms, slack_ms, slack_ms, limit))]

    def mark_checked(self, db: Cursor, original_transaction_id: str, now_ms: int) -> None:
        db.execute("UPDATE subscriptions SET checked_ms = ? WHERE original_transaction_id = ?",
                   (now_ms, original_transaction_id))

    def seen_notifications(self, db: Cursor, original_transaction_id: Optional[str], limit: int = 1000) -> list[str]:
        """The UUIDs of the latest notifications handled for this purchase (the library's
        seen_notification_uuids); the primary key catches older ones."""
        if original_transaction_id is None:
            return []
        return [r[0] for r in db.query("SELECT notification_uuid FROM notifications WHERE original_transaction_id = ?"
                                       " ORDER BY received_ms DESC, notification_uuid LIMIT ?",
                                       (original_transaction_id, limit))]

    def record_notification(self, db: Cursor, n: dict) -> bool:
        """Stores a handled notification; False when its UUID is already stored (a duplicate)."""
        return db.execute(
            "INSERT INTO notifications (notification_uuid, notification_type, subtype, original_transaction_id,"
            " transaction_id, user_id, signed_date_ms, received_ms, action, source, signed_payload)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (notification_uuid) DO NOTHING",
            (n["notification_uuid"], n["notification_type"], n.get("subtype"), n.get("original_transaction_id"),
             n.get("transaction_id"), n.get("user_id"), n.get("signed_date_ms"), n["received_ms"], n["action"],
             n["source"], n["signed_payload"])) == 1

    def realtime_answer(self, db: Cursor, request_identifier: str) -> Optional[str]:
        """The answer given to a realtime request already handled, or None."""
        rows = db.query("SELECT answer FROM realtime_requests WHERE request_identifier = ?", (request_identifier,))
        return rows[0][0] if rows else None

    def record_realtime(self, db: Cursor, request_identifier: str, original_transaction_id: str, product_id: str,
                        answer: str, received_ms: int) -> bool:
        """Stores the answer to a realtime request; False when one is already stored for it."""
        return db.execute(
            "INSERT INTO realtime_requests (request_identifier, original_transaction_id, product_id, answer, received_ms)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (request_identifier) DO NOTHING",
            (request_identifier, original_transaction_id, product_id, answer, received_ms)) == 1

    def has_notification(self, db: Cursor, notification_uuid: str) -> bool:
        return bool(db.query("SELECT 1 FROM notifications WHERE notification_uuid = ?", (notification_uuid,)))

    def notifications(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT notification_uuid, notification_type, subtype, original_transaction_id, user_id,"
                            " action, source FROM notifications ORDER BY signed_date_ms, notification_uuid", ())
        return [dict(zip(("notification_uuid", "notification_type", "subtype", "original_transaction_id", "user_id",
                          "action", "source"), r)) for r in rows]

    def mark(self, db: Cursor, name: str) -> Optional[int]:
        rows = db.query("SELECT value_ms FROM service_marks WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else None

    def set_mark(self, db: Cursor, name: str, value_ms: int, only_if_missing: bool = False) -> None:
        db.execute("INSERT INTO service_marks (name, value_ms) VALUES (?, ?) ON CONFLICT (name) DO "
                   + ("NOTHING" if only_if_missing else "UPDATE SET value_ms = excluded.value_ms"), (name, value_ms))

    def table_counts(self) -> dict:
        with self.transaction() as db:
            return {t: int(db.query(f"SELECT COUNT(*) FROM {t}", ())[0][0])
                    for t in ("orders", "deliveries", "owners", "statements", "subscriptions", "notifications")}
