"""What Apple pushes: App Store Server Notifications V2 (verified, then applied in one database
transaction, each once, in any order) and Retention Messaging realtime requests (answered once per
request identifier)."""
from __future__ import annotations

import json
import logging
import uuid
from typing import Optional

import iapverify
from apple import ENVIRONMENTS
from ledger import Ledger
from observability import Metrics, log_event
from purchases import Purchases, Refused
from work_queue import CONSUMPTION, job_id


class Notifications:
    def __init__(self, verifier: iapverify.Verifier, ledger: Ledger, purchases: Purchases, metrics: Metrics,
                 signer: Optional[iapverify.Signer], retention: Optional[dict] = None):
        """retention maps a product id to the answer given to Apple's Retention Messaging realtime
        requests about it: the fields of the library's realtime_response signature kind
        (message_identifier, alternate_product_id, promotional_offer)."""
        self.verifier, self.ledger, self.purchases, self.metrics = verifier, ledger, purchases, metrics
        self.signer, self.retention = signer, dict(retention or {})

    def clock(self) -> int:
        return self.ledger.now()

    def handle_realtime_request(self, signed_payload: str) -> tuple[int, dict]:
        """Apple's Retention Messaging realtime request: a subscriber is about to cancel, and Apple
        asks what to show them. Returns (HTTP status, body). 200 with the answer (the same one
        again for a request Apple repeats; {} when there is nothing to offer for the product or the
        request is a replay); 400 when the token is forged, foreign or not a realtime request."""
        now = self.clock()
        r = self.verifier.verify_jws(signed_payload.encode(), now_ms=now, options={"kind": "realtime_request"})
        self.metrics.verdicts.labels("realtime_request", r.verdict).inc()
        if not r.valid or r.realtime_request is None:
            log_event(logging.WARNING, "realtime_request_refused", verdict=r.verdict, reason=r.reason)
            return 400, {"status": "refused", "verdict": r.verdict, "reason": r.reason}
        request = r.realtime_request
        if request["action"] == "ignore_stale":
            log_event(logging.WARNING, "realtime_request_stale", request_identifier=request["request_identifier"])
            return 200, {}
        with self.ledger.transaction() as db:
            answer = self.ledger.realtime_answer(db, request["request_identifier"])
        if answer is not None:
            return 200, json.loads(answer)
        rule = self.retention.get(request["product_id"])
        body: dict = {}
        if rule and self.signer is not None:
            # Each answer its own nonce: a promotional offer's signature is good for one use.
            signed = self.signer.sign({"kind": "realtime_response", "nonce": str(uuid.uuid4()), **rule}, now_ms=now)
            body = json.loads(signed.body or "{}")
        with self.ledger.transaction() as db:
            if not self.ledger.record_realtime(db, request["request_identifier"], request["original_transaction_id"],
                                               request["product_id"], json.dumps(body), now):
                body = json.loads(self.ledger.realtime_answer(db, request["request_identifier"]) or "{}")
        log_event(logging.INFO, "realtime_request_answered", request_identifier=request["request_identifier"],
                  product_id=request["product_id"], answer=next(iter(body), "nothing"))
        return 200, body

    def handle_notification(self, signed_payload: str, source: str = "push") -> tuple[int, dict]:
        """Verifies a notification and applies it in one database transaction. Returns (HTTP
        status for Apple, body). 200: applied, duplicate, stale or kept as data; 400: forged,
        foreign or not a notification; 409: its appAccountToken names another user than the one
        who owns the purchase. Nothing is written unless the answer is 200."""
        probe = self.verifier.verify_jws(signed_payload.encode(), now_ms=self.clock())
        if not probe.valid or probe.kind != "notification":
            verdict = probe.verdict if not probe.valid else "malformed"
            reason = probe.reason if not probe.valid else f"a {probe.kind}, not a notification"
            self.metrics.verdicts.labels("notification", verdict).inc()
            log_event(logging.WARNING, "notification_refused", source=source, verdict=verdict, reason=reason)
            return 400, {"status": "refused", "verdict": verdict, "reason": reason}
        n = probe.notification
        txn, renewal = n.get("transaction"), n.get("renewal_info")
        original = (txn or {}).get("original_transaction_id") or (renewal or {}).get("original_transaction_id")
        environment = (txn or {}).get("environment") or (renewal or {}).get("environment") or probe.environment

        def apply(db) -> tuple[int, dict]:
            now = self.ledger.now(db)
            if original:
                self.ledger.lock_subscription(db, original)
            if self.ledger.has_notification(db, n["notification_uuid"]):
                return 200, {"status": "ignore_duplicate", "notification_uuid": n["notification_uuid"]}
            owner = self.purchases.owner_for(db, txn, original, claimant=None) if original else None
            if owner:
                self.ledger.lock_user(db, owner)
            sub = self.ledger.subscription(db, original) if original else {}
            options: dict = {"seen_notification_uuids": self.ledger.seen_notifications(db, original)}
            if sub.get("last_signed_date_ms") is not None:
                options["last_signed_date_ms"] = int(sub["last_signed_date_ms"])
            r = self.verifier.verify_jws(signed_payload.encode(), now_ms=now, options=options)
            if not r.valid:   # it verified a moment ago: only the clock moved; Apple sends it again
                raise RuntimeError(f"notification {n['notification_uuid']} no longer verifies: {r.reason}")
            action = r.notification["action"]
            if action == "ignore_duplicate":
                return 200, {"status": action, "notification_uuid": n["notification_uuid"]}
            if owner and original:
                self.ledger.claim_owner(db, original, owner, self.purchases.via(txn, owner), now)
            # A stale notification's statements are still merged: each is kept only if Apple signed
            # it later than what is stored, so a late copy never undoes a newer one, and a
            # transaction seen only here is not lost. An unknown type grants nothing: kept as data.
            if action in ("apply", "send_consumption_info", "ignore_stale"):
                self.purchases.merge(db, [txn] if txn else [], [renewal] if renewal else [], now)
            self.ledger.record_notification(db, {
                **{k: n.get(k) for k in ("notification_uuid", "notification_type", "subtype", "signed_date_ms")},
                "original_transaction_id": original, "transaction_id": (txn or {}).get("transaction_id"),
                "user_id": owner, "received_ms": now, "action": action, "source": source,
                "signed_payload": signed_payload})
            if original:
                applied = action in ("apply", "send_consumption_info")
                self.ledger.note_news(db, original, environment, now, n.get("signed_date_ms") if applied else None)
            if action == "send_consumption_info" and txn and self.signer is not None:
                env = environment if environment in ENVIRONMENTS else ENVIRONMENTS[0]
                self.ledger.enqueue(db, job_id("apple", CONSUMPTION, txn["transaction_id"]), owner or "", CONSUMPTION,
                                    txn["transaction_id"], env, 1, now, now, "consumption requested")
            body = {"status": action, "notification_uuid": n["notification_uuid"], "user_id": owner}
            if owner:
                planned = self.purchases.plan(db, owner, now)
                body.update(delivered=planned["delivered"], revoked=planned["revoked"])
            return 200, body

        try:
            status, body = self.ledger.run(apply)
        except Refused as e:
            self.metrics.verdicts.labels("notification", e.verdict).inc()
            self.metrics.refusals.labels("notification").inc()
            log_event(logging.WARNING, "notification_refused", source=source, notification_uuid=n["notification_uuid"],
                      original_transaction_id=original, verdict=e.verdict, reason=e.reason)
            return 409, {"status": "refused", "verdict": e.verdict, "reason": e.reason}
        self.metrics.verdicts.labels("notification", "valid").inc()
        if body["status"] != "ignore_duplicate" and n.get("signed_date_ms"):
            self.metrics.notification_lag.labels(source).observe(max(0, self.clock() - n["signed_date_ms"]) / 1000)
        log_event(logging.INFO, "notification", source=source, notification_uuid=n["notification_uuid"],
                  notification_type=n["notification_type"], subtype=n.get("subtype"), action=body["status"],
                  original_transaction_id=original, transaction_id=(txn or {}).get("transaction_id"),
                  user_id=body.get("user_id"), delivered=body.get("delivered"), revoked=body.get("revoked"))
        return status, body
