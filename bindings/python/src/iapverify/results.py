"""Typed views of the result JSON. Every result keeps the raw JSON (``json``) and dict (``raw``)."""
from __future__ import annotations

import json as _json
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Entitlement:
    id: str
    active: bool
    state: str
    product_id: Optional[str]
    original_transaction_id: Optional[str]
    transaction_id: Optional[str]
    expires_date_ms: Optional[int]
    will_renew: Optional[bool]
    renews_to: Optional[str]
    period: Optional[str]
    ownership: Optional[str]
    expiration_reason: Optional[str]
    reason: str
    evidence: dict

    @classmethod
    def from_dict(cls, d: dict) -> "Entitlement":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Purchase:
    transaction_id: str
    original_transaction_id: Optional[str]
    product_id: str
    type: str
    quantity: int
    purchase_date_ms: Optional[int]
    revoked: bool

    @classmethod
    def from_dict(cls, d: dict) -> "Purchase":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class DeliveryItem:
    transaction_id: str
    original_transaction_id: Optional[str]
    product_id: str
    quantity: int
    purchase_date_ms: Optional[int]

    @classmethod
    def from_dict(cls, d: dict) -> "DeliveryItem":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class OrderMatch:
    order_id: str
    transaction_id: Optional[str]
    status: str


@dataclass(frozen=True)
class Delivery:
    to_deliver: list[DeliveryItem] = field(default_factory=list)
    to_revoke: list[DeliveryItem] = field(default_factory=list)
    orders: list[OrderMatch] = field(default_factory=list)


@dataclass(frozen=True)
class Result:
    """The answer of any call: a verdict, and what it grants (nothing unless ``valid``)."""

    verdict: str
    reason: str
    valid: bool
    entitlements: list[Entitlement]
    purchases: list[Purchase]
    delivery: Delivery
    unknown_products: list[str]
    intro_eligible: dict[str, bool]
    receipt: Optional[dict]
    raw: dict
    json: str

    def entitlement(self, id: str) -> Optional[Entitlement]:
        return next((e for e in self.entitlements if e.id == id), None)

    @property
    def active_entitlements(self) -> list[str]:
        return [e.id for e in self.entitlements if e.active]


@dataclass(frozen=True)
class ResponseResult(Result):
    """A /verifyReceipt interpretation: also what to do next."""

    status: Optional[int] = None
    action: str = "reject"
    retry_after_ms: Optional[int] = None
    environment: Optional[str] = None


@dataclass(frozen=True)
class JWSResult(Result):
    """A verified StoreKit 2 token: its kind and the normalised data it carries."""

    kind: Optional[str] = None
    environment: Optional[str] = None
    transaction: Optional[dict] = None
    renewal_info: Optional[dict] = None
    notification: Optional[dict] = None
    signed_date_ms: Optional[int] = None


def parse(text: str, valid: bool, response: bool = False, jws: bool = False) -> Result:
    d: dict[str, Any] = _json.loads(text)
    delivery = d.get("delivery") or {}
    common = dict(
        verdict=d["verdict"], reason=d.get("reason", ""), valid=valid,
        entitlements=[Entitlement.from_dict(e) for e in d.get("entitlements", [])],
        purchases=[Purchase.from_dict(p) for p in d.get("purchases", [])],
        delivery=Delivery(
            to_deliver=[DeliveryItem.from_dict(i) for i in delivery.get("to_deliver", [])],
            to_revoke=[DeliveryItem.from_dict(i) for i in delivery.get("to_revoke", [])],
            orders=[OrderMatch(o["order_id"], o.get("transaction_id"), o["status"]) for o in delivery.get("orders", [])]),
        unknown_products=list(d.get("unknown_products", [])),
        intro_eligible=dict(d.get("intro_eligible", {})),
        receipt=d.get("receipt"), raw=d, json=text)
    if jws:
        return JWSResult(**common, kind=d.get("kind"), environment=d.get("environment"), transaction=d.get("transaction"),
                         renewal_info=d.get("renewal_info"), notification=d.get("notification"),
                         signed_date_ms=d.get("signed_date_ms"))
    if response:
        return ResponseResult(**common, status=d.get("status"), action=d.get("action", "reject"),
                              retry_after_ms=d.get("retry_after_ms"), environment=d.get("environment"))
    return Result(**common)
