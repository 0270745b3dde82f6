"""The ledger's schema, version by version.

MIGRATIONS lists the schema's changes in order; version n is MIGRATIONS[n - 1], and the table
`schema_version` records every version applied (ledger_database.py applies them at start).
Version 1 is the schema of the service before versions were recorded: written with IF NOT EXISTS,
it is run on such a database (adding anything an older copy lacked) and then recorded. To change the schema,
append one entry, a statement or a tuple of statements, and never edit one that was released:

    MIGRATIONS = [
        SCHEMA_V1,
        SCHEMA_V2,
        "ALTER TABLE orders ADD COLUMN price_micros BIGINT",        # version 3
    ]

A new column must be nullable or have a default: rows already stored have no value for it, and
processes still running the previous code do not write it.
"""
from __future__ import annotations

from typing import Callable, Union

# Version 1: the schema before versions were recorded. Keep it as it is (see above).
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


# Version 3: user ids that are UUIDs are stored in their canonical lower case (the service now
# compares them so: an app's `UUID().uuidString` is upper case, its appAccountToken is read lower
# case). Rows an earlier version stored under an upper-case UUID move to the lower-case one.
USER_TABLES = ("orders", "deliveries", "owners", "notifications", "verification_jobs", "finished_jobs")


def lower_case_uuid_user_ids(db) -> None:
    from user_ids import canonical_user_id
    for table in USER_TABLES:
        for (user_id,) in db.query(f"SELECT DISTINCT user_id FROM {table} WHERE user_id <> lower(user_id)", ()):
            if canonical_user_id(user_id) != user_id:
                db.execute(f"UPDATE {table} SET user_id = ? WHERE user_id = ?", (canonical_user_id(user_id), user_id))


# The schema's versions in order: version n is MIGRATIONS[n - 1]. Append only.
MIGRATIONS: list[Union[str, tuple[str, ...], Callable]] = [
    SCHEMA_V1,
    SCHEMA_V2,
    lower_case_uuid_user_ids,
]
