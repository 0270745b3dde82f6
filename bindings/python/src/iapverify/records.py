"""Typed, frozen views of the records a result carries: transactions, renewal infos, notifications,
app transactions and subscription statuses (docs/results.md).

Each record has a typed snake_case attribute per documented member, Apple's camelCase name as a
read-only alias (``t.transactionId``, ``t.expiresDate`` in milliseconds, ``n.notificationUUID``),
and ``extra``: the members this package does not name (a newer library's), kept as they are.
The aliases are properties declared with their types, so that type checkers and IDEs know them.

A record is also a read-only ``Mapping`` over the JSON object the library wrote: ``t["transaction_id"]``,
``t.get(...)``, ``keys()``, ``items()``, ``in``, ``len``, ``dict(t)``. Item access gives the JSON values
(plain strings, nested objects as dicts); attributes give the typed ones (enums, nested records).
``to_dict()`` returns a copy of that JSON object, unchanged: store it, or feed it back to the library.
"""
from __future__ import annotations

import dataclasses
import enum
import json as _json
import uuid
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Optional, TypeVar, Union, cast

from .enums import EntitlementState, Environment, NotificationAction, NotificationSubtype, NotificationType, known

__all__ = ["Record", "Transaction", "RenewalInfo", "Notification", "AppTransaction", "SubscriptionStatus", "plain"]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _to_json(value: Any) -> Any:
    """A field's value as JSON: records as their objects, enums as their strings, tuples as lists."""
    if isinstance(value, Record):
        return value._json_object()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """``json.dumps(..., default=plain)``: a record as the JSON object the library wrote, any other
    mapping as a dict, a ``uuid.UUID`` as its text (nonces, identifiers), and UTF-8 ``bytes`` as
    text (a PEM key read in binary mode). Anything else is a TypeError, as json.dumps says by default."""
    if isinstance(value, Record):
        return value._json_object()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise TypeError("bytes in a JSON document must be UTF-8 text (a PEM key); pass binary data base64") from None
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_R = TypeVar("_R", bound="Record")


class Record(Mapping[str, Any]):
    """The base of the record classes: the Mapping protocol, ``to_dict()``, ``from_dict()``.

    Subclasses are ``@dataclass(frozen=True, eq=False)`` whose last field is ``extra``; they set
    ``_KEYS`` (field -> JSON key, where they differ), ``_CONVERT`` (field -> how to type the JSON
    value) and ``_ALWAYS`` (the JSON keys written even when null, for a record built by hand), and
    declare Apple's camelCase names as read-only properties of the fields' types.
    """

    _KEYS: ClassVar[dict[str, str]] = {}
    _CONVERT: ClassVar[dict[str, Callable[[Any], Any]]] = {}
    _ALWAYS: ClassVar[frozenset[str]] = frozenset()
    _field_list: ClassVar[tuple[dataclasses.Field[Any], ...]]

    extra: dict[str, Any]

    # -- building --------------------------------------------------------------------------------

    @classmethod
    def _fields(cls) -> tuple[dataclasses.Field[Any], ...]:
        cached: Optional[tuple[dataclasses.Field[Any], ...]] = cls.__dict__.get("_field_list")
        if cached is None:
            cached = tuple(f for f in dataclasses.fields(cast(Any, cls)) if f.name != "extra")
            cls._field_list = cached
        return cached

    @classmethod
    def _reading(cls) -> Any:
        """How ``from_dict`` reads this class, worked out once: per field its name, JSON key and
        conversion; every JSON key a field takes; each field's value when its key is absent (its
        default, or None for a field without one); and the fields whose default is a factory."""
        cached = cls.__dict__.get("_reading_plan")
        if cached is None:
            fields, defaults, factories = [], {}, []
            for f in cls._fields():
                fields.append((f.name, cls._KEYS.get(f.name, f.name), cls._CONVERT.get(f.name)))
                if f.default_factory is not dataclasses.MISSING:
                    factories.append((f.name, f.default_factory))
                else:
                    defaults[f.name] = None if f.default is dataclasses.MISSING else f.default
            cached = (tuple(fields), frozenset(key for _, key, _ in fields), defaults, tuple(factories))
            setattr(cls, "_reading_plan", cached)
        return cached

    @classmethod
    def from_dict(cls: type[_R], d: Mapping[str, Any]) -> _R:
        """The record of one JSON object as the library writes it. Missing members take their
        defaults; members this class does not name go to ``extra``. Nothing is refused."""
        if isinstance(d, cls):
            return d
        if isinstance(d, Record):
            d = d._json_object()
        elif not isinstance(d, dict):
            d = dict(d)
        fields, known_keys, defaults, factories = cls._reading()
        # Filled as the dataclass's own __init__ would (the records have no __post_init__), but
        # straight into the instance's dict: a frozen __init__ sets each field through a call.
        record: _R = cls.__new__(cls)
        values = record.__dict__
        values.update(defaults)
        for name, factory in factories:
            values[name] = factory()
        for name, key, convert in fields:
            if key in d:
                value = d[key]
                values[name] = convert(value) if convert is not None and value is not None else value
        values["extra"] = {k: v for k, v in d.items() if k not in known_keys}
        values["_json"] = d
        return record

    @classmethod
    def maybe(cls: type[_R], d: object) -> Optional[_R]:
        """``from_dict(d)``, or None for None (or anything that is not a JSON object)."""
        return cls.from_dict(d) if isinstance(d, Mapping) else None

    def _json_object(self) -> dict[str, Any]:
        """The JSON object itself (not a copy): the library's, or one made from the fields."""
        d: Optional[dict[str, Any]] = self.__dict__.get("_json")
        if d is None:
            d = {}
            for f in self._fields():
                value = getattr(self, f.name)
                key = self._KEYS.get(f.name, f.name)
                if value is not None or key in self._ALWAYS:
                    d[key] = _to_json(value)
            for k, v in self.extra.items():
                d.setdefault(k, v)
            object.__setattr__(self, "_json", d)
        return d

    def to_dict(self) -> dict[str, Any]:
        """A copy of the JSON object the library wrote (for a record built by hand: one made
        from its fields), with the library's key names and plain values."""
        copied: dict[str, Any] = _copy(self._json_object())
        return copied

    # -- the read-only Mapping protocol, over the JSON object -----------------------------------

    def __getitem__(self, key: str) -> Any:
        return self._json_object()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json_object())

    def __len__(self) -> int:
        return len(self._json_object())

    def __contains__(self, key: object) -> bool:
        return key in self._json_object()

    def get(self, key: str, default: Any = None) -> Any:
        return self._json_object().get(key, default)

    def keys(self) -> KeysView[str]:
        return self._json_object().keys()

    def items(self) -> ItemsView[str, Any]:
        return self._json_object().items()

    def values(self) -> ValuesView[Any]:
        return self._json_object().values()

    # -- equality: the same JSON object ----------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return type(self) is type(other) and self._json_object() == other._json_object()
        if isinstance(other, Mapping):
            return self._json_object() == dict(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((type(self).__name__, _json.dumps(self._json_object(), sort_keys=True, default=plain)))


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _environment(value: Any) -> Any:
    return known(Environment, value)


@dataclass(frozen=True, eq=False)
class Transaction(Record):
    """A normalised transaction (docs/results.md#normalised-transactions): every ``in_app`` item,
    a receipt's and a /verifyReceipt response's alike (``Result.in_app``), and JWS and App Store
    Server API transactions. Dates are Unix milliseconds; ids are strings (None only in a receipt
    record that lacks them). The StoreKit 2 members are None when Apple did not send them (and for
    receipt and /verifyReceipt transactions); ``product_type`` and ``unknown_attributes`` only a
    receipt's records carry."""

    transaction_id: str
    product_id: str
    original_transaction_id: Optional[str] = None
    quantity: int = 1
    purchase_date_ms: Optional[int] = None
    original_purchase_date_ms: Optional[int] = None
    expires_date_ms: Optional[int] = None
    cancellation_date_ms: Optional[int] = None
    cancellation_reason: Optional[str] = None          # Apple's code as a string: "1" an issue in the app, "0" other
    web_order_line_item_id: Optional[str] = None
    is_trial_period: bool = False
    is_in_intro_offer_period: bool = False
    is_upgraded: bool = False
    promotional_offer_id: Optional[str] = None
    in_app_ownership_type: Optional[str] = None        # PURCHASED, FAMILY_SHARED
    subscription_group_identifier: Optional[str] = None
    # StoreKit 2, only when Apple sent them
    signed_date_ms: Optional[int] = None
    revocation_type: Optional[str] = None              # REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE, ASSIGNMENT_REVOKE
    revocation_percentage: Optional[int] = None        # milliunits of a percent
    offer_type: Optional[int] = None                   # 1 introductory, 2 promotional, 3 offer code, 4 win-back
    offer_discount_type: Optional[str] = None
    offer_period: Optional[str] = None
    price: Optional[int] = None                        # milliunits of currency
    currency: Optional[str] = None
    storefront: Optional[str] = None
    storefront_id: Optional[str] = None
    app_account_token: Optional[str] = None
    app_transaction_id: Optional[str] = None
    transaction_reason: Optional[str] = None           # PURCHASE, RENEWAL
    type: Optional[str] = None                         # Auto-Renewable Subscription, Non-Consumable, ...
    environment: Union[Environment, str, None] = None
    bundle_id: Optional[str] = None                    # StoreKit 2: the app the transaction is for
    billing_plan_type: Optional[str] = None
    commitment: Optional[dict[str, int]] = None
    # receipts only, when the record carries them
    product_type: Optional[int] = None                 # attribute 1707, undocumented by Apple
    unknown_attributes: Optional[tuple[dict[str, Any], ...]] = None  # each {type, version, value_base64}
    # Advanced Commerce API purchases only: the items and their taxes (docs/results.md)
    advanced_commerce: Optional[dict[str, Any]] = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    _CONVERT = {"environment": _environment, "unknown_attributes": _tuple}
    _ALWAYS = frozenset(("quantity", "product_id", "transaction_id", "original_transaction_id", "purchase_date_ms",
                         "original_purchase_date_ms", "expires_date_ms", "cancellation_date_ms", "cancellation_reason",
                         "web_order_line_item_id", "is_trial_period", "is_in_intro_offer_period", "is_upgraded",
                         "promotional_offer_id", "in_app_ownership_type", "subscription_group_identifier"))

    # -- Apple's names: read-only aliases of the fields, with their types ---------------------------

    @property
    def transactionId(self) -> str:
        """Apple's ``transactionId``: the same value as ``transaction_id``."""
        return self.transaction_id

    @property
    def productId(self) -> str:
        """Apple's ``productId``: the same value as ``product_id``."""
        return self.product_id

    @property
    def originalTransactionId(self) -> Optional[str]:
        """Apple's ``originalTransactionId``: the same value as ``original_transaction_id``."""
        return self.original_transaction_id

    @property
    def purchaseDate(self) -> Optional[int]:
        """Apple's ``purchaseDate``: the same value as ``purchase_date_ms``."""
        return self.purchase_date_ms

    @property
    def originalPurchaseDate(self) -> Optional[int]:
        """Apple's ``originalPurchaseDate``: the same value as ``original_purchase_date_ms``."""
        return self.original_purchase_date_ms

    @property
    def expiresDate(self) -> Optional[int]:
        """Apple's ``expiresDate``: the same value as ``expires_date_ms``."""
        return self.expires_date_ms

    @property
    def revocationDate(self) -> Optional[int]:
        """Apple's ``revocationDate``: the same value as ``cancellation_date_ms``."""
        return self.cancellation_date_ms

    @property
    def revocationReason(self) -> Optional[str]:
        """Apple's ``revocationReason``: the same value as ``cancellation_reason``."""
        return self.cancellation_reason

    @property
    def webOrderLineItemId(self) -> Optional[str]:
        """Apple's ``webOrderLineItemId``: the same value as ``web_order_line_item_id``."""
        return self.web_order_line_item_id

    @property
    def isUpgraded(self) -> bool:
        """Apple's ``isUpgraded``: the same value as ``is_upgraded``."""
        return self.is_upgraded

    @property
    def offerIdentifier(self) -> Optional[str]:
        """Apple's ``offerIdentifier``: the same value as ``promotional_offer_id``."""
        return self.promotional_offer_id

    @property
    def inAppOwnershipType(self) -> Optional[str]:
        """Apple's ``inAppOwnershipType``: the same value as ``in_app_ownership_type``."""
        return self.in_app_ownership_type

    @property
    def subscriptionGroupIdentifier(self) -> Optional[str]:
        """Apple's ``subscriptionGroupIdentifier``: the same value as ``subscription_group_identifier``."""
        return self.subscription_group_identifier

    @property
    def signedDate(self) -> Optional[int]:
        """Apple's ``signedDate``: the same value as ``signed_date_ms``."""
        return self.signed_date_ms

    @property
    def revocationType(self) -> Optional[str]:
        """Apple's ``revocationType``: the same value as ``revocation_type``."""
        return self.revocation_type

    @property
    def revocationPercentage(self) -> Optional[int]:
        """Apple's ``revocationPercentage``: the same value as ``revocation_percentage``."""
        return self.revocation_percentage

    @property
    def offerType(self) -> Optional[int]:
        """Apple's ``offerType``: the same value as ``offer_type``."""
        return self.offer_type

    @property
    def offerDiscountType(self) -> Optional[str]:
        """Apple's ``offerDiscountType``: the same value as ``offer_discount_type``."""
        return self.offer_discount_type

    @property
    def offerPeriod(self) -> Optional[str]:
        """Apple's ``offerPeriod``: the same value as ``offer_period``."""
        return self.offer_period

    @property
    def storefrontId(self) -> Optional[str]:
        """Apple's ``storefrontId``: the same value as ``storefront_id``."""
        return self.storefront_id

    @property
    def appAccountToken(self) -> Optional[str]:
        """Apple's ``appAccountToken``: the same value as ``app_account_token``."""
        return self.app_account_token

    @property
    def appTransactionId(self) -> Optional[str]:
        """Apple's ``appTransactionId``: the same value as ``app_transaction_id``."""
        return self.app_transaction_id

    @property
    def transactionReason(self) -> Optional[str]:
        """Apple's ``transactionReason``: the same value as ``transaction_reason``."""
        return self.transaction_reason

    @property
    def billingPlanType(self) -> Optional[str]:
        """Apple's ``billingPlanType``: the same value as ``billing_plan_type``."""
        return self.billing_plan_type

    @property
    def bundleId(self) -> Optional[str]:
        """Apple's ``bundleId``: the same value as ``bundle_id``."""
        return self.bundle_id

    @property
    def commitmentInfo(self) -> Optional[dict[str, int]]:
        """Apple's ``commitmentInfo``: the same value as ``commitment``."""
        return self.commitment

    @property
    def advancedCommerceInfo(self) -> Optional[dict[str, Any]]:
        """Apple's ``advancedCommerceInfo``: the same value as ``advanced_commerce``."""
        return self.advanced_commerce


@dataclass(frozen=True, eq=False)
class RenewalInfo(Record):
    """A normalised renewal info (docs/results.md#normalised-renewal-infos)."""

    original_transaction_id: str
    product_id: Optional[str] = None
    auto_renew_product_id: Optional[str] = None
    auto_renew_status: Optional[bool] = None
    expiration_intent: Optional[int] = None            # 1 cancelled, 2 billing error, 3 price increase declined, ...
    is_in_billing_retry_period: Optional[bool] = None
    grace_period_expires_date_ms: Optional[int] = None
    price_consent_status: Optional[str] = None
    # only when Apple sent them
    price_increase_status: Optional[int] = None        # 0 pending, 1 accepted
    signed_date_ms: Optional[int] = None
    renewal_price: Optional[int] = None                # milliunits of currency
    currency: Optional[str] = None
    offer_type: Optional[int] = None
    offer_identifier: Optional[str] = None
    offer_discount_type: Optional[str] = None
    offer_period: Optional[str] = None
    renewal_date_ms: Optional[int] = None
    recent_subscription_start_date_ms: Optional[int] = None
    eligible_win_back_offer_ids: Optional[tuple[str, ...]] = None
    app_account_token: Optional[str] = None
    app_transaction_id: Optional[str] = None
    environment: Union[Environment, str, None] = None
    renewal_billing_plan_type: Optional[str] = None
    commitment: Optional[dict[str, Any]] = None
    advanced_commerce: Optional[dict[str, Any]] = None  # Advanced Commerce API subscriptions only
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    _CONVERT = {"environment": _environment, "eligible_win_back_offer_ids": _tuple}
    _ALWAYS = frozenset(("original_transaction_id", "product_id", "auto_renew_product_id", "auto_renew_status",
                         "expiration_intent", "is_in_billing_retry_period", "grace_period_expires_date_ms",
                         "price_consent_status"))

    # -- Apple's names: read-only aliases of the fields, with their types ---------------------------

    @property
    def originalTransactionId(self) -> str:
        """Apple's ``originalTransactionId``: the same value as ``original_transaction_id``."""
        return self.original_transaction_id

    @property
    def productId(self) -> Optional[str]:
        """Apple's ``productId``: the same value as ``product_id``."""
        return self.product_id

    @property
    def autoRenewProductId(self) -> Optional[str]:
        """Apple's ``autoRenewProductId``: the same value as ``auto_renew_product_id``."""
        return self.auto_renew_product_id

    @property
    def autoRenewStatus(self) -> Optional[bool]:
        """Apple's ``autoRenewStatus``: the same value as ``auto_renew_status``."""
        return self.auto_renew_status

    @property
    def expirationIntent(self) -> Optional[int]:
        """Apple's ``expirationIntent``: the same value as ``expiration_intent``."""
        return self.expiration_intent

    @property
    def isInBillingRetryPeriod(self) -> Optional[bool]:
        """Apple's ``isInBillingRetryPeriod``: the same value as ``is_in_billing_retry_period``."""
        return self.is_in_billing_retry_period

    @property
    def gracePeriodExpiresDate(self) -> Optional[int]:
        """Apple's ``gracePeriodExpiresDate``: the same value as ``grace_period_expires_date_ms``."""
        return self.grace_period_expires_date_ms

    @property
    def priceIncreaseStatus(self) -> Optional[int]:
        """Apple's ``priceIncreaseStatus``: the same value as ``price_increase_status``."""
        return self.price_increase_status

    @property
    def signedDate(self) -> Optional[int]:
        """Apple's ``signedDate``: the same value as ``signed_date_ms``."""
        return self.signed_date_ms

    @property
    def renewalPrice(self) -> Optional[int]:
        """Apple's ``renewalPrice``: the same value as ``renewal_price``."""
        return self.renewal_price

    @property
    def offerType(self) -> Optional[int]:
        """Apple's ``offerType``: the same value as ``offer_type``."""
        return self.offer_type

    @property
    def offerIdentifier(self) -> Optional[str]:
        """Apple's ``offerIdentifier``: the same value as ``offer_identifier``."""
        return self.offer_identifier

    @property
    def offerDiscountType(self) -> Optional[str]:
        """Apple's ``offerDiscountType``: the same value as ``offer_discount_type``."""
        return self.offer_discount_type

    @property
    def offerPeriod(self) -> Optional[str]:
        """Apple's ``offerPeriod``: the same value as ``offer_period``."""
        return self.offer_period

    @property
    def renewalDate(self) -> Optional[int]:
        """Apple's ``renewalDate``: the same value as ``renewal_date_ms``."""
        return self.renewal_date_ms

    @property
    def recentSubscriptionStartDate(self) -> Optional[int]:
        """Apple's ``recentSubscriptionStartDate``: the same value as ``recent_subscription_start_date_ms``."""
        return self.recent_subscription_start_date_ms

    @property
    def eligibleWinBackOfferIds(self) -> Optional[tuple[str, ...]]:
        """Apple's ``eligibleWinBackOfferIds``: the same value as ``eligible_win_back_offer_ids``."""
        return self.eligible_win_back_offer_ids

    @property
    def appAccountToken(self) -> Optional[str]:
        """Apple's ``appAccountToken``: the same value as ``app_account_token``."""
        return self.app_account_token

    @property
    def appTransactionId(self) -> Optional[str]:
        """Apple's ``appTransactionId``: the same value as ``app_transaction_id``."""
        return self.app_transaction_id

    @property
    def renewalBillingPlanType(self) -> Optional[str]:
        """Apple's ``renewalBillingPlanType``: the same value as ``renewal_billing_plan_type``."""
        return self.renewal_billing_plan_type

    @property
    def commitmentInfo(self) -> Optional[dict[str, Any]]:
        """Apple's ``commitmentInfo``: the same value as ``commitment``."""
        return self.commitment

    @property
    def advancedCommerceInfo(self) -> Optional[dict[str, Any]]:
        """Apple's ``advancedCommerceInfo``: the same value as ``advanced_commerce``."""
        return self.advanced_commerce


@dataclass(frozen=True, eq=False)
class Notification(Record):
    """An App Store Server Notification: a JWS result's ``notification`` (with ``action`` and the
    verified nested ``transaction`` and ``renewal_info``), or an item of an API result's
    ``notifications`` (without them: None)."""

    notification_type: Union[NotificationType, str]
    subtype: Union[NotificationSubtype, str, None] = None
    notification_uuid: Optional[str] = None
    signed_date_ms: Optional[int] = None
    effect: Optional[str] = None                       # what the type and subtype do (docs/storekit2.md)
    action: Union[NotificationAction, str, None] = None
    transaction: Optional[Transaction] = None
    renewal_info: Optional[RenewalInfo] = None
    app_transaction: Optional[dict[str, Any]] = None   # RESCIND_CONSENT: the verified app transaction, Apple's names
    #: An external purchase token notification's token: ``external_purchase_id``,
    #: ``token_creation_date_ms``, ``app_apple_id``, ``bundle_id``, ``token_type`` (kept as Apple
    #: wrote it, also a value this package does not know) and ``token_expiration_date_ms``.
    external_purchase_token: Optional[dict[str, Any]] = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    _CONVERT = {"notification_type": lambda v: known(NotificationType, v),
                "subtype": lambda v: known(NotificationSubtype, v),
                "action": lambda v: known(NotificationAction, v),
                "transaction": Transaction.maybe, "renewal_info": RenewalInfo.maybe}
    _ALWAYS = frozenset(("notification_type", "subtype", "notification_uuid", "signed_date_ms", "effect"))

    # -- Apple's names: read-only aliases of the fields, with their types ---------------------------

    @property
    def notificationType(self) -> Union[NotificationType, str]:
        """Apple's ``notificationType``: the same value as ``notification_type``."""
        return self.notification_type

    @property
    def notificationUUID(self) -> Optional[str]:
        """Apple's ``notificationUUID``: the same value as ``notification_uuid``."""
        return self.notification_uuid

    @property
    def signedDate(self) -> Optional[int]:
        """Apple's ``signedDate``: the same value as ``signed_date_ms``."""
        return self.signed_date_ms


_APP = {"receipt_type": "receiptType", "environment": "environment", "app_apple_id": "appAppleId",
        "bundle_id": "bundleId", "application_version": "applicationVersion",
        "original_application_version": "originalApplicationVersion",
        "version_external_identifier": "versionExternalIdentifier", "receipt_creation_date_ms": "receiptCreationDate",
        "original_purchase_date_ms": "originalPurchaseDate", "preorder_date_ms": "preorderDate",
        "signed_date_ms": "signedDate", "device_verification": "deviceVerification",
        "device_verification_nonce": "deviceVerificationNonce", "app_transaction_id": "appTransactionId",
        "original_platform": "originalPlatform"}


@dataclass(frozen=True, eq=False)
class AppTransaction(Record):
    """An API result's ``app_transaction``: the verified payload, whose JSON keys are Apple's own
    (``appAppleId``, ``receiptCreationDate``...); item access uses those names, attributes
    both the snake_case ones below and Apple's. Dates are Unix milliseconds, as Apple signs them."""

    bundle_id: Optional[str] = None
    receipt_type: Union[Environment, str, None] = None
    environment: Union[Environment, str, None] = None
    app_apple_id: Optional[int] = None
    application_version: Optional[str] = None
    original_application_version: Optional[str] = None
    version_external_identifier: Optional[int] = None
    receipt_creation_date_ms: Optional[int] = None
    original_purchase_date_ms: Optional[int] = None
    preorder_date_ms: Optional[int] = None
    signed_date_ms: Optional[int] = None
    device_verification: Optional[str] = None
    device_verification_nonce: Optional[str] = None
    app_transaction_id: Optional[str] = None
    original_platform: Optional[str] = None
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    _KEYS = _APP
    _CONVERT = {"receipt_type": _environment, "environment": _environment}

    # -- Apple's names: read-only aliases of the fields, with their types ---------------------------

    @property
    def receiptType(self) -> Union[Environment, str, None]:
        """Apple's ``receiptType``: the same value as ``receipt_type``."""
        return self.receipt_type

    @property
    def appAppleId(self) -> Optional[int]:
        """Apple's ``appAppleId``: the same value as ``app_apple_id``."""
        return self.app_apple_id

    @property
    def bundleId(self) -> Optional[str]:
        """Apple's ``bundleId``: the same value as ``bundle_id``."""
        return self.bundle_id

    @property
    def applicationVersion(self) -> Optional[str]:
        """Apple's ``applicationVersion``: the same value as ``application_version``."""
        return self.application_version

    @property
    def originalApplicationVersion(self) -> Optional[str]:
        """Apple's ``originalApplicationVersion``: the same value as ``original_application_version``."""
        return self.original_application_version

    @property
    def versionExternalIdentifier(self) -> Optional[int]:
        """Apple's ``versionExternalIdentifier``: the same value as ``version_external_identifier``."""
        return self.version_external_identifier

    @property
    def receiptCreationDate(self) -> Optional[int]:
        """Apple's ``receiptCreationDate``: the same value as ``receipt_creation_date_ms``."""
        return self.receipt_creation_date_ms

    @property
    def originalPurchaseDate(self) -> Optional[int]:
        """Apple's ``originalPurchaseDate``: the same value as ``original_purchase_date_ms``."""
        return self.original_purchase_date_ms

    @property
    def preorderDate(self) -> Optional[int]:
        """Apple's ``preorderDate``: the same value as ``preorder_date_ms``."""
        return self.preorder_date_ms

    @property
    def signedDate(self) -> Optional[int]:
        """Apple's ``signedDate``: the same value as ``signed_date_ms``."""
        return self.signed_date_ms

    @property
    def deviceVerification(self) -> Optional[str]:
        """Apple's ``deviceVerification``: the same value as ``device_verification``."""
        return self.device_verification

    @property
    def deviceVerificationNonce(self) -> Optional[str]:
        """Apple's ``deviceVerificationNonce``: the same value as ``device_verification_nonce``."""
        return self.device_verification_nonce

    @property
    def appTransactionId(self) -> Optional[str]:
        """Apple's ``appTransactionId``: the same value as ``app_transaction_id``."""
        return self.app_transaction_id

    @property
    def originalPlatform(self) -> Optional[str]:
        """Apple's ``originalPlatform``: the same value as ``original_platform``."""
        return self.original_platform


@dataclass(frozen=True, eq=False)
class SubscriptionStatus(Record):
    """An item of an API result's ``subscription_statuses`` (or ``status_disagreements``): Apple's
    status of one subscription beside the entitlement engine's state (docs/server-api.md)."""

    original_transaction_id: str
    subscription_group_identifier: Optional[str] = None
    apple_status: Optional[int] = None                 # Apple's status: 1 active, 2 expired, 3 billing retry, ...
    apple_state: Optional[str] = None                  # active, expired, billing_retry, grace_period, revoked
    engine_state: Union[EntitlementState, str, None] = None
    agrees: bool = False
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    _CONVERT = {"engine_state": lambda v: known(EntitlementState, v)}
    _ALWAYS = frozenset(("subscription_group_identifier", "original_transaction_id", "apple_status", "apple_state",
                         "engine_state", "agrees"))

    # -- Apple's names: read-only aliases of the fields, with their types ---------------------------

    @property
    def originalTransactionId(self) -> str:
        """Apple's ``originalTransactionId``: the same value as ``original_transaction_id``."""
        return self.original_transaction_id

    @property
    def subscriptionGroupIdentifier(self) -> Optional[str]:
        """Apple's ``subscriptionGroupIdentifier``: the same value as ``subscription_group_identifier``."""
        return self.subscription_group_identifier

    @property
    def status(self) -> Optional[int]:
        """Apple's ``status``: the same value as ``apple_status``."""
        return self.apple_status
