"""The work queue's vocabulary: what kinds of job share it, how a job is keyed, and when the next
try of a job is due after an answer from Apple. The ledger stores jobs; jobs.py runs them."""
from __future__ import annotations

import hashlib

GIVE_UP_DELAY_MS = 15 * 60 * 1000            # fix_configuration: the same attempt this much later
OUTAGE_RETRY_MS = 60 * 1000                  # while Apple is unreachable or failing: try again this often (capped backoff)
GIVE_UP_AFTER_MS = 3 * 24 * 3600 * 1000      # a job still temporary this long after it was stored ends as given_up
LEASE_MS = 5 * 60 * 1000                     # renewed while a job runs (heartbeat); see README.md
BATCH = 5

# What a job is (its `kind` column) and what it is about (its `subject`):
# RECEIPT: a base64 receipt to verify through /verifyReceipt;
# STOREKIT2: a transaction id the app sent alone, which proves nothing (ids are guessable), so the
#   purchase is the sender's only if its appAccountToken names them;
# STOREKIT2_SIGNED: the id of the signed transaction StoreKit 2 gave the app, verified before the
#   job was stored (possession is the proof);
# RECOVERY: an environment whose notification history is read, and overdue subscriptions asked
#   about (one recurring job per environment);
# CONSUMPTION: a transaction whose CONSUMPTION_REQUEST is answered.
RECEIPT, STOREKIT2, STOREKIT2_SIGNED, RECOVERY, CONSUMPTION = (
    "receipt", "storekit2", "storekit2_signed", "recovery", "consumption")
KINDS = (RECEIPT, STOREKIT2, STOREKIT2_SIGNED, RECOVERY, CONSUMPTION)
# How a job's id was derived before kinds had a column (release 0.1 stored "storekit2:<id>" in the
# receipt column): kept, so that a claim sent again after the upgrade finds the job already queued.
_ID_PREFIX = {RECEIPT: "", STOREKIT2: "storekit2:", STOREKIT2_SIGNED: "storekit2-signed:", RECOVERY: "recovery:",
              CONSUMPTION: "consumption:"}


def job_id(user_id: str, kind: str, subject: str) -> str:
    """One queue entry per user, kind and subject, whoever stores it."""
    return hashlib.sha256(f"{user_id}:{_ID_PREFIX[kind]}{subject}".encode()).hexdigest()


def next_try(kind: str, attempt: int, delay_ms: int) -> tuple[int, int]:
    """(the attempt number, the delay) of a job's next try after Apple's answer of `kind`:
    later: the library's retry_after_ms, with the next attempt; give_up (Apple unreachable or
    failing past the library's back-off of 1, 2, 4, 8 s): a new round of attempts every
    OUTAGE_RETRY_MS while the outage lasts (the first call Apple answers again wakes every waiting
    job sooner); fix_configuration: the same attempt much later, never given up for it: the
    receipt is fine, our secret is not."""
    if kind == "later":
        return attempt + 1, delay_ms
    if kind == "give_up":
        return 1, OUTAGE_RETRY_MS
    return attempt, GIVE_UP_DELAY_MS
