"""The front's sockets and connections, under uvicorn: the listening socket (bind), who the client
is (the peer, or the address a trusted proxy passes on), and the protocol that guards each
connection: a cap per client address and in all, a head that must arrive in time, and an access
line for the requests uvicorn itself refuses. http_api.py builds the server on them."""
from __future__ import annotations

import ipaddress
import logging
import socket
import time
from typing import Callable, Iterable, Optional

from observability import log_event


def bind(host: str, port: int) -> socket.socket:
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on an accepted socket only when its protocol
    # says TCP, and without it Nagle's algorithm meets the client's delayed ACK, and every
    # keep-alive request after the first waits about 40 ms. Linux also copies TCP_NODELAY from
    # the listening socket to the ones it accepts.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class Proxies:
    """The proxies whose X-Forwarded-For the front believes (--trusted-proxies: addresses or
    networks). A request from any other peer is that peer's, whatever headers it sends: from
    anywhere else X-Forwarded-For is the client's own text. Behind a trusted proxy the client is
    the header's last entry, the one the proxy wrote (nginx sets it to $remote_addr)."""

    def __init__(self, networks: Iterable[str] = ()):
        self.networks = tuple(ipaddress.ip_network(n.strip(), strict=False) for n in networks if n.strip())

    def trusts(self, peer: Optional[str]) -> bool:
        if not peer or not self.networks:
            return False
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in n for n in self.networks)

    def client(self, scope) -> tuple[Optional[str], bool]:
        """(the client's address, whether a trusted proxy gave it)."""
        peer = scope.get("client")
        peer_host = peer[0] if peer else None
        if self.trusts(peer_host):
            for name, value in scope.get("headers") or ():
                if name == b"x-forwarded-for":
                    last = value.decode("latin-1").rsplit(",", 1)[-1].strip()
                    try:
                        return str(ipaddress.ip_address(last)), True
                    except ValueError:
                        break
        return peer_host, False


class RefusalLog:
    """A refusal's log line names the client and the reason; the same client and reason again
    within `every_s` is counted, not logged (an attacker must not fill the disk), and the count
    goes into the next line."""

    def __init__(self, every_s: float = 10.0):
        self.every_s = every_s
        self.last: dict[tuple[str, str], tuple[float, int]] = {}

    def note(self, event: str, reason: str, client: Optional[str], **fields) -> None:
        key, now = (reason, client or "unknown"), time.monotonic()
        at, quiet = self.last.get(key, (None, 0))
        if at is not None and now - at < self.every_s:
            self.last[key] = (at, quiet + 1)
            return
        if len(self.last) > 10_000:   # many addresses: forget, at worst one more line each
            self.last.clear()
        self.last[key] = (now, 0)
        log_event(logging.WARNING, event, reason=reason, client=client, also_refused=quiet or None, **fields)


class ConnectionGuard:
    """What one front lets connections hold. Counted on the event loop's thread (no lock):
    connections at once in all, and per client address, so one address reconnecting as fast as
    it is cut off holds at most `per_address` of them, never the front. A trusted proxy's address
    has no per-address cap (every client behind it shares it; the proxy caps them itself)."""

    def __init__(self, max_connections: int, per_address: int, proxies: Proxies,
                 refused: Callable[[str, Optional[str]], None]):
        self.max_connections, self.per_address, self.proxies, self.refused = max_connections, per_address, proxies, refused
        self.total = 0
        self.by_address: dict[str, int] = {}

    def admit(self, peer: Optional[str]) -> bool:
        if self.total >= self.max_connections:
            self.refused("max_connections", peer)
            return False
        key = peer or "unknown"
        if not self.proxies.trusts(peer) and self.by_address.get(key, 0) >= self.per_address:
            self.refused("connections_per_address", peer)
            return False
        self.total += 1
        self.by_address[key] = self.by_address.get(key, 0) + 1
        return True

    def release(self, peer: Optional[str]) -> None:
        key = peer or "unknown"
        self.total -= 1
        left = self.by_address.get(key, 1) - 1
        if left > 0:
            self.by_address[key] = left
        else:
            self.by_address.pop(key, None)


def guarded_protocol(guard: ConnectionGuard, head_timeout_s: float, bad_request: Callable[[Optional[str]], None]):
    """uvicorn's h11 protocol, with:

    - the connection guard: a connection over its caps is closed as soon as it is accepted, and
      counted with its reason (no request of its own is read, so it holds nothing);
    - the first request's idle timer: uvicorn closes a keep-alive connection that stays idle
      after a response, but waits for a new connection's first request forever (1,500 connections
      that never send anything held every slot). The same idle timer starts when the connection is
      made; the first byte of a request stops it, as it does between requests;
    - a deadline for each request's head: a byte is not a request (230 connections sending a
      header byte every 2 s held every slot), so each request's line and headers must be complete
      within head_timeout_s of the connection, or of the previous response, or the connection is
      closed;
    - an access line and a metric for what uvicorn answers 400 itself (a request h11 cannot parse)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedProtocol(H11Protocol):
        head_deadline = None
        admitted = False

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = self.client[0] if self.client else None
            if not guard.admit(peer):
                transport.abort()     # closes now, without lingering: the slot is free at once
                return
            self.admitted = True
            self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive,
                                                                self.timeout_keep_alive_handler)
            self._arm_head_deadline()

        def data_received(self, data: bytes) -> None:
            if self.admitted:
                super().data_received(data)

        def _arm_head_deadline(self) -> None:
            self._disarm_head_deadline()
            self.head_deadline = self.loop.call_later(head_timeout_s, self._head_too_slow)

        def _disarm_head_deadline(self) -> None:
            if self.head_deadline is not None:
                self.head_deadline.cancel()
                self.head_deadline = None

        def _head_too_slow(self) -> None:
            self.head_deadline = None
            if self.cycle is None or self.cycle.response_complete:   # no request in hand: its head is late
                guard.refused("head_timeout", self.client[0] if self.client else None)
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:   # a whole head arrived
                self._disarm_head_deadline()

        def send_400_response(self, msg: str) -> None:
            super().send_400_response(msg)
            bad_request(self.client[0] if self.client else None)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self._arm_head_deadline()      # the next request on this connection gets its own

        def connection_lost(self, exc) -> None:  # type: ignore[override]
            self._disarm_head_deadline()
            if self.admitted:
                self.admitted = False
                guard.release(self.client[0] if self.client else None)
            super().connection_lost(exc)
    return GuardedProtocol
