"""Typed views of the result JSON. Every result keeps the raw JSON (``json``) and dict (``raw``)."""
from __future__ import annotations

import base64 as _base64
import json as _json
import urllib.request
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from .enums import (Action, EntitlementState, Environment, NotificationAction, NotificationSubtype, NotificationType,
                    ServerEnvironment, Verdict, known)
from .records import AppTransaction, Notification, RenewalInfo, SubscriptionStatus, Transaction


@dataclass(frozen=True)
class Entitlement:
    id: str
    active: bool
    state: Union[EntitlementState, str]        # an EntitlementState, or the plain string if unknown
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
    evidence: dict[str, Any]                   # rule, transaction_id, candidates
    price_increase: Optional[str] = None       # "pending", "accepted" or None
    revocation_type: Optional[str] = None      # only when revoked, e.g. "REFUND_PRORATED"
    cancellation_reason: Optional[str] = None  # Apple's code as a string: "1" an issue in the app, "0" other

    @classmethod
    def from_dict(cls, d: dict) -> "Entitlement":
        fields = {k: d.get(k) for k in cls.__dataclass_fields__}
        fields["state"] = known(EntitlementState, fields["state"])
        return cls(**fields)


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
class Revocation:
    """The OCSP facts of the certificate that signed a JWS or a receipt (docs/revocation.md).

    ``status`` is "unchecked" (no response was passed), "good", "revoked" or "unknown" (responses
    were passed, none usable: ``reason`` says why). ``request_der`` is the OCSP request to POST to
    ``responder_url`` with Content-Type ``application/ocsp-request``; pass the answer's bytes back
    in ``options={"ocsp_responses": [answer]}`` and keep it until ``next_update_ms``.
    """

    status: str
    reason: str
    responder_url: Optional[str]
    request: Optional[str]                     # base64 of request_der, as the result carries it
    request_der: Optional[bytes]
    this_update_ms: Optional[int] = None       # good only
    next_update_ms: Optional[int] = None       # good only; None when the responder gave none
    revoked_at_ms: Optional[int] = None        # revoked only
    raw: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Optional[dict]) -> "Optional[Revocation]":
        if not isinstance(d, dict):
            return None
        request = d.get("request")
        return cls(status=d["status"], reason=d.get("reason", ""), responder_url=d.get("responder_url"),
                   request=request, request_der=None if request is None else _base64.b64decode(request),
                   this_update_ms=d.get("this_update_ms"), next_update_ms=d.get("next_update_ms"),
                   revoked_at_ms=d.get("revoked_at_ms"), raw=d)

    def post_request(self) -> urllib.request.Request:
        """A ``urllib.request.Request`` that POSTs ``request_der`` to ``responder_url``."""
        if self.responder_url is None or self.request_der is None:
            raise ValueError("the signing certificate names no OCSP responder")
        return urllib.request.Request(self.responder_url, data=self.request_der, method="POST",
                                      headers={"Content-Type": "application/ocsp-request"})


@dataclass(frozen=True)
class Result:
    """The answer of any call: a verdict, and what it grants (nothing unless ``valid``)."""

    verdict: Union[Verdict, str]               # a Verdict, or the plain string if unknown
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
    # The signing certificate's OCSP facts: JWS results and receipt results (receipt.signing.revocation)
    # once the chain verified; None otherwise.
    revocation: Optional[Revocation] = None
    # Catalog entries whose type contradicts the type Apple signed: {product_id, catalog_type, signed_type}.
    catalog_conflicts: list[dict] = field(default_factory=list)

    def entitlement(self, id: str) -> Optional[Entitlement]:
        return next((e for e in self.entitlements if e.id == id), None)

    @property
    def active_entitlements(self) -> list[str]:
        return [e.id for e in self.entitlements if e.active]

    @property
    def in_app(self) -> list[Transaction]:
        """``receipt.in_app`` as transactions: a receipt's purchase records or a /verifyReceipt
        response's transactions, in the one shape (empty when the result has no receipt)."""
        receipt = self.receipt if isinstance(self.receipt, dict) else {}
        return _records(Transaction, receipt.get("in_app"))


@dataclass(frozen=True)
class ResponseResult(Result):
    """A /verifyReceipt interpretation: also what to do next.

    ``environment`` is the receipt's (the body's ``environment``), not the host's. ``deprecations``
    lists the old spellings the call used (e.g. the options' lower-case "production"), each with
    what to write instead; empty when there are none.
    """

    status: Optional[int] = None
    action: Union[Action, str] = Action.REJECT
    retry_after_ms: Optional[int] = None
    environment: Union[Environment, str, None] = None
    deprecations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class JWSResult(Result):
    """A verified StoreKit 2 token: its kind and the normalised data it carries."""

    kind: Optional[str] = None
    environment: Union[Environment, str, None] = None
    transaction: Optional[Transaction] = None
    renewal_info: Optional[RenewalInfo] = None
    notification: Optional[Notification] = None
    signed_date_ms: Optional[int] = None
    #: A Retention Messaging realtime request (``kind == "realtime_request"``): its
    #: ``original_transaction_id``, ``product_id``, ``user_locale``, ``request_identifier``,
    #: ``app_apple_id``, ``signed_date_ms`` and ``action`` (respond, ignore_duplicate,
    #: ignore_stale, reject); None for other kinds.
    realtime_request: Optional[dict] = None

    @property
    def effect(self) -> Optional[str]:
        """The notification's ``effect`` (what its type and subtype do to access), or None."""
        return None if self.notification is None else self.notification.effect

    @property
    def action(self) -> Union[NotificationAction, str, None]:
        """The notification's ``action`` (apply, ignore_duplicate, ignore_stale, send_consumption_info,
        record_only, reject), or None when the token is not a notification."""
        return None if self.notification is None else self.notification.action

    @property
    def notification_type(self) -> Union[NotificationType, str, None]:
        """The notification's ``notification_type`` (e.g. DID_RENEW), or None."""
        return None if self.notification is None else self.notification.notification_type

    @property
    def notification_subtype(self) -> Union[NotificationSubtype, str, None]:
        """The notification's ``subtype`` (e.g. GRACE_PERIOD), or None."""
        return None if self.notification is None else self.notification.subtype


@dataclass(frozen=True)
class APIResult(Result):
    """An App Store Server API answer, interpreted: what to do next, and what it grants.

    ``action`` is one of accept, next_page, retry_later, retry_sandbox, give_up,
    fix_configuration, reject. ``next_page`` is ``{"revision": ...}``, ``{"pagination_token": ...}``
    or None: merge it into the call to fetch the next page. Nothing is granted unless ``valid``;
    every signed item of the answer was verified, or none counts.
    """

    action: Union[Action, str] = Action.REJECT
    retry_after_ms: Optional[int] = None
    next_page: Optional[dict] = None
    error_code: Optional[int] = None
    error_message: Optional[str] = None
    endpoint: Optional[str] = None
    environment: Union[ServerEnvironment, str, None] = None
    http_status: Optional[int] = None
    transactions: list[Transaction] = field(default_factory=list)
    renewal_info: list[RenewalInfo] = field(default_factory=list)
    app_transaction: Optional[AppTransaction] = None
    notifications: list[Notification] = field(default_factory=list)
    subscription_statuses: list[SubscriptionStatus] = field(default_factory=list)
    status_disagreements: list[SubscriptionStatus] = field(default_factory=list)
    unsigned: Optional[dict] = None
    # The old spellings the options used (e.g. "environment": "sandbox"), each with what to write instead.
    deprecations: list[str] = field(default_factory=list)

    @property
    def is_valid(self) -> bool:
        """Deprecated: use ``valid`` (the same value)."""
        warnings.warn("APIResult.is_valid is deprecated: use APIResult.valid", DeprecationWarning, stacklevel=2)
        return self.valid


@dataclass(frozen=True)
class APIToken:
    """A bearer token for the App Store Server API (a JWT signed ES256 with the developer key)."""

    token: str
    issued_at_ms: int
    expires_at_ms: int

    def __repr__(self) -> str:
        # The token is a credential for as long as it lives: keep it out of logs.
        return f"APIToken(issued_at_ms={self.issued_at_ms}, expires_at_ms={self.expires_at_ms}, token=...)"


@dataclass(frozen=True)
class APIRequest:
    """The exact HTTP request of one App Store Server API call: send it as is.

    With the standard library::

        with urllib.request.urlopen(req.to_urllib()) as answer: ...

    (urlopen raises ``urllib.error.HTTPError`` for a non-2xx status; the error object carries the
    status, headers and body to interpret). With requests::

        r = requests.request(req.method, req.url, headers=req.headers, data=req.body)

    With httpx::

        r = httpx.request(req.method, req.url, headers=req.headers, content=req.body)

    The Authorization header holds a fresh bearer token valid until ``token_expires_at_ms``.
    ``environment`` is the host's, ``ServerEnvironment.PRODUCTION`` or ``SANDBOX``;
    ``deprecations`` lists the old spellings the call used (e.g. "environment": "sandbox").
    """

    endpoint: str
    environment: Union[ServerEnvironment, str]
    method: str
    url: str
    headers: dict[str, str]
    body: Optional[bytes]
    token_expires_at_ms: int
    raw: dict = field(repr=False)
    deprecations: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"APIRequest(method={self.method!r}, url={self.url!r}, endpoint={self.endpoint!r}, environment={self.environment!r})"

    def to_urllib(self) -> urllib.request.Request:
        """A ``urllib.request.Request`` carrying this method, URL, headers and body."""
        return urllib.request.Request(self.url, data=self.body, headers=dict(self.headers), method=self.method)


@dataclass(frozen=True)
class OfferSignature:
    """What ``Signer.sign`` made: ``signature`` (V1, base64 DER) or ``jws`` (V2), never both.

    ``nonce`` is the request's UUID in lower case; ``timestamp_ms`` the signing time (for V2, the
    ``iat`` second in milliseconds). Give the app the signature or JWS with the key id, nonce and
    timestamp it needs.
    """

    kind: str
    key_id: str
    nonce: str
    timestamp_ms: int
    signature: Optional[str]
    jws: Optional[str]
    raw: dict = field(repr=False)
    #: ``realtime_response``: the JSON body to answer Apple's realtime request with, as text.
    body: Optional[str] = None


@dataclass(frozen=True)
class TransactionReceipt:
    """What ``read_transaction_receipt`` read from an iOS 6 style transaction receipt. Nothing in
    it is verified (``trusted`` is always False): ``transaction_id`` is only a name to look up."""

    verdict: str                      # "unverified" when the id was read, else "malformed"
    reason: str
    transaction_id: Optional[str]
    environment: Optional[str]        # "Sandbox"; None in production receipts
    purchase_info: dict
    raw: dict = field(repr=False)
    trusted: bool = False


def parse_signature(text: str) -> OfferSignature:
    d = _json.loads(text)
    return OfferSignature(kind=d["kind"], key_id=d["key_id"], nonce=d["nonce"], timestamp_ms=d["timestamp_ms"],
                          signature=d.get("signature"), jws=d.get("jws"), raw=d, body=d.get("body"))


def parse_token(text: str) -> APIToken:
    d = _json.loads(text)
    return APIToken(token=d["token"], issued_at_ms=d["issued_at_ms"], expires_at_ms=d["expires_at_ms"])


def parse_request(text: str) -> APIRequest:
    d = _json.loads(text)
    body = d.get("body")
    binary = d.get("body_base64")
    data = body.encode() if body is not None else _base64.b64decode(binary) if binary is not None else None
    return APIRequest(endpoint=d["endpoint"], environment=known(ServerEnvironment, d["environment"]), method=d["method"],
                      url=d["url"], headers=dict(d.get("headers") or {}), body=data,
                      token_expires_at_ms=d["token_expires_at_ms"], raw=d, deprecations=list(d.get("deprecations") or []))


def _revocation_of(d: dict) -> Optional[dict]:
    if "revocation" in d:
        return d["revocation"]
    receipt = d.get("receipt")
    signing = receipt.get("signing") if isinstance(receipt, dict) else None
    return signing.get("revocation") if isinstance(signing, dict) else None


def _records(cls: Any, items: Any) -> list:
    return [cls.from_dict(i) for i in items or [] if isinstance(i, dict)]


def parse(text: str, valid: bool, response: bool = False, jws: bool = False, api: bool = False) -> Result:
    d: dict[str, Any] = _json.loads(text)
    delivery = d.get("delivery") or {}
    common = dict(
        verdict=known(Verdict, d["verdict"]), reason=d.get("reason", ""), valid=valid,
        entitlements=[Entitlement.from_dict(e) for e in d.get("entitlements", [])],
        purchases=[Purchase.from_dict(p) for p in d.get("purchases", [])],
        delivery=Delivery(
            to_deliver=[DeliveryItem.from_dict(i) for i in delivery.get("to_deliver", [])],
            to_revoke=[DeliveryItem.from_dict(i) for i in delivery.get("to_revoke", [])],
            orders=[OrderMatch(o["order_id"], o.get("transaction_id"), o["status"]) for o in delivery.get("orders", [])]),
        unknown_products=list(d.get("unknown_products", [])),
        catalog_conflicts=list(d.get("catalog_conflicts") or []),
        intro_eligible=dict(d.get("intro_eligible", {})),
        receipt=d.get("receipt"), raw=d, json=text, revocation=Revocation.from_dict(_revocation_of(d)))
    if api:
        return APIResult(**common, action=known(Action, d.get("action", "reject")), retry_after_ms=d.get("retry_after_ms"),
                         next_page=d.get("next_page"), error_code=d.get("error_code"), error_message=d.get("error_message"),
                         endpoint=d.get("endpoint"), environment=known(ServerEnvironment, d.get("environment")), http_status=d.get("http_status"),
                         transactions=_records(Transaction, d.get("transactions")),
                         renewal_info=_records(RenewalInfo, d.get("renewal_info")),
                         app_transaction=AppTransaction.maybe(d.get("app_transaction")),
                         notifications=_records(Notification, d.get("notifications")),
                         subscription_statuses=_records(SubscriptionStatus, d.get("subscription_statuses")),
                         status_disagreements=_records(SubscriptionStatus, d.get("status_disagreements")),
                         unsigned=d.get("unsigned"), deprecations=list(d.get("deprecations") or []))
    if jws:
        return JWSResult(**common, kind=d.get("kind"), environment=known(Environment, d.get("environment")), transaction=Transaction.maybe(d.get("transaction")),
                         renewal_info=RenewalInfo.maybe(d.get("renewal_info")), notification=Notification.maybe(d.get("notification")),
                         signed_date_ms=d.get("signed_date_ms"), realtime_request=d.get("realtime_request"))
    if response:
        return ResponseResult(**common, status=d.get("status"), action=known(Action, d.get("action", "reject")),
                              retry_after_ms=d.get("retry_after_ms"), environment=known(Environment, d.get("environment")),
                              deprecations=list(d.get("deprecations") or []))
    return Result(**common)
