"""The delivery ledger: which transactions were delivered, to whom, and what is pending.

SQLite by default; PostgreSQL when DATABASE_URL is set (postgresql://...). The primary key on
transaction_id is what makes delivery exactly-once: two requests racing to deliver the same
purchase both try to insert it, and only one insert succeeds.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Iterator, Optional

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS orders (
        order_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, product_id TEXT NOT NULL, created_ms BIGINT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending', transaction_id TEXT)""",
    """CREATE TABLE IF NOT EXISTS deliveries (
        transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT, product_id TEXT NOT NULL,
        user_id TEXT NOT NULL, quantity BIGINT NOT NULL, delivered_ms BIGINT NOT NULL, revoked_ms BIGINT)""",
    """CREATE TABLE IF NOT EXISTS pending_verifications (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL, receipt TEXT NOT NULL, order_id TEXT,
        endpoint TEXT NOT NULL, attempt INTEGER NOT NULL, next_at_ms BIGINT NOT NULL, last_status TEXT)""",
]


class Ledger:
    def __init__(self, url: Optional[str] = None, sqlite_path: str = "purchases.db"):
        self.url = url if url is not None else os.environ.get("DATABASE_URL")
        self.sqlite_path = sqlite_path
        self._sqlite_lock = threading.Lock()  # SQLite allows one writer; keep it simple and explicit
        with self.transaction() as db:
            for statement in SCHEMA:
                db.execute(statement)

    @property
    def kind(self) -> str:
        return "postgresql" if self.url else "sqlite"

    @contextmanager
    def transaction(self) -> Iterator["_Cursor"]:
        if self.url:
            import psycopg  # only needed with DATABASE_URL
            with psycopg.connect(self.url, autocommit=False) as conn:
                with conn.cursor() as cur:
                    yield _Cursor(cur, "%s")
                conn.commit()
        else:
            with self._sqlite_lock:
                conn = sqlite3.connect(self.sqlite_path, timeout=30, isolation_level=None)
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    yield _Cursor(conn.cursor(), "?")
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                finally:
                    conn.close()

    # -- orders ---------------------------------------------------------------------------------

    def create_order(self, order_id: str, user_id: str, product_id: str, created_ms: int) -> None:
        with self.transaction() as db:
            db.execute("INSERT INTO orders (order_id, user_id, product_id, created_ms) VALUES (?, ?, ?, ?)",
                       (order_id, user_id, product_id, created_ms))

    def pending_orders(self, user_id: str) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT order_id, product_id, created_ms FROM orders WHERE user_id = ? AND status = 'pending'",
                            (user_id,))
        return [{"order_id": r[0], "product_id": r[1], "created_ms": int(r[2])} for r in rows]

    def order(self, order_id: str) -> Optional[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT status, transaction_id FROM orders WHERE order_id = ?", (order_id,))
        return {"status": rows[0][0], "transaction_id": rows[0][1]} if rows else None

    # -- deliveries -----------------------------------------------------------------------------

    def delivered_ids(self, user_id: str) -> list[str]:
        with self.transaction() as db:
            return [r[0] for r in db.query("SELECT transaction_id FROM deliveries WHERE user_id = ?", (user_id,))]

    def apply(self, user_id: str, delivery, now_ms: int) -> tuple[list[str], list[str]]:
        """Records a delivery plan. Returns (delivered now, revoked now); losers of a race deliver nothing."""
        delivered, revoked = [], []
        with self.transaction() as db:
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
                if match.transaction_id:
                    db.execute("UPDATE orders SET status = 'paid', transaction_id = ? WHERE order_id = ? AND status = 'pending'",
                               (match.transaction_id, match.order_id))
        return delivered, revoked

    def deliveries(self) -> list[dict]:
        with self.transaction() as db:
            rows = db.query("SELECT transaction_id, user_id, product_id, revoked_ms FROM deliveries ORDER BY transaction_id", ())
        return [{"transaction_id": r[0], "user_id": r[1], "product_id": r[2], "revoked_ms": r[3]} for r in rows]

    # -- verifications to retry -----------------------------------------------------------------

    def store_pending(self, pending_id: str, user_id: str, receipt: str, order_id: Optional[str], endpoint: str,
                      attempt: int, next_at_ms: int, last_status: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM pending_verifications WHERE id = ?", (pending_id,))
            db.execute("INSERT INTO pending_verifications (id, user_id, receipt, order_id, endpoint, attempt, next_at_ms, last_status)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (pending_id, user_id, receipt, order_id, endpoint, attempt, next_at_ms, last_status))

    def take_due(self, now_ms: int) -> list[dict]:
        """Removes and returns the verifications due by now (a failed retry stores itself again)."""
        with self.transaction() as db:
            rows = db.query("SELECT id, user_id, receipt, order_id, endpoint, attempt FROM pending_verifications"
                            " WHERE next_at_ms <= ? ORDER BY next_at_ms", (now_ms,))
            for r in rows:
                db.execute("DELETE FROM pending_verifications WHERE id = ?", (r[0],))
        return [dict(zip(("id", "user_id", "receipt", "order_id", "endpoint", "attempt"), r)) for r in rows]

    def pending_count(self) -> int:
        with self.transaction() as db:
            return int(db.query("SELECT COUNT(*) FROM pending_verifications", ())[0][0])


class _Cursor:
    """One SQL dialect for both drivers: `?` placeholders, rowcount from execute."""

    def __init__(self, cur, placeholder: str):
        self.cur, self.placeholder = cur, placeholder

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", "%s")

    def execute(self, sql: str, params: tuple = ()) -> int:
        self.cur.execute(self._sql(sql), params)
        return self.cur.rowcount

    def query(self, sql: str, params: tuple) -> list[tuple]:
        self.cur.execute(self._sql(sql), params)
        return list(self.cur.fetchall())


def now_ms() -> int:
    return time.time_ns() // 1_000_000
