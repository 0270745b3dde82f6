"""Purchases: what the app sends (orders, receipts, StoreKit 2 claims), who owns each purchase, and
the one database transaction that stores what Apple signed and records the library's plan
(deliveries, revocations, paid orders). A purchase for A never grants B."""
from __future__ import annotations

import logging
import uuid
from typing import Optional, Union

import iapverify
from apple import ENVIRONMENTS, Answer, Apple, server_environment
from ledger import Ledger
from observability import Metrics, log_event
from user_ids import canonical_user_id, token_uuid
from work_queue import RECEIPT, STOREKIT2, STOREKIT2_SIGNED, job_id, next_try


class Refused(Exception):
    """A purchase that belongs to someone else, or a request that cannot be applied."""

    def __init__(self, verdict: str, reason: str):
        super().__init__(reason)
        self.verdict, self.reason = verdict, reason


ORDER_TTL_MS = 3 * 24 * 3600 * 1000   # as long as a queued purchase may wait for Apple (GIVE_UP_AFTER_MS)


class Purchases:
    def __init__(self, config: dict, verifier: iapverify.Verifier, ledger: Ledger, apple: Apple, metrics: Metrics,
                 has_signer: bool, order_ttl_ms: int = ORDER_TTL_MS):
        """order_ttl_ms: a pending order older than this expires (status `expired`): no purchase
        pays it any more."""
        self.config, self.verifier, self.ledger, self.apple, self.metrics = config, verifier, ledger, apple, metrics
        self.has_signer, self.order_ttl_ms = has_signer, order_ttl_ms

    def clock(self) -> int:
        return self.ledger.now()

    # -- the front: what the app calls ----------------------------------------------------------

    def create_order(self, user_id: str, product_id: str) -> str:
        order_id = uuid.uuid4().hex
        with self.ledger.transaction() as db:   # created_ms by the database's clock: it is matched to purchases
            now = self.ledger.now(db)
            self.ledger.expire_orders(db, canonical_user_id(user_id), now - self.order_ttl_ms)
            self.ledger.create_order_in(db, order_id, canonical_user_id(user_id), product_id, now)
        return order_id

    def submit_receipt(self, user_id: str, receipt: str, environment: str = "Production", attempt: int = 1) -> dict:
        """Verifies through Apple (the /verifyReceipt host `environment` first) and delivers, or
        queues the receipt. Returns what happened, for the app."""
        return self.submit(user_id, RECEIPT, receipt, server_environment(environment), attempt)

    def expire_stale_orders(self) -> int:
        """Every pending order older than order_ttl_ms expires (the worker runs this every few
        minutes; a user's own also expire when they make a new order). Returns how many."""
        with self.ledger.transaction() as db:
            return self.ledger.expire_orders(db, None, self.ledger.now(db) - self.order_ttl_ms)

    def check_receipt(self, user_id: str, receipt: str) -> Optional[dict]:
        """The library's own checks of a receipt (signature, Apple's chain, this app, an accepted
        environment), before Apple is asked or the claim is queued: None when it passes, else the
        `invalid` answer (garbage, another app's or a forged receipt: nothing stored)."""
        answer = self.apple.check_receipt(receipt, "Production", 1)
        return None if answer is None else self.invalid(user_id, "receipt", answer.verdict, answer.why)

    def invalid(self, user_id: str, entry: str, verdict: str, reason: str) -> dict:
        self.metrics.verdicts.labels(entry, verdict).inc()
        self.metrics.claim_refusals.labels(entry, verdict).inc()
        log_event(logging.INFO, "refused", entry_point=entry, user_id=user_id, verdict=verdict, reason=reason)
        return {"status": "invalid", "verdict": verdict, "reason": reason}

    def queue_claim(self, user_id: str, kind: str, subject: str, environment: str, why: str = "front busy") -> dict:
        """A checked claim the front does not ask Apple about now (its calls to Apple are all in
        flight): queued, due at once, for a worker; the app is answered 202 at once."""
        user_id = canonical_user_id(user_id)

        def store(db) -> None:
            now = self.ledger.now(db)
            self.ledger.enqueue(db, job_id(user_id, kind, subject), user_id, kind, subject, environment, 1, now, now, why)
        self.ledger.run(store)
        self.metrics.verdicts.labels("receipt" if kind == RECEIPT else "storekit2", "temporarily_unavailable").inc()
        log_event(logging.INFO, "queued", entry_point="receipt" if kind == RECEIPT else "storekit2", user_id=user_id,
                  job=job_id(user_id, kind, subject)[:16], why=why, retry_after_ms=0)
        return {"status": "pending", "retry_after_ms": 0, "why": why}

    def submit(self, user_id: str, kind: str, subject: str, environment: str, attempt: int, checked: bool = False) -> dict:
        """What the front does for a claim (a receipt, or a StoreKit 2 transaction id: work_queue's
        kinds): ask Apple once, then settle, refuse, or queue it for a worker. checked: the
        library's own checks were done (check_receipt)."""
        user_id = canonical_user_id(user_id)
        answer = self.apple.ask(kind, subject, environment, attempt, checked=checked)
        key = job_id(user_id, kind, subject)
        entry = "receipt" if kind == RECEIPT else "storekit2"
        if answer.invalid:   # garbage, another app's or a forged receipt: refused before Apple, nothing stored
            return self.invalid(user_id, entry, answer.verdict, answer.why)
        if answer.kind == "accept":
            def record(db) -> dict:
                self.ledger.wake_waiting(db, self.ledger.now(db))   # Apple answers again: wake who waited
                result = self.settle(db, user_id, answer)
                if result["status"] == "accepted":
                    self.ledger.supersede(db, key, self.ledger.now(db))
                return result
            result = self.ledger.run(record)
            self.metrics.verdicts.labels(entry, result.get("verdict", "valid")).inc()
            return result
        if answer.kind == "reject":
            self.metrics.verdicts.labels(entry, answer.verdict or "rejected").inc()
            log_event(logging.INFO, "refused", entry_point=entry, user_id=user_id, verdict=answer.verdict, reason=answer.why)
            return {"status": "rejected", "verdict": answer.verdict, "reason": answer.why}
        if answer.kind == "fix_configuration":
            log_event(logging.ERROR, "fix_configuration", reason=answer.why)  # an operator must act
        next_attempt, delay = next_try(answer.kind, answer.attempt, answer.delay_ms)

        def store(db) -> None:
            now = self.ledger.now(db)
            self.ledger.enqueue(db, key, user_id, kind, subject, answer.environment, next_attempt, now + delay, now,
                                answer.why)
        self.ledger.run(store)
        self.metrics.verdicts.labels(entry, "temporarily_unavailable").inc()
        log_event(logging.INFO, "queued", entry_point=entry, user_id=user_id, job=key[:16], why=answer.why,
                  retry_after_ms=delay)
        return {"status": "pending", "retry_after_ms": delay, "why": answer.why}

    def submit_transaction(self, user_id: str, transaction_id: str, environment: str = "Production",
                           attempt: int = 1) -> dict:
        """StoreKit 2: the app sends the id of a transaction it just finished. The service reads the
        customer's whole transaction history from the App Store Server API (every page, every
        signed item verified), delivers what is new exactly once, and answers with the
        entitlements; or queues the call when Apple says later. Returns what happened, for the app."""
        if not self.has_signer:
            raise ValueError("the StoreKit 2 flow needs a signer config (APPLE_API_KEY_FILE)")
        if not transaction_id:
            raise ValueError("transaction_id must not be empty")
        return self.submit(user_id, STOREKIT2, transaction_id, server_environment(environment), attempt)

    def submit_signed_transaction(self, user_id: str, signed_transaction: str) -> dict:
        """StoreKit 2, the proof an app should send: the signed transaction (JWS) StoreKit 2 gave it.
        The library verifies it first (Apple's signature and chain, this app, an accepted
        environment); a token that fails is refused at once (status `invalid`, Apple never asked).
        Then as submit_transaction, with the verified id and environment, and the purchase goes to
        the sender unless its appAccountToken or an earlier owner says otherwise."""
        checked = self.check_signed_transaction(user_id, signed_transaction)
        if isinstance(checked, dict):
            return checked
        transaction_id, environment = checked
        return self.submit(user_id, STOREKIT2_SIGNED, transaction_id, environment, 1)

    def check_signed_transaction(self, user_id: str, signed_transaction: str) -> Union[dict, tuple[str, str]]:
        """The library's checks of a signed transaction: (its transaction id, its environment), or
        the `invalid` answer."""
        if not self.has_signer:
            raise ValueError("the StoreKit 2 flow needs a signer config (APPLE_API_KEY_FILE)")
        r = self.verifier.verify_jws(signed_transaction.encode(), now_ms=self.clock(), options={"kind": "transaction"})
        txn = r.transaction if r.valid else None
        if txn is None or not txn.transaction_id:
            return self.invalid(user_id, "storekit2", r.verdict if not r.valid else "malformed",
                                r.reason if not r.valid else "not a signed transaction")
        environment = str(getattr(r.environment, "value", r.environment))
        if environment not in ENVIRONMENTS:   # Xcode or LocalTesting: no App Store Server API to ask
            return {"status": "invalid", "verdict": "environment_rejected",
                    "reason": f"a {environment} transaction has no App Store Server history"}
        return txn.transaction_id, environment

    def entitlements(self, user_id: str) -> dict:
        """What the user is entitled to now: the library's compute_entitlements over every
        statement Apple signed about the user's purchases, at the database's now."""
        user_id = canonical_user_id(user_id)
        now = self.ledger.now()
        result = self.verifier.compute_entitlements(self.ledger.user_statements_json(user_id), now_ms=now)
        if not result.valid:   # a stored statement the library cannot read: say so, grant nothing
            log_event(logging.ERROR, "entitlements_unreadable", user_id=user_id, verdict=result.verdict, reason=result.reason)
            raise RuntimeError(f"stored statements of {user_id} are unreadable: {result.reason}")
        return {"user_id": user_id, "now_ms": now,
                "entitlements": [entitlement_view(e) for e in result.raw["entitlements"]]}

    # -- App Store Server Notifications V2 ----------------------------------------------------------

    # -- ownership: a purchase for A never grants B ---------------------------------------------------

    @staticmethod
    def token_user(txn: Optional[dict]) -> Optional[str]:
        """The user a transaction's appAccountToken names. A Family Sharing member's transaction
        is not theirs to name: it maps through its own original transaction instead."""
        if not txn or txn.get("in_app_ownership_type") == "FAMILY_SHARED":
            return None
        token = txn.get("app_account_token")
        return (token_uuid(token) or str(token)) if token else None

    def via(self, txn: Optional[dict], owner: str) -> str:
        return "app_account_token" if self.token_user(txn) == owner else "first_claim"

    def owner_for(self, db, txn: Optional[dict], original: str, claimant: Optional[str]) -> Optional[str]:
        """Who owns the purchase `original`: the user already recorded, else the one its
        appAccountToken names, else the claimant (the user submitting it). Raises Refused when
        the token, the record and the claimant disagree."""
        token_user = self.token_user(txn)
        claimant = canonical_user_id(claimant) if claimant else claimant
        recorded = self.ledger.owner(db, original)
        if token_user and recorded and token_user != recorded:
            raise Refused("owned_by_another_user", f"transaction {original}: its appAccountToken names another user"
                                                   " than the one who owns it")
        owner = recorded or token_user or claimant
        if claimant and owner != claimant:
            raise Refused("owned_by_another_user", f"transaction {original} belongs to another user")
        return owner

    # -- the worker: retries what the queue holds -------------------------------------------------

    # -- what a claim comes to, in one database transaction -------------------------------------------

    def settle(self, db, user_id: str, answer: Answer) -> dict:
        """Inside one database transaction: keep what Apple signed about the user's purchases,
        then plan with the library over everything stored for the user, and record the plan.

        A transaction that belongs to another user (its appAccountToken, or an earlier claim) is
        refused and logged; if nothing is left, the submission is rejected."""
        user_id = canonical_user_id(user_id)
        self.ledger.lock_user(db, user_id)
        now = self.ledger.now(db)
        if answer.transactions is not None:
            transactions, renewals = list(answer.transactions), list(answer.renewals or ())
            if not answer.proven:   # an id alone: the claimed purchase's appAccountToken must name the sender
                claimed = next((t for t in transactions if t.get("transaction_id") == answer.claimed_id), None)
                # (a token naming someone else is refused below, as owned by another user)
                if claimed is None or self.token_user(claimed) is None:
                    self.metrics.claim_refusals.labels("storekit2", "claim_not_proven").inc()
                    log_event(logging.WARNING, "claim_not_proven", user_id=user_id, transaction_id=answer.claimed_id)
                    return {"status": "rejected", "verdict": "claim_not_proven",
                            "reason": "a transaction id alone proves nothing unless the purchase's appAccountToken "
                                      "names you: send the signed transaction StoreKit 2 gave the app"}
        else:
            result = self.verifier.interpret_response(answer.body, environment=answer.environment, attempt=answer.attempt,
                                                      now_ms=now)
            if result.action != "accept":  # accepted a moment ago; only the clock moved
                return {"status": "rejected", "verdict": result.verdict, "reason": result.reason}
            receipt = result.raw.get("receipt") or {}
            transactions, renewals = receipt.get("in_app") or [], receipt.get("pending_renewal_info") or []
        mine, refused = set(), []
        for original in sorted({t.get("original_transaction_id") or t["transaction_id"] for t in transactions}):
            txn = next((t for t in transactions if (t.get("original_transaction_id") or t["transaction_id"]) == original
                        and self.token_user(t)), None)
            try:
                owner = self.owner_for(db, txn, original, claimant=user_id)
            except Refused as e:
                refused.append(original)
                log_event(logging.WARNING, "purchase_refused", user_id=user_id, original_transaction_id=original,
                          reason=e.reason)
                continue
            if self.ledger.claim_owner(db, original, owner, self.via(txn, owner), now) != user_id:
                refused.append(original)   # another request claimed it first, a moment ago
                log_event(logging.WARNING, "purchase_refused", user_id=user_id, original_transaction_id=original,
                          reason="claimed by another user first")
                continue
            mine.add(original)
        if refused:
            self.metrics.refusals.labels("storekit2" if answer.transactions is not None else "receipt").inc()
        if transactions and not mine:
            return {"status": "rejected", "verdict": "owned_by_another_user",
                    "reason": "every purchase in it belongs to another user"}
        self.merge(db, [t for t in transactions if (t.get("original_transaction_id") or t["transaction_id"]) in mine],
                    [r for r in renewals if r.get("original_transaction_id") in mine], now)
        planned = self.plan(db, user_id, now)
        return {"status": "accepted", **planned, "refused": refused}

    def merge(self, db, transactions: list, renewals: list, now: int) -> None:
        for t in transactions:
            original = t.get("original_transaction_id") or t["transaction_id"]
            self.ledger.merge_statement(db, "transaction", t["transaction_id"], original, t, now)
            if t.get("expires_date_ms") is not None:
                self.ledger.note_news(db, original, t.get("environment"), now)
        for r in renewals:
            self.ledger.merge_statement(db, "renewal_info", r["original_transaction_id"], r["original_transaction_id"], r, now)

    def plan(self, db, user_id: str, now: int) -> dict:
        """The library's plan over everything stored for the user, recorded in this transaction:
        deliveries (the primary key keeps each to one), revocations, paid orders, and when each
        subscription should renew next (for the recovery job)."""
        used, orders = self.ledger.user_state(db, user_id)
        statements = self.ledger.user_statements(db, user_id)
        result = self.verifier.compute_entitlements(statements, now_ms=now,
                                                    options={"delivered_transaction_ids": used, "orders": orders})
        if not result.valid:
            raise RuntimeError(f"stored statements of {user_id} are unreadable: {result.reason}")
        delivered, revoked, paid = self.ledger.apply(db, user_id, result.delivery, now)
        # Counted when the transaction commits is what an operator means; a rollback (rare: the
        # database retries it) may count one twice. Deliveries themselves stay exactly once.
        self.metrics.deliveries.inc(len(delivered))
        self.metrics.revocations.inc(len(revoked))
        for e in result.entitlements:
            if e.original_transaction_id and e.expires_date_ms is not None:
                renewing = e.active and e.will_renew is not False
                self.ledger.expect_renewal(db, e.original_transaction_id, e.expires_date_ms if renewing else None)
        if delivered or revoked:
            log_event(logging.INFO, "delivery", user_id=user_id, delivered=delivered, revoked=revoked, paid=paid)
        return {"delivered": delivered, "revoked": revoked,
                "entitlements": {e.id: e.active for e in result.entitlements},
                "orders": {o["order_id"]: "paid" if o["order_id"] in paid else "pending" for o in orders},
                "paid": paid}


def entitlement_view(e: dict) -> dict:
    """What the app needs of an entitlement: access, state, expiry and renewal intent."""
    keys = ("id", "active", "state", "product_id", "original_transaction_id", "expires_date_ms", "will_renew",
            "renews_to", "period", "ownership", "expiration_reason", "revocation_type", "price_increase")
    return {k: e.get(k) for k in keys}
