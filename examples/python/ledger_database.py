"""How the ledger talks to its database: SQLite by default, PostgreSQL when DATABASE_URL is set
(postgresql://...); one transaction at a time, the database's clock, readiness, and the schema's
versions (ledger_schema.py) applied at start.

At start the missing schema versions are applied in one database transaction, under a lock that
makes processes starting together take turns; a database whose version is newer than this code
knows is refused.

PostgreSQL connections: each is checked when taken from the pool; one broken by a restart of
PostgreSQL is replaced at once together with every other broken idle one, and Database.run runs
its work again when the connection breaks under it. Waiting for a connection ends after
pool_timeout_s (5 s) instead of psycopg_pool's 30 s, and Database.ping answers a readiness probe
within its own deadline.
"""
from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TypeVar

import ledger_schema

T = TypeVar("T")


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer version of this code: starting would misread it."""


CLOCK_REFRESH_S = 1.0   # how often now() reads the database's clock again outside a transaction

# Errors after which the same transaction may simply run again on another connection: the
# connection was lost (no SQLSTATE, class 08) or PostgreSQL is shutting down or starting (57P0x).
_RETRIED_STATES = ("57P01", "57P02", "57P03")


def _connection_lost(e: BaseException) -> bool:
    import psycopg
    from psycopg_pool import PoolTimeout
    if not isinstance(e, psycopg.OperationalError) or isinstance(e, PoolTimeout):
        return False   # the pool has already waited its timeout; waiting again doubles it
    return e.sqlstate is None or e.sqlstate.startswith("08") or e.sqlstate in _RETRIED_STATES


class Database:
    """The connection plumbing under Ledger (ledger.py), which adds the service's reads and writes."""

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
        self._clock_offset: tuple = (None, 0.0)   # (database ms - host ms, when read): see now()
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

    def _migrate(self, db: "Cursor") -> None:
        """Brings the schema to len(MIGRATIONS), in the caller's transaction."""
        if db.pg:  # processes starting together take turns (SQLite: BEGIN IMMEDIATE already does)
            db.query("SELECT pg_advisory_xact_lock(7427)", ())
        db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)")
        current = self.schema_version(db)
        migrations = ledger_schema.MIGRATIONS   # read at each start: tests append a version
        known = len(migrations)
        if current > known:
            raise SchemaTooNew(f"the {self.kind} database's schema is at version {current}, but this code knows versions"
                               f" up to {known} only: run the newer version of the service that migrated it")
        # Version 1 runs on a database without schema_version too: its IF NOT EXISTS leaves the
        # tables of the service before versions were recorded as they are.
        for version in range(current + 1, known + 1):
            step = migrations[version - 1]
            if callable(step):   # a step SQL alone cannot say in both dialects: step(db)
                step(db)
            for statement in () if callable(step) else (step,) if isinstance(step, str) else step:
                db.execute(statement)
            db.execute("INSERT INTO schema_version (version, applied_ms) VALUES (?, ?)", (version, now_ms()))

    def schema_version(self, db: Optional["Cursor"] = None) -> int:
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

    def now(self, db: Optional["Cursor"] = None) -> int:
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
        # Outside a transaction (a token's expiry, a rate limit's minute, a read's now): this
        # host's clock plus the database's offset from it, read again every CLOCK_REFRESH_S. The
        # same clock, without a round trip to the database on every request.
        offset, read_at = self._clock_offset
        if offset is None or time.monotonic() - read_at > CLOCK_REFRESH_S:
            [(db_ms,)] = self.read(sql, ())
            offset, read_at = int(db_ms) - now_ms(), time.monotonic()
            self._clock_offset = (offset, read_at)
        return now_ms() + offset

    def read(self, sql: str, params: tuple) -> list[tuple]:
        """One statement that only reads, outside any transaction (PostgreSQL: autocommit, so no
        BEGIN and COMMIT round trips; a statement sees one snapshot by itself). A connection lost
        under it (PostgreSQL restarted) is replaced and the statement sent again."""
        if not self._pool:
            with self.transaction() as db:
                return db.query(sql, params)
        import psycopg
        from psycopg_pool import PoolTimeout
        for attempt in range(3):
            # No liveness check first (a round trip each time): a connection PostgreSQL dropped
            # fails this statement instead, and it is sent again on a checked one.
            try:
                conn = self._pool.getconn(timeout=self.pool_timeout_s) if attempt == 0 else self._checkout()
            except PoolTimeout:
                raise PoolTimeout(f"couldn't get a connection after {self.pool_timeout_s:.2f} sec") from None
            try:
                conn.autocommit = True
                try:
                    return list(conn.execute(sql.replace("?", "%s"), params).fetchall())
                finally:
                    if not conn.closed:
                        conn.autocommit = False
            except psycopg.OperationalError as e:
                if attempt == 2 or not _connection_lost(e):
                    raise
                self._pool.check()
            finally:
                self._pool.putconn(conn)
        raise AssertionError("unreachable")

    @property
    def kind(self) -> str:
        return "postgresql" if self.url else "sqlite"

    def close(self) -> None:
        if self._pool:
            self._pool.close()

    @contextmanager
    def transaction(self) -> Iterator["Cursor"]:
        """One database transaction: committed at the end of the block, rolled back on an exception."""
        if self._pool:
            conn = self._checkout()
            try:
                with conn:  # commits when the block ends, rolls back on an exception
                    with conn.cursor() as cur:
                        yield Cursor(cur, pg=True, conn=conn)
            finally:
                self._pool.putconn(conn)  # a broken one is closed there and replaced
        else:
            with self._sqlite_lock:
                conn = sqlite3.connect(self.sqlite_path, timeout=30, isolation_level=None)
                try:
                    conn.execute("BEGIN IMMEDIATE")  # takes the write lock now: claims are atomic
                    yield Cursor(conn.cursor(), pg=False, conn=conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                finally:
                    conn.close()

    def run(self, work: Callable[["Cursor"], T], tries: int = 5) -> T:
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


class Cursor:
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
