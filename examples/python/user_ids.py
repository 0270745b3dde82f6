"""User ids and appAccountTokens as ownership compares them: a UUID in its canonical lower-case
form. The app sets StoreKit's appAccountToken to the user's id; Swift's `UUID().uuidString` is
upper case, Apple's JSON and the library give the token lower case, so comparing the texts
would give one user's purchases to an id that is no one's."""
from __future__ import annotations

import re
import uuid
from typing import Optional

_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")


def canonical_user_id(user_id: str) -> str:
    """A user id that is a UUID, in lower case; any other id as it is."""
    return user_id.lower() if _UUID.fullmatch(user_id) else user_id


def token_uuid(token: object) -> Optional[str]:
    """An appAccountToken as a canonical UUID (lower case, with dashes); None when it is not one."""
    text = str(token) if token else ""
    try:
        return str(uuid.UUID(text)) if _UUID.fullmatch(text) else None
    except ValueError:
        return None
