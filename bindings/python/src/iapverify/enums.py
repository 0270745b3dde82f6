"""Names for the strings a result holds: verdicts, actions, states, environments, notification types.

Each member is a ``str``: ``Verdict.VALID == "valid"``, it hashes like ``"valid"`` and ``json.dumps``
writes ``"valid"``. Result fields give a member when the library wrote a value named here, and the
plain string otherwise: a value added by a newer library is kept, never refused.
"""
from __future__ import annotations

import enum
import sys
import warnings
from typing import TYPE_CHECKING, Optional, TypeVar, Union, overload

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:                                          # Python 3.9 and 3.10
    class StrEnum(str, enum.Enum):
        """A ``str`` whose ``str()``, format and hash are the value's, as in Python 3.11."""

        __str__ = str.__str__
        __hash__ = str.__hash__

        def __format__(self, format_spec: str) -> str:
            return str.__format__(self, format_spec)


class Verdict(StrEnum):
    """A result's ``verdict`` (docs/verdicts.md)."""

    VALID = "valid"
    MALFORMED = "malformed"
    UNSUPPORTED_ALGORITHM = "unsupported_algorithm"
    UNTRUSTED_CHAIN = "untrusted_chain"
    NOT_APPLE_SIGNER = "not_apple_signer"
    SIGNATURE_INVALID = "signature_invalid"
    ENVIRONMENT_REJECTED = "environment_rejected"
    BUNDLE_MISMATCH = "bundle_mismatch"
    VERSION_MISMATCH = "version_mismatch"
    DEVICE_MISMATCH = "device_mismatch"
    RECEIPT_EXPIRED = "receipt_expired"
    STALE = "stale"
    REVOKED = "revoked"
    REVOCATION_UNKNOWN = "revocation_unknown"
    WRONG_ENVIRONMENT = "wrong_environment"
    TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
    CONFIGURATION_ERROR = "configuration_error"
    REJECTED_BY_APPLE = "rejected_by_apple"


class Action(StrEnum):
    """What to do next with an App Store Server API answer or a /verifyReceipt body."""

    ACCEPT = "accept"
    NEXT_PAGE = "next_page"                    # App Store Server API only
    RETRY_LATER = "retry_later"
    RETRY_SANDBOX = "retry_sandbox"
    RETRY_PRODUCTION = "retry_production"      # /verifyReceipt only
    GIVE_UP = "give_up"
    FIX_CONFIGURATION = "fix_configuration"
    REJECT = "reject"


class NotificationAction(StrEnum):
    """What to do with a verified App Store Server Notification (``JWSResult.action``)."""

    APPLY = "apply"
    SEND_CONSUMPTION_INFO = "send_consumption_info"
    RECORD_ONLY = "record_only"
    IGNORE_STALE = "ignore_stale"
    IGNORE_DUPLICATE = "ignore_duplicate"
    REJECT = "reject"


class RealtimeAction(StrEnum):
    """What to do with a verified Retention Messaging realtime request (its ``action``)."""

    RESPOND = "respond"
    IGNORE_DUPLICATE = "ignore_duplicate"
    IGNORE_STALE = "ignore_stale"
    REJECT = "reject"


class EntitlementState(StrEnum):
    """An entitlement's ``state`` (docs/entitlements.md)."""

    ACTIVE = "active"
    GRACE_PERIOD = "grace_period"
    BILLING_RETRY = "billing_retry"
    EXPIRED = "expired"
    REFUNDED = "refunded"
    UPGRADED = "upgraded"
    OWNED = "owned"
    NOT_PURCHASED = "not_purchased"


class Environment(StrEnum):
    """Apple's environment, as receipts, tokens and /verifyReceipt results spell it."""

    PRODUCTION = "Production"
    SANDBOX = "Sandbox"
    XCODE = "Xcode"
    LOCAL_TESTING = "LocalTesting"


class ServerEnvironment(StrEnum):
    """Which of Apple's servers a call goes to or an answer came from: the /verifyReceipt host
    (``interpret_response(environment=...)``, ``ResponseResult``'s options) or the App Store Server
    API host (a call's ``environment``, ``APIRequest.environment``, ``APIResult.environment``).
    Spelled as Apple spells environments, like ``Environment``; the lower-case spelling of
    release 0.1 ("production", "sandbox") still works until the next release and is reported in
    the result's ``deprecations``."""

    PRODUCTION = "Production"
    SANDBOX = "Sandbox"
    #: A server the developer runs (the signer's ``local_testing_base_url``); API calls only.
    LOCAL_TESTING = "LocalTesting"


def server_environment(value: str) -> "Union[ServerEnvironment, str]":
    """``value`` in Apple's spelling when it names a server in any case ("sandbox" gives
    ``ServerEnvironment.SANDBOX``); else ``value`` itself, for the library to refuse."""
    for member in ServerEnvironment:
        if value.lower() == member.value.lower():
            return member
    return value


class NotificationType(StrEnum):
    """Apple's ``notificationType`` (docs/storekit2.md#every-type-and-subtype)."""

    SUBSCRIBED = "SUBSCRIBED"
    DID_RENEW = "DID_RENEW"
    DID_CHANGE_RENEWAL_PREF = "DID_CHANGE_RENEWAL_PREF"
    DID_CHANGE_RENEWAL_STATUS = "DID_CHANGE_RENEWAL_STATUS"
    OFFER_REDEEMED = "OFFER_REDEEMED"
    DID_FAIL_TO_RENEW = "DID_FAIL_TO_RENEW"
    GRACE_PERIOD_EXPIRED = "GRACE_PERIOD_EXPIRED"
    EXPIRED = "EXPIRED"
    PRICE_INCREASE = "PRICE_INCREASE"
    REFUND = "REFUND"
    REFUND_DECLINED = "REFUND_DECLINED"
    REFUND_REVERSED = "REFUND_REVERSED"
    REVOKE = "REVOKE"
    RENEWAL_EXTENDED = "RENEWAL_EXTENDED"
    RENEWAL_EXTENSION = "RENEWAL_EXTENSION"
    CONSUMPTION_REQUEST = "CONSUMPTION_REQUEST"
    ONE_TIME_CHARGE = "ONE_TIME_CHARGE"
    EXTERNAL_PURCHASE_TOKEN = "EXTERNAL_PURCHASE_TOKEN"
    METADATA_UPDATE = "METADATA_UPDATE"
    MIGRATION = "MIGRATION"
    PRICE_CHANGE = "PRICE_CHANGE"
    RESCIND_CONSENT = "RESCIND_CONSENT"
    TEST = "TEST"


class NotificationSubtype(StrEnum):
    """Apple's notification ``subtype``."""

    INITIAL_BUY = "INITIAL_BUY"
    RESUBSCRIBE = "RESUBSCRIBE"
    BILLING_RECOVERY = "BILLING_RECOVERY"
    UPGRADE = "UPGRADE"
    DOWNGRADE = "DOWNGRADE"
    AUTO_RENEW_ENABLED = "AUTO_RENEW_ENABLED"
    AUTO_RENEW_DISABLED = "AUTO_RENEW_DISABLED"
    GRACE_PERIOD = "GRACE_PERIOD"
    VOLUNTARY = "VOLUNTARY"
    BILLING_RETRY = "BILLING_RETRY"
    PRICE_INCREASE = "PRICE_INCREASE"
    PRODUCT_NOT_FOR_SALE = "PRODUCT_NOT_FOR_SALE"
    PENDING = "PENDING"
    ACCEPTED = "ACCEPTED"
    SUMMARY = "SUMMARY"
    FAILURE = "FAILURE"
    UNREPORTED = "UNREPORTED"
    ACTIVE_TOKEN_REMINDER = "ACTIVE_TOKEN_REMINDER"
    CREATED = "CREATED"


E = TypeVar("E", bound=StrEnum)


API_ENVIRONMENT_DEPRECATED = ("iapverify.APIEnvironment is deprecated: use iapverify.ServerEnvironment (Apple's "
                              "spelling, \"Production\" and \"Sandbox\"); the old name goes in the next release")


if TYPE_CHECKING:
    # What type checkers see: the deprecated name, and no catch-all ``__getattr__`` (a misspelt
    # name is an error).
    APIEnvironment = ServerEnvironment
else:
    def __getattr__(name: str) -> object:
        if name == "APIEnvironment":
            warnings.warn(API_ENVIRONMENT_DEPRECATED, DeprecationWarning, stacklevel=2)
            return ServerEnvironment
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@overload
def known(cls: "type[E]", value: str) -> "Union[E, str]": ...
@overload
def known(cls: "type[E]", value: Optional[str]) -> "Union[E, str, None]": ...


def known(cls: "type[E]", value: Optional[str]) -> "Union[E, str, None]":
    """The member of ``cls`` whose value is ``value``; else ``value`` itself (None stays None)."""
    if isinstance(value, str):
        try:
            return cls(value)
        except ValueError:
            return value
    return value
