"""Typed views of the result JSON. Every result keeps the raw JSON (``json``) and dict (``raw``).

The JSON objects a result hands over as they are (an entitlement's ``evidence``, a result's
``receipt``, an API result's ``unsigned`` ...) are plain dicts, described for type checkers by the
``TypedDict`` classes below (docs/results.md, docs/schema).
"""
from __future__ import annotations

import base64 as _base64
import json as _json
import urllib.request
import warnings
from collections.abc import Mapping
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, TypedDict, TypeVar, Union

from .enums import (Action, EntitlementState, Environment, NotificationAction, NotificationSubtype, NotificationType,
                    ServerEnvironment, Verdict, known)
from .records import AppTransaction, Notification, Record, RenewalInfo, SubscriptionStatus, Transaction

_R = TypeVar("_R", bound=Record)


# -- the JSON objects results hand over as they are ----------------------------------------------
# Plain dicts at run time; these classes tell type checkers their members. Values with an enum
# are the plain strings the library wrote (an ``Environment`` member compares equal to its string).

class BillingEvidence(TypedDict):
    """``evidence["billing"]``: the deciding transaction's billing plan (monthly payments toward a
    commitment)."""

    plan_type: Optional[str]                   # BILLED_UPFRONT, MONTHLY
    billing_period_number: Optional[int]
    total_billing_periods: Optional[int]
    commitment_expires_date_ms: Optional[int]


class _EvidenceMembers(TypedDict):
    rule: str                                  # e.g. auto_renewable.latest_expiry_covers_now (docs/results.md)
    transaction_id: Optional[str]
    candidates: int                            # how many chains or products competed


class Evidence(_EvidenceMembers, total=False):
    """An entitlement's ``evidence``: which ``rule`` decided, on which ``transaction_id``, among how
    many ``candidates``; ``billing`` only when the deciding transaction states a billing plan, and
    ``offer_type`` / ``offer`` only when it was bought with an offer."""

    billing: BillingEvidence
    offer_type: int                            # the deciding transaction's offerType, as Apple signed it
    offer: str                                 # introductory, promotional, offer_code, win_back, retention; unknown for a newer number


class Certificate(TypedDict):
    """A certificate of a validated chain (a receipt's ``signing["chain"]``), leaf first."""

    subject: str
    not_before_ms: int
    not_after_ms: int
    sha256: str                                # 64 upper-case hex digits


class _RevocationMembers(TypedDict):
    status: str                                # unchecked, good, revoked, unknown
    reason: str
    responder_url: Optional[str]
    request: Optional[str]                     # base64 of the DER OCSPRequest


class RevocationInfo(_RevocationMembers, total=False):
    """The revocation object as JSON (``receipt["signing"]["revocation"]``, ``Revocation.raw``):
    ``this_update_ms`` and ``next_update_ms`` only when good, ``revoked_at_ms`` only when revoked."""

    this_update_ms: int
    next_update_ms: Optional[int]
    revoked_at_ms: Optional[int]


class ReceiptSigning(TypedDict):
    """A receipt's ``signing``: how it was signed, the validated chain and the leaf's revocation
    object."""

    digest: Optional[str]                      # sha1, sha256
    signature: Optional[str]                   # rsa_pkcs1v15, ecdsa
    chain: list[Certificate]
    revocation: Optional[RevocationInfo]


class UnknownAttribute(TypedDict):
    """A receipt attribute the library does not name, kept as it was."""

    type: int                                  # the attribute number
    version: int
    value_base64: str


class _ReceiptMembers(TypedDict):
    trusted: bool                              # true only when the verdict is valid
    environment: Optional[str]                 # Production, Sandbox, Xcode
    receipt_type: Optional[str]                # as Apple wrote it: Production, ProductionSandbox, ...
    creation_date_ms: Optional[int]


class Receipt(_ReceiptMembers, total=False):
    """A result's ``receipt`` (docs/results.md#the-receipt-member): ``trusted``, ``environment``,
    ``receipt_type`` and ``creation_date_ms`` always; the others once the whole payload was decoded
    (a receipt refused before that holds only those four).

    Receipt results (``verify_receipt``) also have ``attribute_8_date_ms``, ``opaque_value_base64``,
    ``sha1_hash_base64``, ``signing`` and ``unknown_attributes``; /verifyReceipt results
    (``interpret_response``) have ``style``, ``request_date_ms``, ``latest_receipt_present`` and
    ``pending_renewal_info`` instead. ``in_app`` holds normalised transactions as dicts
    (``Result.in_app`` gives them as ``Transaction`` records).
    """

    bundle_id: Optional[str]
    app_version: Optional[str]
    original_app_version: Optional[str]
    expiration_date_ms: Optional[int]
    original_purchase_date_ms: Optional[int]
    app_item_id: Optional[str]
    download_id: Optional[str]
    version_external_identifier: Optional[str]
    in_app: list[dict[str, Any]]
    # receipt results only
    attribute_8_date_ms: Optional[int]
    opaque_value_base64: Optional[str]
    sha1_hash_base64: Optional[str]
    signing: ReceiptSigning
    unknown_attributes: list[UnknownAttribute]
    # /verifyReceipt results only
    style: Optional[str]                       # ios7, ios6
    request_date_ms: Optional[int]
    latest_receipt_present: Optional[bool]
    pending_renewal_info: list[dict[str, Any]]


class UnsignedFields(TypedDict, total=False):
    """An API result's ``unsigned``: the answer's top-level fields that are not signed items, as
    Apple wrote them (docs/server-api.md). Which are there depends on the endpoint; ``get()`` also
    reads one a newer answer adds."""

    revision: str                              # the histories: keep it for the next call
    hasMore: bool
    paginationToken: str                       # notification_history
    bundleId: str
    appAppleId: int
    environment: str
    status: int                                # order_lookup: 0 valid, 1 unknown order
    testNotificationToken: str                 # test_notification
    sendAttempts: list[dict[str, Any]]         # test_notification_status: attemptDate, sendAttemptResult
    originalTransactionId: str                 # extend_renewal_date
    webOrderLineItemId: str
    success: bool
    effectiveDate: int
    requestIdentifier: str                     # mass_extend_renewal_date, mass_extend_status
    complete: bool
    completeDate: int
    succeededCount: int
    failedCount: int
    imageIdentifiers: list[dict[str, Any]]     # list_images: imageIdentifier, imageState, ...
    messageIdentifiers: list[dict[str, Any]]   # list_messages: messageIdentifier, messageState
    messageIdentifier: str                     # get_default_message
    realtimeURL: str                           # get_realtime_url
    requestId: str                             # initiate_performance_test
    config: dict[str, Any]


class RealtimeRequest(TypedDict):
    """A verified Retention Messaging realtime request (``JWSResult.realtime_request``)."""

    original_transaction_id: str
    product_id: str
    user_locale: str
    request_identifier: str
    app_apple_id: Optional[int]
    signed_date_ms: int
    action: str                                # respond, ignore_duplicate, ignore_stale, reject


class CatalogConflict(TypedDict):
    """A catalog entry whose type contradicts the type Apple signed (``Result.catalog_conflicts``)."""

    product_id: str
    catalog_type: str
    signed_type: str                           # as Apple wrote it


class EntitlementItem(TypedDict):
    """One Advanced Commerce item of the purchase that decided an entitlement (``Entitlement.items``)."""

    sku: str
    active: bool                               # the entitlement is active and the item itself was not revoked
    revocation_date_ms: Optional[int]          # when the item alone was revoked


if TYPE_CHECKING:
    _Evidence = Evidence
    _Receipt = Receipt
    _UnsignedFields = UnsignedFields
    _RealtimeRequest = RealtimeRequest
    _CatalogConflict = CatalogConflict
    _EntitlementItem = EntitlementItem
    _Certificate = Certificate
else:
    # At run time a field's hint is what its value is, a plain dict: isinstance() refuses a
    # TypedDict, and code that checks values against the hints (typing.get_type_hints) uses it.
    _Evidence = _Receipt = _UnsignedFields = _RealtimeRequest = _CatalogConflict = _EntitlementItem = _Certificate = dict


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
    evidence: _Evidence                        # rule, transaction_id, candidates, billing
    price_increase: Optional[str] = None       # "pending", "accepted" or None
    revocation_type: Optional[str] = None      # only when revoked, e.g. "REFUND_PRORATED"
    cancellation_reason: Optional[str] = None  # Apple's code as a string: "1" an issue in the app, "0" other
    #: Only when the deciding purchase carries Advanced Commerce items: each item's ``sku``,
    #: ``active`` (grant the item only while true) and ``revocation_date_ms``.
    items: Optional[list[_EntitlementItem]] = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Entitlement":
        fields: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
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
    def from_dict(cls, d: Mapping[str, Any]) -> "Purchase":
        fields: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
        return cls(**fields)


@dataclass(frozen=True)
class DeliveryItem:
    transaction_id: str
    original_transaction_id: Optional[str]
    product_id: str
    quantity: int
    purchase_date_ms: Optional[int]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "DeliveryItem":
        fields: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__}
        return cls(**fields)


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
    raw: dict[str, Any] = field(default_factory=dict, repr=False)     # the revocation object (RevocationInfo)

    @classmethod
    def from_dict(cls, d: object) -> "Optional[Revocation]":
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
    receipt: Optional[_Receipt]                # receipt and /verifyReceipt results; None for the others
    raw: dict[str, Any]
    json: str
    # The signing certificate's OCSP facts: JWS results and receipt results (receipt.signing.revocation)
    # once the chain verified; None otherwise.
    revocation: Optional[Revocation] = None
    # Catalog entries whose type contradicts the type Apple signed: {product_id, catalog_type, signed_type}.
    catalog_conflicts: list[_CatalogConflict] = field(default_factory=list)
    # Receipt results: each check's outcome (structure, algorithm, ... age -> ok, failed, skipped,
    # not_checked or not_run); empty for the others.
    checks: dict[str, str] = field(default_factory=dict)
    # How each field is built from the decoded JSON (set for each result class below).
    _BUILD: ClassVar[dict[str, Callable[[dict[str, Any]], Any]]] = {}

    if not TYPE_CHECKING:     # hidden from type checkers, so a misspelt field is still an error
        def __getattr__(self, name: str) -> Any:
            # Reached only for a field not read yet (a result from ``parse`` starts with ``json``
            # and ``valid``): decode the JSON once, build the field, keep it in the instance.
            build = type(self)._BUILD.get(name)
            state = self.__dict__
            if build is None or "json" not in state:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            raw = state.get("raw")
            if raw is None:
                raw = state["raw"] = _json.loads(state["json"])
            value = state[name] = build(raw)
            return value

    def entitlement(self, id: str) -> Optional[Entitlement]:
        return next((e for e in self.entitlements if e.id == id), None)

    @property
    def active_entitlements(self) -> list[str]:
        return [e.id for e in self.entitlements if e.active]

    @property
    def in_app(self) -> list[Transaction]:
        """``receipt.in_app`` as transactions: a receipt's purchase records or a /verifyReceipt
        response's transactions, in the one shape (empty when the result has no receipt)."""
        receipt = self.receipt
        return _records(Transaction, receipt.get("in_app") if isinstance(receipt, dict) else None)


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
    trusted: bool = False                      # true only when the verdict is valid
    bundle_id: Optional[str] = None            # the payload's bundleId
    validated_at_ms: Optional[int] = None      # the instant the chain was validated at
    chain: list[_Certificate] = field(default_factory=list)   # the validated certificates, leaf first
    app_account_token: Optional[str] = None    # a transaction's appAccountToken
    product_type: Optional[str] = None         # a transaction's type, as Apple wrote it
    payload: Optional[dict[str, Any]] = None   # the decoded payload exactly as signed (Apple's names)
    #: A Retention Messaging realtime request (``kind == "realtime_request"``): its
    #: ``original_transaction_id``, ``product_id``, ``user_locale``, ``request_identifier``,
    #: ``app_apple_id``, ``signed_date_ms`` and ``action`` (respond, ignore_duplicate,
    #: ignore_stale, reject); None for other kinds.
    realtime_request: Optional[_RealtimeRequest] = None

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
    next_page: Optional[dict[str, str]] = None
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
    unsigned: Optional[_UnsignedFields] = None
    trusted: bool = False                      # true only when the verdict is valid
    signed_items: int = 0                      # how many signed items of the answer were verified
    order_status: Optional[int] = None         # order_lookup: Apple's status (0 valid, 1 invalid)
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
    raw: dict[str, Any] = field(repr=False)
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
    raw: dict[str, Any] = field(repr=False)
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
    purchase_info: dict[str, str]              # every field of purchase-info, Apple's names, as strings
    raw: dict[str, Any] = field(repr=False)
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


def _revocation_of(d: Mapping[str, Any]) -> Any:
    if "revocation" in d:
        return d["revocation"]
    receipt = d.get("receipt")
    signing = receipt.get("signing") if isinstance(receipt, dict) else None
    return signing.get("revocation") if isinstance(signing, dict) else None


def _records(cls: type[_R], items: Any) -> list[_R]:
    return [cls.from_dict(i) for i in items or [] if isinstance(i, dict)]


def parse(text: str, valid: bool, response: bool = False, jws: bool = False, api: bool = False,
          verdict: Optional[str] = None) -> Result:
    """The result of one call, read lazily: only ``json``, ``valid`` and (when given) ``verdict`` are
    set here; the JSON is decoded the first time another field is read, and each field is built
    from it the first time it is read."""
    cls = APIResult if api else JWSResult if jws else ResponseResult if response else Result
    result = object.__new__(cls)
    state = result.__dict__
    state["json"] = text
    state["valid"] = valid
    if verdict is not None:
        state["verdict"] = known(Verdict, verdict)
    return result


# -- how each field of a result is built from its JSON, the first time it is read --------------

def _delivery(d: Mapping[str, Any]) -> Delivery:
    delivery = d.get("delivery") or {}
    return Delivery(
        to_deliver=[DeliveryItem.from_dict(i) for i in delivery.get("to_deliver", [])],
        to_revoke=[DeliveryItem.from_dict(i) for i in delivery.get("to_revoke", [])],
        orders=[OrderMatch(o["order_id"], o.get("transaction_id"), o["status"]) for o in delivery.get("orders", [])])


_Build = dict[str, Callable[[dict[str, Any]], Any]]

_COMMON: _Build = {
    "raw": lambda d: d,
    "verdict": lambda d: known(Verdict, d["verdict"]),
    "reason": lambda d: d.get("reason", ""),
    "entitlements": lambda d: [Entitlement.from_dict(e) for e in d.get("entitlements", [])],
    "purchases": lambda d: [Purchase.from_dict(p) for p in d.get("purchases", [])],
    "delivery": _delivery,
    "unknown_products": lambda d: list(d.get("unknown_products", [])),
    "catalog_conflicts": lambda d: list(d.get("catalog_conflicts") or []),
    "intro_eligible": lambda d: dict(d.get("intro_eligible", {})),
    "receipt": lambda d: d.get("receipt"),
    "revocation": lambda d: Revocation.from_dict(_revocation_of(d)),
    "checks": lambda d: dict(d.get("checks") or {}),
}
_ACTION: _Build = {
    "action": lambda d: known(Action, d.get("action", "reject")),
    "retry_after_ms": lambda d: d.get("retry_after_ms"),
    "deprecations": lambda d: list(d.get("deprecations") or []),
}
Result._BUILD = _COMMON
ResponseResult._BUILD = {
    **_COMMON, **_ACTION,
    "status": lambda d: d.get("status"),
    "environment": lambda d: known(Environment, d.get("environment")),
}
JWSResult._BUILD = {
    **_COMMON,
    "kind": lambda d: d.get("kind"),
    "environment": lambda d: known(Environment, d.get("environment")),
    "transaction": lambda d: Transaction.maybe(d.get("transaction")),
    "renewal_info": lambda d: RenewalInfo.maybe(d.get("renewal_info")),
    "notification": lambda d: Notification.maybe(d.get("notification")),
    "signed_date_ms": lambda d: d.get("signed_date_ms"),
    "realtime_request": lambda d: d.get("realtime_request"),
    "trusted": lambda d: d.get("trusted") is True,
    "bundle_id": lambda d: d.get("bundle_id"),
    "validated_at_ms": lambda d: d.get("validated_at_ms"),
    "chain": lambda d: list(d.get("chain") or []),
    "app_account_token": lambda d: d.get("app_account_token"),
    "product_type": lambda d: d.get("product_type"),
    "payload": lambda d: d.get("payload"),
}
APIResult._BUILD = {
    **_COMMON, **_ACTION,
    "next_page": lambda d: d.get("next_page"),
    "error_code": lambda d: d.get("error_code"),
    "error_message": lambda d: d.get("error_message"),
    "endpoint": lambda d: d.get("endpoint"),
    "environment": lambda d: known(ServerEnvironment, d.get("environment")),
    "http_status": lambda d: d.get("http_status"),
    "transactions": lambda d: _records(Transaction, d.get("transactions")),
    "renewal_info": lambda d: _records(RenewalInfo, d.get("renewal_info")),
    "app_transaction": lambda d: AppTransaction.maybe(d.get("app_transaction")),
    "notifications": lambda d: _records(Notification, d.get("notifications")),
    "subscription_statuses": lambda d: _records(SubscriptionStatus, d.get("subscription_statuses")),
    "status_disagreements": lambda d: _records(SubscriptionStatus, d.get("status_disagreements")),
    "unsigned": lambda d: d.get("unsigned"),
    "trusted": lambda d: d.get("trusted") is True,
    "signed_items": lambda d: d.get("signed_items") or 0,
    "order_status": lambda d: d.get("order_status"),
}


def _read_lazily(*classes: "type[Result]") -> None:
    """A default a dataclass keeps as a class attribute would hide ``__getattr__``: the defaults
    stay in ``__init__`` and ``dataclasses.fields()``, the values in each instance. Every field but
    ``json`` and ``valid`` must have a builder."""
    for cls in classes:
        names = {f.name for f in dataclasses.fields(cls)}
        missing = names - set(cls._BUILD) - {"json", "valid"}
        assert not missing, (cls.__name__, missing)
        for name in names:
            if name in cls.__dict__:
                delattr(cls, name)


_read_lazily(Result, ResponseResult, JWSResult, APIResult)
