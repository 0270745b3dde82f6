"""A fake App Store Server API for tests: a test double, never a model of Apple's service.

It serves a few endpoints (transaction info, transaction history with revision paging,
subscription statuses, notification history with pagination tokens, send consumption
information, and the Advanced Commerce API's six server calls) from data the test adds, and signs its answers with the fake
Apple-shaped leaf key of this directory (x5c = leaf, WWDR, root), so that a verifier trusting
only root.pem accepts them. It is strict about what it receives: the bearer token must be an
ES256 JWT signed by developer.pub.pem with exactly the claims Apple requires, and the method,
path and query parameters must be ones Apple knows. Any failure is answered with HTTP 401 and
recorded in ``errors``; tests assert that list is empty. Apple's own client library
(``app-store-server-library``) is served too: its token has no ``iat``, which is accepted, and
the chain carries the Subject and Authority Key Identifiers its verifier's strict X.509 checks
require (reissue.py), so ``SignedDataVerifier`` accepts what the fake signs.

Apple has one host per environment, so the fake listens on two ports: ``start()`` returns the
production base URL, ``sandbox_url`` is the other. Environments are spelled as Apple spells them
("Production", "Sandbox", like the library's ServerEnvironment): ``requests`` and ``consumption``
record them so; the methods that take one accept any case ("sandbox" too). Needs the
``cryptography`` package.
"""
from __future__ import annotations

import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

HERE = Path(__file__).resolve().parent
ENVIRONMENTS = ("Production", "Sandbox")
# Query parameters each served endpoint accepts (anything else is a client bug).
HISTORY_QUERY = {"revision", "startDate", "endDate", "productId", "productType", "sort", "subscriptionGroupIdentifier",
                 "inAppOwnershipType", "revoked"}
# The Advanced Commerce API's calls: POST advancedCommerce/v1/<action>/{transactionId}.
ADVANCED_COMMERCE = ("subscription/cancel", "subscription/changeMetadata", "subscription/changePrice",
                     "subscription/migrate", "subscription/revoke", "transaction/requestRefund")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def environment(name: str) -> str:
    """Apple's spelling of an environment given in any case: "sandbox" is "Sandbox"."""
    for env in ENVIRONMENTS:
        if isinstance(name, str) and name.lower() == env.lower():
            return env
    raise ValueError(f"unknown environment {name!r} (Production or Sandbox)")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_jws(payload: dict, fixtures_dir: Path = HERE) -> str:
    """A compact JWS of ``payload`` signed like Apple signs (ES256, raw r||s, x5c of three), but
    with the fake leaf key of ``fixtures_dir``."""
    key = serialization.load_pem_private_key((fixtures_dir / "leaf.key.pem").read_bytes(), password=None)
    chain = [x509.load_pem_x509_certificate((fixtures_dir / f"{n}.pem").read_bytes()) for n in ("leaf", "wwdr", "root")]
    header = {"alg": "ES256", "x5c": [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in chain]}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(payload).encode())
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def sign_notification(notification_type: str, subtype: Optional[str] = None, *, uuid: str, signed_date: int,
                      transaction: Optional[dict] = None, renewal: Optional[dict] = None, env: str = "Production",
                      bundle_id: str = "com.example.fake", fixtures_dir: Path = HERE) -> str:
    """The signedPayload of an App Store Server Notification V2, with its transaction and renewal
    info signed as nested tokens, all by the fake leaf of ``fixtures_dir``."""
    data: dict = {"bundleId": bundle_id, "environment": environment(env), "appAppleId": 1234567890}
    if transaction is not None:
        data["signedTransactionInfo"] = sign_jws(transaction, fixtures_dir)
    if renewal is not None:
        data["signedRenewalInfo"] = sign_jws(renewal, fixtures_dir)
    payload = {"notificationType": notification_type, "notificationUUID": uuid, "version": "2.0",
               "signedDate": signed_date, "data": data}
    if subtype:
        payload["subtype"] = subtype
    return sign_jws(payload, fixtures_dir)


def tamper(jws: str, **changes: Any) -> str:
    """The same JWS with its payload changed after signing (the signature no longer matches)."""
    header, payload, signature = jws.split(".")
    claims = json.loads(unb64url(payload))
    claims.update(changes or {"expiresDate": 253_402_300_799_000})
    return f"{header}.{b64url(json.dumps(claims).encode())}.{signature}"


class FakeAppleAPI:
    def __init__(self, fixtures_dir: Path | str = HERE, *, page_size: int = 2):
        self.fixtures_dir = Path(fixtures_dir)
        signer = json.loads((self.fixtures_dir / "signer.json").read_text())
        self.key_id, self.issuer_id, self.bundle_id = signer["key_id"], signer["issuer_id"], signer["bundle_id"]
        self.developer_key = serialization.load_pem_public_key((self.fixtures_dir / "developer.pub.pem").read_bytes())
        self.page_size = page_size
        self.errors: list[str] = []
        self.requests: list[tuple[str, str, str]] = []     # (environment, method, path?query) as received
        self._lock = threading.Lock()
        self._transactions: dict[str, list[tuple[dict, bool]]] = {env: [] for env in ENVIRONMENTS}
        self._renewals: dict[str, dict[str, tuple[dict, int]]] = {env: {} for env in ENVIRONMENTS}
        self._failures: list[tuple[int, dict, dict]] = []
        self._notifications: dict[str, list[tuple[int, str]]] = {env: [] for env in ENVIRONMENTS}
        self.consumption: list[tuple[str, str, dict]] = []  # (environment, transaction id, body) received
        # (environment, action such as "subscription/cancel", transaction id, body) received
        self.advanced_commerce: list[tuple[str, str, str, dict]] = []
        self._servers: dict[str, ThreadingHTTPServer] = {}
        self.base_url = self.sandbox_url = ""

    # ---- the test's data ----

    def add_transaction(self, env: str, payload: dict, *, tampered: bool = False) -> None:
        """A transaction Apple knows in ``env``; bundleId, environment and signedDate default to
        this app, ``env`` and purchaseDate. ``tampered`` serves it with a broken signature."""
        env = environment(env)
        p = {"bundleId": self.bundle_id, "environment": env, **payload}
        p.setdefault("signedDate", p.get("purchaseDate", 0))
        p.setdefault("originalTransactionId", p["transactionId"])
        with self._lock:
            self._transactions[env].append((p, tampered))

    def signed_transaction(self, env: str, transaction_id: str) -> str:
        """The signed transaction StoreKit 2 gives the app for a transaction added here (what the
        app sends its server as proof of a purchase)."""
        found = self._find(environment(env), transaction_id)
        if found is None:
            raise KeyError(f"no transaction {transaction_id} in {env}")
        return self._signed(*found)

    def set_renewal(self, env: str, payload: dict, *, status: int = 1) -> None:
        """The renewal info of one subscription (keyed by originalTransactionId) and Apple's
        status for it (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked)."""
        env = environment(env)
        p = {"environment": env, **payload}
        with self._lock:
            self._renewals[env][p["originalTransactionId"]] = (p, status)

    def add_notification(self, env: str, signed_payload: str, signed_date: int) -> None:
        """A notification Apple sent (or tried to send) in ``env``: served by the notification history."""
        with self._lock:
            self._notifications[environment(env)].append((signed_date, signed_payload))

    def fail_next(self, count: int, http_status: int, body: Optional[dict] = None, headers: Optional[dict] = None) -> None:
        """Answers the next ``count`` well-formed calls with this status instead."""
        with self._lock:
            self._failures += [(http_status, dict(headers or {}), dict(body or {}))] * count

    def rate_limit_next(self, count: int, retry_after_ms: int) -> None:
        self.fail_next(count, 429, {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."},
                       {"Retry-After": str(retry_after_ms)})

    def server_error_next(self, count: int) -> None:
        self.fail_next(count, 500, {"errorCode": 5000000, "errorMessage": "An unknown error occurred."})

    # ---- lifecycle ----

    def start(self) -> str:
        for env in ENVIRONMENTS:
            server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(env))
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self._servers[env] = server
        self.base_url = f"http://127.0.0.1:{self._servers['Production'].server_address[1]}"
        self.sandbox_url = f"http://127.0.0.1:{self._servers['Sandbox'].server_address[1]}"
        return self.base_url

    def stop(self) -> None:
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> "FakeAppleAPI":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- checking a request ----

    def check_token(self, authorization: Optional[str]) -> Optional[str]:
        """None when the Authorization header carries a token Apple would accept, else why not."""
        if not authorization or not authorization.startswith("Bearer "):
            return "no bearer token"
        parts = authorization[len("Bearer "):].split(".")
        if len(parts) != 3:
            return "the token is not a compact JWS"
        try:
            header, claims, sig = json.loads(unb64url(parts[0])), json.loads(unb64url(parts[1])), unb64url(parts[2])
        except ValueError as e:
            return f"the token does not decode: {e}"
        if header != {"alg": "ES256", "kid": self.key_id, "typ": "JWT"}:
            return f"bad token header {header}"
        if len(sig) != 64:
            return "the signature is not 64 bytes of r||s"
        try:
            der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
            self.developer_key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return "the token's signature does not verify with developer.pub.pem"
        # Apple documents iat; Apple's own client libraries leave it out (the token then lives
        # until exp). Both are accepted, so one fake serves iapverify and Apple's library alike.
        if set(claims) - {"iat"} != {"iss", "exp", "aud", "bid"}:
            return f"token claims are {sorted(claims)}"
        iat, exp = claims.get("iat"), claims["exp"]
        if not (type(exp) is int and exp > 0):
            return f"bad exp: {exp}"
        if "iat" in claims and not (type(iat) is int and iat < exp <= iat + 3600):
            return f"bad iat/exp: {iat}, {exp}"
        expected = {"iss": self.issuer_id, "aud": "appstoreconnect-v1", "bid": self.bundle_id}
        wrong = {k: claims[k] for k, v in expected.items() if claims[k] != v}
        return f"wrong claims {wrong}" if wrong else None

    def _handler(self, env: str) -> type:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PUT(self) -> None:
                self._serve("PUT")

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request_body = self.rfile.read(length) if length else b""
                status, headers, body = fake._answer(env, method, self.path, self.headers.get("Authorization"),
                                                     request_body)
                data = json.dumps(body).encode()
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _answer(self, env: str, method: str, target: str, authorization: Optional[str],
                request_body: bytes = b"") -> tuple[int, dict, dict]:
        url = urlsplit(target)
        query = parse_qs(url.query, keep_blank_values=True)
        with self._lock:
            self.requests.append((env, method, target))
        routes = [("GET", r"/inApps/v1/transactions/([^/]+)", self._transaction_info, set()),
                  ("GET", r"/inApps/v2/history/([^/]+)", self._history, HISTORY_QUERY),
                  ("GET", r"/inApps/v1/subscriptions/([^/]+)", self._statuses, {"status"}),
                  ("POST", r"/inApps/v1/notifications/(history)", self._notification_history, {"paginationToken"}),
                  ("PUT", r"/inApps/v2/transactions/consumption/([^/]+)", self._consumption, set()),
                  ("POST", r"/advancedCommerce/v1/((?:%s)/[^/]+)" % "|".join(ADVANCED_COMMERCE), self._advanced_commerce, set())]
        problem = self.check_token(authorization)
        route = next(((fn, allowed, m.group(1)) for verb, pattern, fn, allowed in routes
                      if verb == method and (m := re.fullmatch(pattern, url.path))), None)
        if problem is None and route is None:
            problem = f"{method} {url.path} is not an endpoint this fake serves"
        if problem is None and not set(query) <= route[1]:
            problem = f"unknown query parameters {sorted(set(query) - route[1])} for {url.path}"
        if problem is None and any(len(v) > 1 for k, v in query.items() if k not in {"productId", "productType",
                                                                               "subscriptionGroupIdentifier", "status"}):
            problem = f"a single-valued query parameter is repeated in {url.query}"
        if problem is not None:
            with self._lock:
                self.errors.append(f"{env} {method} {target}: {problem}")
            return 401, {}, {"errorCode": 4010000, "errorMessage": "Unauthenticated"}
        with self._lock:
            if self._failures:
                return self._failures.pop(0)
        if method in ("POST", "PUT"):
            try:
                sent = json.loads(request_body or b"null")
            except ValueError:
                sent = None
            if not isinstance(sent, dict):
                with self._lock:
                    self.errors.append(f"{env} {method} {target}: the body is not a JSON object")
                return 400, {}, {"errorCode": 4000000, "errorMessage": "Bad request"}
            query = dict(query, _body=sent)
        return route[0](env, route[2], query)

    # ---- the endpoints ----

    def _signed(self, payload: dict, tampered: bool) -> str:
        jws = sign_jws(payload, self.fixtures_dir)
        return tamper(jws) if tampered else jws

    def _find(self, env: str, transaction_id: str) -> Optional[tuple[dict, bool]]:
        with self._lock:
            return next((t for t in self._transactions[env] if t[0]["transactionId"] == transaction_id), None)

    @staticmethod
    def _not_found() -> tuple[int, dict, dict]:
        return 404, {}, {"errorCode": 4040010, "errorMessage": "Transaction id not found."}

    def _transaction_info(self, env: str, transaction_id: str, query: dict) -> tuple[int, dict, dict]:
        found = self._find(env, transaction_id)
        if found is None:
            return self._not_found()
        return 200, {}, {"signedTransactionInfo": self._signed(*found)}

    def _history(self, env: str, transaction_id: str, query: dict) -> tuple[int, dict, dict]:
        found = self._find(env, transaction_id)
        if found is None:
            return self._not_found()
        original = found[0]["originalTransactionId"]
        with self._lock:
            chain = [t for t in self._transactions[env] if t[0]["originalTransactionId"] == original]
        if "productId" in query:
            chain = [t for t in chain if t[0].get("productId") in query["productId"]]
        chain.sort(key=lambda t: (t[0].get("purchaseDate", 0), t[0]["transactionId"]),
                   reverse=query.get("sort") == ["DESCENDING"])
        start = int(query["revision"][0].removeprefix("rev-")) if "revision" in query else 0
        page = chain[start:start + self.page_size]
        end = start + len(page)
        return 200, {}, {"revision": f"rev-{end}", "hasMore": end < len(chain), "bundleId": self.bundle_id,
                         "appAppleId": 1234567890, "environment": env,
                         "signedTransactions": [self._signed(*t) for t in page]}

    def _notification_history(self, env: str, _: str, query: dict) -> tuple[int, dict, dict]:
        body = query["_body"]
        start, end = body.get("startDate"), body.get("endDate")
        if not (isinstance(start, int) and isinstance(end, int) and start < end):
            with self._lock:
                self.errors.append(f"{env} notification history: bad window {start}..{end}")
            return 400, {}, {"errorCode": 4000016, "errorMessage": "Invalid start date"}
        with self._lock:
            found = sorted((d, p) for d, p in self._notifications[env] if start <= d < end)
        offset = int(query["paginationToken"][0].removeprefix("n-")) if "paginationToken" in query else 0
        page = found[offset:offset + self.page_size]
        more = offset + len(page) < len(found)
        answer: dict = {"hasMore": more, "notificationHistory": [{"signedPayload": p, "sendAttemptResult": "SUCCESS"}
                                                                 for _, p in page]}
        if more:
            answer["paginationToken"] = f"n-{offset + len(page)}"
        return 200, {}, answer

    def _consumption(self, env: str, transaction_id: str, query: dict) -> tuple[int, dict, dict]:
        with self._lock:
            self.consumption.append((env, transaction_id, query["_body"]))
        return 202, {}, {}

    def _advanced_commerce(self, env: str, target: str, query: dict) -> tuple[int, dict, dict]:
        """An Advanced Commerce call: the transaction it names, signed, and for a subscription its
        renewal info. Cancel turns auto-renew off, revoke also revokes the transaction (at its
        signedDate: the fake has no clock); the others answer with what the test added."""
        action, transaction_id = target.rsplit("/", 1)
        body = query["_body"]
        info = body.get("requestInfo")
        if not (isinstance(info, dict) and isinstance(info.get("requestReferenceId"), str)
                and UUID.fullmatch(info["requestReferenceId"])):
            with self._lock:
                self.errors.append(f"{env} {action}/{transaction_id}: requestInfo.requestReferenceId is not a UUID")
            return 400, {}, {"errorCode": 4000000, "errorMessage": "Invalid request."}
        found = self._find(env, transaction_id)
        if found is None:
            return self._not_found()
        with self._lock:
            self.advanced_commerce.append((env, action, transaction_id, body))
        payload, tampered = found
        if action == "subscription/revoke":
            payload.setdefault("revocationDate", payload["signedDate"])
            payload.setdefault("revocationReason", 0)
        answer = {"signedTransactionInfo": self._signed(payload, tampered)}
        if action.startswith("subscription/"):
            original = payload["originalTransactionId"]
            with self._lock:
                renewal, status = self._renewals[env].get(original, (None, 1))
                renewal = dict(renewal or {"environment": env, "originalTransactionId": original,
                                           "productId": payload.get("productId"), "autoRenewProductId": payload.get("productId"),
                                           "autoRenewStatus": 1, "signedDate": payload["signedDate"]})
                if action in ("subscription/cancel", "subscription/revoke"):
                    renewal["autoRenewStatus"] = 0
                self._renewals[env][original] = (renewal, 5 if action == "subscription/revoke" else status)
            answer["signedRenewalInfo"] = self._signed(renewal, False)
        return 200, {}, answer

    def _statuses(self, env: str, transaction_id: str, query: dict) -> tuple[int, dict, dict]:
        found = self._find(env, transaction_id)
        if found is None:
            return self._not_found()
        wanted = {int(s) for s in query.get("status", [])}
        groups: dict[str, list[dict]] = {}
        with self._lock:
            renewals = dict(self._renewals[env])
            latest: dict[str, tuple[dict, bool]] = {}
            for t in self._transactions[env]:
                original = t[0]["originalTransactionId"]
                if original not in latest or t[0].get("purchaseDate", 0) >= latest[original][0].get("purchaseDate", 0):
                    latest[original] = t
        for original, (payload, tampered) in latest.items():
            renewal, status = renewals.get(original, (None, 2))
            if wanted and status not in wanted:
                continue
            item = {"originalTransactionId": original, "status": status, "signedTransactionInfo": self._signed(payload, tampered)}
            if renewal is not None:
                item["signedRenewalInfo"] = self._signed(renewal, False)
            groups.setdefault(payload.get("subscriptionGroupIdentifier", "group.default"), []).append(item)
        return 200, {}, {"environment": env, "bundleId": self.bundle_id, "appAppleId": 1234567890,
                         "data": [{"subscriptionGroupIdentifier": g, "lastTransactions": items} for g, items in groups.items()]}
