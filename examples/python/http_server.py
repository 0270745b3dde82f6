"""The front's sockets and connections, under uvicorn: the listening socket (bind) and the
protocol that bounds how long a connection may take to send each request's head. http_api.py
builds the server on them."""
from __future__ import annotations

import socket


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


def first_request_timeout_protocol(head_timeout_s: float = 10.0):
    """uvicorn closes a keep-alive connection that stays idle after a response, but waits for a
    new connection's first request forever: 1,500 connections that never send anything would hold
    every slot of max_concurrency. This protocol starts the same idle timer when the connection
    is made; the first byte of a request stops it, as it does between requests.

    A byte is not a request, though: 230 connections sending a header byte every 2 s held every
    slot, /health included, for as long as they lasted. So each request's head (its line and
    headers) must also be complete within head_timeout_s of the connection, or of the previous
    response, or the connection is closed."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class FirstRequestTimeout(H11Protocol):
        head_deadline = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive,
                                                                self.timeout_keep_alive_handler)
            self._arm_head_deadline()

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
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None and not self.cycle.response_complete:   # a whole head arrived
                self._disarm_head_deadline()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self._arm_head_deadline()      # the next request on this connection gets its own

        def connection_lost(self, exc) -> None:  # type: ignore[override]
            self._disarm_head_deadline()
            super().connection_lost(exc)
    return FirstRequestTimeout
