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

Schema versions. MIGRATIONS lists the schema's changes in order; version n is MIGRATIONS[n - 1],
and the table `schema_version` records every version applied. At start the missing versions are
applied in one database transaction, under a lock that makes processes starting together take
turns; a database whose version is newer than this code knows is refused. Version 1 is the schema
of the service before versions were recorded: written with IF NOT EXISTS, it is run on such a
database (adding anything an older copy lacked) and then recorded. To change the schema, append
one entry, a statement or a tuple of statements, and never edit one that was released:

    MIGRATIONS = [
        SCHEMA_V1,
        "ALTER TABLE orders ADD COLUMN price_micros BIGINT",        # version 2
    ]

A new column must be nullable or have a default: rows already stored have no value for it, and
processes still running the previous code do not write it.

PostgreSQL connections: each is checked when taken from the pool; one broken by a restart of
PostgreSQL is replaced at once together with every other broken idle one, and Ledger.run runs its
work again when the connection breaks under it. Waiting for a connection ends after
pool_timeout_s (5 s) instead of psycopg_pool's 30 s, and Ledger.ping answers a readiness probe
within its own deadline.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, TypeVar, Union

# Version 1: the schema before versions were recorded. Keep it as it is (see the module's docstring).
SCHEMA_V1 = (
    """CREATE TABLE IF NOT EXISTS orders (
        order_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, product_id TEXT NOT NULL, created_ms BIGINT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending', transaction_id TEXT)""",
    # One transaction pays one order. Fails on a database where an older version of this service
    # let one transaction pay several orders: find them with
    #   SELECT transaction_id FROM orders GROUP BY transaction_id HAVING COUNT(*) > 1
    "CREATE UNIQUE INDEX IF NOT EXISTS orders_one_per_transaction ON orders (transaction_id)",
    "CREATE INDEX IF NOT EXISTS orders_by_user ON orders (user_id, status)",
    """CREATE TABLE IF NOT EXISTS deliveries (
        transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT, product_id TEXT NOT NULL,
        user_id TEXT NOT NULL, quantity BIGINT NOT NULL, delivered_ms BIGINT NOT NULL, revoked_ms BIGINT)""",
    "CREATE INDEX IF NOT EXISTS deliveries_by_user ON deliveries (user_id)",
    # next_at_ms: when the job may be claimed. While a worker holds it, it is the end of the lease,
    # so an expired lease is simply a due job. attempt: the library's attempt number for the next
    # call to Apple. tries: how many times a worker claimed it. receipt: the base64 receipt, or
    # "storekit2:<transaction id>" for a StoreKit 2 history call (endpoint is then its environment).
    # (Version 2 renames and splits these columns: see SCHEMA_V2.)
    """CREATE TABLE IF NOT EXISTS verification_jobs (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL, receipt TEXT NOT NULL, endpoint TEXT NOT NULL,
        attempt INTEGER NOT NULL, next_at_ms BIGINT NOT NULL, lease_owner TEXT, lease_token TEXT,
        tries INTEGER NOT NULL DEFAULT 0, created_ms BIGINT NOT NULL, last_status TEXT)""",
    "CREATE INDEX IF NOT EXISTS verification_jobs_due ON verification_jobs (next_at_ms)",
    # outcome: delivered (a worker settled it), superseded (the app sent the receipt again and the
    # front settled it), rejected (Apple or the library refused it for good), given_up (still
    # temporary after give_up_after_ms: an operator must look; the receipt is kept to requeue it).
    """CREATE TABLE IF NOT EXISTS finished_jobs (
        id TEXT NOT NULL, user_id TEXT NOT NULL, receipt TEXT NOT NULL, outcome TEXT NOT NULL, reason TEXT,
        tries INTEGER NOT NULL, created_ms BIGINT NOT NULL, finished_ms BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS finished_jobs_by_id ON finished_jobs (id)",
    # Who owns a purchase: one user per original transaction (a subscription and its renewals, or a
    # one-time purchase). Set by the transaction's appAccountToken when it names a user, otherwise
    # by the first user who submitted it. `via`: app_account_token or first_claim.
    """CREATE TABLE IF NOT EXISTS owners (
        original_transaction_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, via TEXT NOT NULL, claimed_ms BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS owners_by_user ON owners (user_id)",
    # What Apple signed, one row per transaction (kind 'transaction', id = transaction_id) and per
    # subscription's renewal info (kind 'renewal_info', id = original_transaction_id): the library's
    # normalised JSON. A row is replaced only by a statement Apple signed later, so the table ends
    # the same whatever order notifications, receipts and API answers arrive in.
    """CREATE TABLE IF NOT EXISTS statements (
        kind TEXT NOT NULL, id TEXT NOT NULL, original_transaction_id TEXT NOT NULL, signed_date_ms BIGINT,
        environment TEXT, stored_ms BIGINT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, id))""",
    "CREATE INDEX IF NOT EXISTS statements_by_original ON statements (original_transaction_id)",
    # Per subscription: the newest notification applied (the library's last_signed_date_ms), when it
    # should renew next (expected_renewal_ms, while it is active and set to renew), when news last
    # came, and when the recovery job last asked Apple about it.
    """CREATE TABLE IF NOT EXISTS subscriptions (
        original_transaction_id TEXT PRIMARY KEY, environment TEXT, last_signed_date_ms BIGINT,
        expected_renewal_ms BIGINT, last_news_ms BIGINT, checked_ms BIGINT)""",
    # Every App Store Server Notification handled, pushed or recovered from Apple's history. The
    # primary key makes a notification and its redelivered or recovered copy one row.
    """CREATE TABLE IF NOT EXISTS notifications (
        notification_uuid TEXT PRIMARY KEY, notification_type TEXT NOT NULL, subtype TEXT,
        original_transaction_id TEXT, transaction_id TEXT, user_id TEXT, signed_date_ms BIGINT,
        received_ms BIGINT NOT NULL, action TEXT NOT NULL, source TEXT NOT NULL, signed_payload TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS notifications_by_original ON notifications (original_transaction_id, received_ms)",
    # Retention Messaging realtime requests answered: Apple may send one again, and gets the same answer.
    """CREATE TABLE IF NOT EXISTS realtime_requests (
        request_identifier TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL, product_id TEXT NOT NULL,
        answer TEXT NOT NULL, received_ms BIGINT NOT NULL)""",
    # Watermarks: how far Apple's notification history has been read, per environment.
    "CREATE TABLE IF NOT EXISTS service_marks (name TEXT PRIMARY KEY, value_ms BIGINT NOT NULL)",
)

# Version 2: a job says what it is in a `kind` column (receipt, storekit2, storekit2_signed,
# recovery, consumption) instead of a prefix in its `receipt` column, which becomes `subject` (the
# receipt, the transaction id, or the environment a recovery job reads); `endpoint`, which always
# held an environment, becomes `environment`. Renamed columns: stop every process of the previous
# version before starting this one (the queue waits in the database meanwhile).
SCHEMA_V2 = tuple(
    [f"ALTER TABLE {table} ADD COLUMN kind TEXT NOT NULL DEFAULT 'receipt'" for table in ("verification_jobs", "finished_jobs")]
    # (substr, not LIKE: a migration statement has no parameters, and psycopg reads every % as one)
    + [f"UPDATE {table} SET kind = '{kind}', receipt = substr(receipt, {len(prefix) + 1})"
       f" WHERE substr(receipt, 1, {len(prefix)}) = '{prefix}'"
       for table in ("verification_jobs", "finished_jobs")
       for kind, prefix in (("storekit2", "storekit2:"), ("storekit2_signed", "storekit2-signed:"),
                            ("recovery", "recovery:"), ("consumption", "consumption:"))]
    + [f"ALTER TABLE {table} RENAME COLUMN receipt TO subject" for table in ("verification_jobs", "finished_jobs")]
    + ["ALTER TABLE verification_jobs RENAME COLUMN endpoint TO environment"])

# The schema's versions in order: version n is MIGRATIONS[n - 1]. Append only.
MIGRATIONS: list[Union[str, tuple[str, ...]]] = [
    SCHEMA_V1,
    SCHEMA_V2,
]

JOB_FIELDS = "id, user_id, kind, subject, environment, attempt, tries, created_ms, lease_token"

T = TypeVar("T")


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


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer version of this code: starting would misread it."""


# Errors after which the same transaction may simply run again on another connection: the
# connection was lost (no SQLSTATE, class 08) or PostgreSQL is shutting down or starting (57P0x).
_RETRIED_STATES = ("57P01", "57P02", "57P03")


def _connection_lost(e: BaseException) -> bool:
    import psycopg
    from psycopg_pool import PoolTimeout
    if not isinstance(e, psycopg.OperationalError) or isinstance(e, PoolTimeout):
        return False   # the pool has already waited its timeout; waiting again doubles it
    return e.sqlstate is None or e.sqlstate.startswith("08") or e.sqlstate in _RETRIED_STATES


class Ledger:
    def __init__(self, url: Optional[str] = None, sqlite_path: str = "purchases.db", pool_size: int = 10,
                 clock: Optional[Callable[[], int]] = None, pool_timeout_s: float = 5.0):
        """clock (tests only) replaces the database's clock, for every process that is given the same one.
        pool_timeout_s (PostgreSQL): how long a transaction waits for a connection before it fails."""
        self.url = url if url is not None else os.environ.get("DATABASE_URL")
        self.sqlite_path = sqlite_path
        self.clock = clock
        self.pool_timeout_s = pool_timeout_s
        self._sqlite_lock = threading.Lock()  # SQLite allows one writer; keep it simple and explicit
        self._pool = None
        if self.url:
            from psycopg.conninfo import conninfo_to_dict
            from psycopg_pool import ConnectionPool  # only needed with DATABASE_URL
            kwargs: dict = {"autocommit": False}
            if "connect_timeout" not in conninfo_to_dict(self.url):
                # psycopg's default is 130 s: a host that does not answer would hold a pool worker that long
                kwargs["connect_timeout"] = max(2, math.ceil(pool_timeout_s))
            # No check= here: the pool's own check sleeps 1, 2, 4, 8, 16 s between the broken
            # connections it meets, and after a restart every idle one is broken (see _checkout).
            # reconnect_timeout: a failed reconnection is retried for this long only, then the
            # next request starts a new one. With the default (5 min, doubling delays) the pool
            # still waited 7 s after a 38 s outage had ended, and longer after longer ones.
            self._pool = ConnectionPool(self.url, min_size=1, max_size=pool_size, timeout=pool_timeout_s,
                                        reconnect_timeout=pool_timeout_s, kwargs=kwargs, open=True, name="ledger")
        try:
            self.run(self._migrate)
        except BaseException:
            self.close()
            raise

    def _migrate(self, db: "_Cursor") -> None:
        """Brings the schema to len(MIGRATIONS), in the caller's transaction."""
        if db.pg:  # processes starting together take turns (SQLite: BEGIN IMMEDIATE already does)
            db.query("SELECT pg_advisory_xact_lock(7427)", ())
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)")
        current = self.schema_version(db)
        known = len(MIGRATIONS)
        if current > known:
            raise SchemaTooNew(f"the {self.kind} database's schema is at version {current}, but this code knows versions"
                               f" up to {known} only: run the newer version of the service that migrated it")
        # Version 1 runs on a database without schema_version too: its IF NOT EXISTS leaves the
        # tables of the service before versions were recorded as they are.
        for version in range(current + 1, known + 1):
            step = MIGRATIONS[version - 1]
            for statement in (step,) if isinstance(step, str) else step:
                db.execute(statement)
            db.execute("INSERT INTO schema_version (version, applied_ms) VALUES (?, ?)", (version, now_ms()))

    def schema_version(self, db: Optional["_Cursor"] = None) -> int:
        """The newest schema version applied to the database."""
        if db is None:
            with self.transaction() as cur:
                return self.schema_version(cur)
        return int(db.query("SELECT COALESCE(MAX(version), 0) FROM schema_version", ())[0][0])

    def ping(self, timeout_s: float = 1.0) -> None:
        """For readiness probes: returns when the database answered a query, raises when it did not
        within about timeout_s. PostgreSQL: a connection of its own, so a pool that is busy
        serving requests does not make the process look unready."""
        if not self._pool:
            from pathlib import Path
            # mode=rw: a missing file is a failure, not a new empty database
            conn = sqlite3.connect(Path(self.sqlite_path).resolve().as_uri() + "?mode=rw", uri=True, timeout=timeout_s)
            try:
                conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchall()
            finally:
                conn.close()
            return
        import psycopg
        failure: list[BaseException] = []

        def probe() -> None:
            try:
                # connect_timeout is whole seconds, at least 2: the join below keeps the deadline
                with psycopg.connect(self.url, autocommit=True, connect_timeout=max(2, math.ceil(timeout_s))) as conn:
                    conn.execute("SELECT 1")
            except BaseException as e:
                failure.append(e)
        thread = threading.Thread(target=probe, name="ledger-ping", daemon=True)
        thread.start()
        thread.join(timeout_s)
        if thread.is_alive():
            raise TimeoutError(f"the database did not answer within {timeout_s} s")
        if failure:
            raise failure[0]

    def now(self, db: Optional["_Cursor"] = None) -> int:
        """The time every decision uses, in ms: the database's clock, so that fronts and workers
        on hosts whose clocks differ agree on lease ends and order times. SQLite runs on this host,
        whose clock it is."""
        if self.clock is not None:
            return int(self.clock())
        if not self._pool:
            return now_ms()
        sql = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint"
        if db is not None:
            return int(db.query(sql, ())[0][0])
        with self.transaction() as cur:
            return int(cur.query(sql, ())[0][0])

    @property
    def kind(self) -> str:
        return "postgresql" if self.url else "sqlite"

    def close(self) -> None:
        if self._pool:
            self._pool.close()

    @contextmanager
    def transaction(self) -> Iterator["_Cursor"]:
        """One database transaction: committed at the end of the block, rolled back on an exception."""
        if self._pool:
            conn = self._checkout()
            try:
                with conn:  # commits when the block ends, rolls back on an exception
                    with conn.cursor() as cur:
                        yield _Cursor(cur, pg=True, conn=conn)
            finally:
                self._pool.putconn(conn)  # a broken one is closed there and replaced
        else:
            with self._sqlite_lock:
                conn = sqlite3.connect(self.sqlite_path, timeout=30, isolation_level=None)
                try:
                    conn.execute("BEGIN IMMEDIATE")  # takes the write lock now: claims are atomic
                    yield _Cursor(conn.cursor(), pg=False, conn=conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                finally:
                    conn.close()

    def run(self, work: Callable[["_Cursor"], T], tries: int = 5) -> T:
        """Runs work(db) in one transaction. PostgreSQL may end a transaction in a deadlock, or lose
        the connection (a restart); then the whole of work runs again (it reads everything it
        decides on inside the transaction, so a commit whose answer was lost is not doubled)."""
        for attempt in range(tries):
            try:
                with self.transaction() as db:
                    return work(db)
            except Exception as e:
                lost = self._pool is not None and _connection_lost(e)   # SQLite needs no psycopg
                if attempt + 1 == tries or not (lost or type(e).__name__ in ("DeadlockDetected", "SerializationFailure")):
                    raise
                if lost:  # a restarting server refuses connections for a moment
                    time.sleep(0.1 * 2 ** attempt)
        raise AssertionError("unreachable")

    def _checkout(self):
        """A pooled connection that answered just now. The first broken one found (PostgreSQL
        restarted since it was last used) is discarded and every other idle one is checked at
        once, so a restart costs one failed check, not one per idle connection; replacements
        are opened right away."""
        import psycopg
        from psycopg_pool import ConnectionPool, PoolTimeout
        deadline = time.monotonic() + self.pool_timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PoolTimeout(f"couldn't get a connection after {self.pool_timeout_s:.2f} sec")
            try:
                conn = self._pool.getconn(timeout=left)
            except PoolTimeout:
                raise PoolTimeout(f"couldn't get a connection after {self.pool_timeout_s:.2f} sec") from None
            try:
                ConnectionPool.check_connection(conn)
                return conn
            except psycopg.Error:
                conn.close()
                self._pool.putconn(conn)
                self._pool.check()
            except BaseException:
                self._pool.putconn(conn)
                raise

    # -- orders ---------------------------------------------------------------------------------

    def create_order(self, order_id: str, user_id: str, product_id: str, created_ms: int) -> None:
        with self.transaction() as db:
            self.create_order_in(db, order_id, user_id, product_id, created_ms)

    def create_order_in(self, db: "_Cursor", order_id: str, user_id: str, product_id: str, created_ms: int) -> None:
        db.execute("INSERT INTO orders (order_id, user_id, product_id, created_ms) VALUES (?, ?, ?, ?)",
                   (order_id, user_id, product_id, created_ms))

    def order(self, order_id: str) -> Optional[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT status, transaction_id FROM orders WHERE order_id = ?", (order_id,))
        return {"status": rows[0][0], "transaction_id": rows[0][1]} if rows else None

    def orders(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT order_id, user_id, product_id, status, transaction_id FROM orders ORDER BY order_id", ())
        return [dict(zip(("order_id", "user_id", "product_id", "status", "transaction_id"), r)) for r in rows]

    # -- what one user has: read and written inside one transaction -------------------------------

    def user_state(self, db: "_Cursor", user_id: str) -> tuple[list[str], list[dict]]:
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

    def apply(self, db: "_Cursor", user_id: str, delivery, now_ms: int) -> tuple[list[str], list[str], dict[str, str]]:
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

    def enqueue(self, db: "_Cursor", job_id: str, user_id: str, kind: str, subject: str, environment: str,
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

        def take(db: _Cursor) -> list[Job]:
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

    def hold_lease(self, db: "_Cursor", job: Job) -> bool:
        """True while `job` is still leased to the claim that returned it; locks it for this transaction."""
        return bool(db.query("SELECT 1 FROM verification_jobs WHERE id = ? AND lease_token = ?" + db.for_update,
                             (job.id, job.lease_token)))

    def reschedule(self, db: "_Cursor", job: Job, environment: str, attempt: int, next_at_ms: int, why: str) -> None:
        """Releases the lease; the job is due again at next_at_ms."""
        db.execute("UPDATE verification_jobs SET environment = ?, attempt = ?, next_at_ms = ?, last_status = ?,"
                   " lease_owner = NULL, lease_token = NULL WHERE id = ? AND lease_token = ?",
                   (environment, attempt, next_at_ms, why, job.id, job.lease_token))

    def wake_waiting(self, db: "_Cursor", now_ms: int) -> int:
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

    def finish(self, db: "_Cursor", job: Job, outcome: str, reason: str, now_ms: int) -> None:
        """Takes the job off the queue and keeps why it ended."""
        db.execute("INSERT INTO finished_jobs (id, user_id, kind, subject, outcome, reason, tries, created_ms,"
                   " finished_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (job.id, job.user_id, job.kind, job.subject, outcome, reason, job.tries, job.created_ms, now_ms))
        db.execute("DELETE FROM verification_jobs WHERE id = ? AND lease_token = ?", (job.id, job.lease_token))

    def supersede(self, db: "_Cursor", job_id: str, now_ms: int) -> bool:
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
        def renew(db: _Cursor) -> bool:
            return db.execute("UPDATE verification_jobs SET next_at_ms = ? WHERE lease_token = ?",
                              (self.now(db) + lease_ms, job.lease_token)) > 0
        return self.run(renew)

    # -- who owns what, and what Apple signed ------------------------------------------------------

    def lock_user(self, db: "_Cursor", user_id: str) -> None:
        """Serialises the transactions that plan for one user (PostgreSQL; SQLite has one writer).
        Every path takes this lock first, so two paths never wait on each other in opposite order."""
        if db.pg:
            db.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 1))", ("user:" + user_id,))

    def lock_subscription(self, db: "_Cursor", original_transaction_id: str) -> None:
        """Serialises notifications about one purchase whose owner is not known yet."""
        if db.pg:
            db.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 2))", ("sub:" + original_transaction_id,))

    def owner(self, db: "_Cursor", original_transaction_id: str) -> Optional[str]:
        rows = db.query("SELECT user_id FROM owners WHERE original_transaction_id = ?", (original_transaction_id,))
        return rows[0][0] if rows else None

    def claim_owner(self, db: "_Cursor", original_transaction_id: str, user_id: str, via: str, now_ms: int) -> str:
        """Makes user_id the owner unless someone already is; returns the owner either way."""
        db.execute("INSERT INTO owners (original_transaction_id, user_id, via, claimed_ms) VALUES (?, ?, ?, ?)"
                   " ON CONFLICT (original_transaction_id) DO NOTHING", (original_transaction_id, user_id, via, now_ms))
        return self.owner(db, original_transaction_id) or user_id

    def merge_statement(self, db: "_Cursor", kind: str, key: str, original_transaction_id: str, body: dict,
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

    def user_statements(self, db: "_Cursor", user_id: str) -> dict:
        """The user's stored transactions and renewal infos, as compute_entitlements reads them."""
        rows = db.query("SELECT s.kind, s.body FROM statements s JOIN owners o"
                        " ON o.original_transaction_id = s.original_transaction_id WHERE o.user_id = ?"
                        " ORDER BY s.kind, s.id", (user_id,))
        return {"transactions": [json.loads(b) for k, b in rows if k == "transaction"],
                "renewal_info": [json.loads(b) for k, b in rows if k == "renewal_info"]}

    def statements_of(self, db: "_Cursor", original_transaction_id: str) -> list[dict]:
        return [json.loads(r[0]) for r in db.query("SELECT body FROM statements WHERE original_transaction_id = ?"
                                                   " ORDER BY kind, id", (original_transaction_id,))]

    # -- subscriptions and notifications -----------------------------------------------------------

    def subscription(self, db: "_Cursor", original_transaction_id: str) -> dict:
        rows = db.query("SELECT last_signed_date_ms, expected_renewal_ms, last_news_ms, checked_ms, environment"
                        " FROM subscriptions WHERE original_transaction_id = ?", (original_transaction_id,))
        keys = ("last_signed_date_ms", "expected_renewal_ms", "last_news_ms", "checked_ms", "environment")
        return dict(zip(keys, rows[0])) if rows else dict.fromkeys(keys)

    def note_news(self, db: "_Cursor", original_transaction_id: str, environment: Optional[str], now_ms: int,
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

    def expect_renewal(self, db: "_Cursor", original_transaction_id: str, expected_ms: Optional[int]) -> None:
        db.execute("UPDATE subscriptions SET expected_renewal_ms = ? WHERE original_transaction_id = ?",
                   (expected_ms, original_transaction_id))

    def overdue_subscriptions(self, db: "_Cursor", now_ms: int, slack_ms: int, limit: int) -> list[tuple[str, str]]:
        """(original_transaction_id, environment) of subscriptions that should have renewed more
        than slack_ms ago, with no news since and not asked about since."""
        return [(r[0], r[1] or "Production") for r in db.query(
            "SELECT original_transaction_id, environment FROM subscriptions WHERE expected_renewal_ms IS NOT NULL"
            " AND expected_renewal_ms + ? <= ? AND (last_news_ms IS NULL OR last_news_ms < expected_renewal_ms + ?)"
            " AND (checked_ms IS NULL OR checked_ms < expected_renewal_ms + ?)"
            " ORDER BY expected_renewal_ms, original_transaction_id LIMIT ?",
            (slack_ms, now_ms, slack_ms, slack_ms, limit))]

    def mark_checked(self, db: "_Cursor", original_transaction_id: str, now_ms: int) -> None:
        db.execute("UPDATE subscriptions SET checked_ms = ? WHERE original_transaction_id = ?",
                   (now_ms, original_transaction_id))

    def seen_notifications(self, db: "_Cursor", original_transaction_id: Optional[str], limit: int = 1000) -> list[str]:
        """The UUIDs of the latest notifications handled for this purchase (the library's
        seen_notification_uuids); the primary key catches older ones."""
        if original_transaction_id is None:
            return []
        return [r[0] for r in db.query("SELECT notification_uuid FROM notifications WHERE original_transaction_id = ?"
                                       " ORDER BY received_ms DESC, notification_uuid LIMIT ?",
                                       (original_transaction_id, limit))]

    def record_notification(self, db: "_Cursor", n: dict) -> bool:
        """Stores a handled notification; False when its UUID is already stored (a duplicate)."""
        return db.execute(
            "INSERT INTO notifications (notification_uuid, notification_type, subtype, original_transaction_id,"
            " transaction_id, user_id, signed_date_ms, received_ms, action, source, signed_payload)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (notification_uuid) DO NOTHING",
            (n["notification_uuid"], n["notification_type"], n.get("subtype"), n.get("original_transaction_id"),
             n.get("transaction_id"), n.get("user_id"), n.get("signed_date_ms"), n["received_ms"], n["action"],
             n["source"], n["signed_payload"])) == 1

    def realtime_answer(self, db: "_Cursor", request_identifier: str) -> Optional[str]:
        """The answer given to a realtime request already handled, or None."""
        rows = db.query("SELECT answer FROM realtime_requests WHERE request_identifier = ?", (request_identifier,))
        return rows[0][0] if rows else None

    def record_realtime(self, db: "_Cursor", request_identifier: str, original_transaction_id: str, product_id: str,
                        answer: str, received_ms: int) -> bool:
        """Stores the answer to a realtime request; False when one is already stored for it."""
        return db.execute(
            "INSERT INTO realtime_requests (request_identifier, original_transaction_id, product_id, answer, received_ms)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (request_identifier) DO NOTHING",
            (request_identifier, original_transaction_id, product_id, answer, received_ms)) == 1

    def has_notification(self, db: "_Cursor", notification_uuid: str) -> bool:
        return bool(db.query("SELECT 1 FROM notifications WHERE notification_uuid = ?", (notification_uuid,)))

    def notifications(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT notification_uuid, notification_type, subtype, original_transaction_id, user_id,"
                            " action, source FROM notifications ORDER BY signed_date_ms, notification_uuid", ())
        return [dict(zip(("notification_uuid", "notification_type", "subtype", "original_transaction_id", "user_id",
                          "action", "source"), r)) for r in rows]

    def mark(self, db: "_Cursor", name: str) -> Optional[int]:
        rows = db.query("SELECT value_ms FROM service_marks WHERE name = ?", (name,))
        return int(rows[0][0]) if rows else None

    def set_mark(self, db: "_Cursor", name: str, value_ms: int, only_if_missing: bool = False) -> None:
        db.execute("INSERT INTO service_marks (name, value_ms) VALUES (?, ?) ON CONFLICT (name) DO "
                   + ("NOTHING" if only_if_missing else "UPDATE SET value_ms = excluded.value_ms"), (name, value_ms))

    def table_counts(self) -> dict:
        with self.transaction() as db:
            return {t: int(db.query(f"SELECT COUNT(*) FROM {t}", ())[0][0])
                    for t in ("orders", "deliveries", "owners", "statements", "subscriptions", "notifications")}


class _Cursor:
    """One SQL dialect for both drivers: `?` placeholders, rowcount from execute."""

    def __init__(self, cur, pg: bool, conn):
        self.cur, self.pg, self.conn = cur, pg, conn
        self.for_update = " FOR UPDATE" if pg else ""  # SQLite: the whole transaction holds the write lock
        self.for_update_skip_locked = " FOR UPDATE SKIP LOCKED" if pg else ""

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.pg else sql

    def execute(self, sql: str, params: tuple = ()) -> int:
        self.cur.execute(self._sql(sql), params)
        return self.cur.rowcount

    def execute_unique(self, sql: str, params: tuple) -> int:
        """execute() inside a savepoint: a unique-key violation undoes only this statement and gives 0."""
        if self.pg:
            import psycopg
            try:
                with self.conn.transaction():
                    return self.execute(sql, params)
            except psycopg.errors.UniqueViolation:
                return 0
        self.cur.execute("SAVEPOINT unique_try")
        try:
            n = self.execute(sql, params)
        except sqlite3.IntegrityError:
            self.cur.execute("ROLLBACK TO unique_try")
            n = 0
        self.cur.execute("RELEASE unique_try")
        return n

    def query(self, sql: str, params: tuple) -> list[tuple]:
        self.cur.execute(self._sql(sql), params)
        return list(self.cur.fetchall())


def now_ms() -> int:
    return time.time_ns() // 1_000_000
