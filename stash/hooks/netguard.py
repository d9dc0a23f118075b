"""Outbound HTTP that only reaches public addresses: resolve once, check the address, connect to it.

    status, reason = post("https://hooks.example.com/in", body, headers, timeout=5, deadline=10)

The host name is resolved once; each address is checked, and the connection goes to the
checked address, with the name kept for the Host header, SNI and the certificate. A name that
resolves to a public address when checked and to 127.0.0.1 when connecting (DNS rebinding)
therefore cannot reach 127.0.0.1. Loopback, private, link-local (cloud metadata included),
shared, multicast and reserved addresses are refused unless ``STASH_WEBHOOK_ALLOWED_NETWORKS``
lists them.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
from typing import Iterable
from urllib.parse import urlsplit

#: Addresses that cloud providers serve instance metadata (and credentials) on.
METADATA_ADDRESSES = frozenset(map(ipaddress.ip_address, ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")))


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class BlockedAddress(Exception):
    """The URL's host is, or resolves only to, addresses that may not be connected to."""


def parse_networks(values: Iterable[object]) -> list[Network]:
    """Networks from strings such as "10.0.0.0/8" or "127.0.0.1"; raises ``ValueError`` naming a bad one."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(str(value).strip(), strict=False))
        except ValueError:
            raise ValueError(f"{value!r} is not an IP address or network (e.g. 10.0.0.0/8)") from None
    return networks


def allowed_networks() -> list[Network]:
    """``settings.STASH_WEBHOOK_ALLOWED_NETWORKS``, parsed (empty without Django settings)."""
    from django.conf import settings

    return parse_networks(getattr(settings, "STASH_WEBHOOK_ALLOWED_NETWORKS", None) or ())


def why_blocked(
    address: str | ipaddress.IPv4Address | ipaddress.IPv6Address, allowed: Iterable[Network] = ()
) -> str | None:
    """Why ``address`` may not be connected to ("loopback", "private", ...), or None if it may."""
    address = ipaddress.ip_address(address)
    if any(address in network for network in allowed):
        return None
    # An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as what it is.
    embedded = getattr(address, "ipv4_mapped", None) or getattr(address, "sixtofour", None)
    if embedded is not None:
        return why_blocked(embedded, allowed)
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    for kind in ("loopback", "link_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    if not address.is_global:
        return "not public"
    return None


def check_host(host: str, allowed: Iterable[Network] = ()) -> str | None:
    """Why a literal IP ``host`` is refused, or None (names are only checked when connecting)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    reason = why_blocked(address, allowed)
    return f"{host} is a {reason} address" if reason else None


def resolve(host: str, port: int, allowed: Iterable[Network] = ()) -> str:
    """The first address of ``host`` that may be connected to.

    Raises ``BlockedAddress`` (naming each address and why) if there is none, ``OSError``
    if the name does not resolve.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    refused = []
    for *_, sockaddr in infos:
        address = str(sockaddr[0])
        reason = why_blocked(address, allowed)
        if reason is None:
            return address
        refused.append(f"{address} ({reason})")
    listed = ", ".join(dict.fromkeys(refused))
    raise BlockedAddress(
        f"{host} resolves only to addresses that are refused: {listed}; allow them with STASH_WEBHOOK_ALLOWED_NETWORKS"
    )


class PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to one checked address, whatever the name resolves to by then; with a TLS
    ``context``, speaks TLS there, SNI and the certificate check using the host name.

    ``cut()`` (from another thread) ends the exchange: a read or write blocked on the socket
    returns at once, and the exchange fails; ``cut_off`` says whether that happened.
    """

    def __init__(
        self, host: str, port: int, *, address: str, timeout: float, context: ssl.SSLContext | None = None
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address
        self.context = context
        self.cut_off = False
        self._live: socket.socket | None = None
        self._lock = threading.Lock()
        if context is not None:
            self.default_port = http.client.HTTPS_PORT  # a Host header without ":443", as HTTPS has it

    def connect(self) -> None:
        # The name is never resolved again: the socket goes to the checked address.
        sock = socket.create_connection((self.address, self.port), self.timeout)
        with self._lock:
            self._live = sock
        if self.cut_off:
            sock.close()
            raise TimeoutError("cut off while connecting")
        self.sock = sock if self.context is None else self.context.wrap_socket(sock, server_hostname=self.host)
        with self._lock:
            self._live = self.sock

    def cut(self) -> None:
        with self._lock:
            self.cut_off = True
            if self._live is not None:
                try:
                    # The plain socket's shutdown, under TLS too: it wakes the thread blocked on it.
                    socket.socket.shutdown(self._live, socket.SHUT_RDWR)
                except OSError:
                    pass  # closed meanwhile

    def close(self) -> None:
        with self._lock:
            self._live = None
        super().close()


def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    allowed: Iterable[Network] | None = None,
    deadline: float | None = None,
) -> tuple[int, str]:
    """POST ``body`` to ``url`` and return ``(status, reason phrase)``; redirects are not followed.

    ``timeout`` bounds the connection and each read or write; ``deadline``, if given, the whole
    exchange: a receiver that drips its answer a byte at a time is cut off after ``deadline``
    seconds (``TimeoutError``). Raises ``BlockedAddress`` for an address that is refused,
    ``OSError`` or ``http.client.HTTPException`` when the network fails (timeouts included).
    """
    # Enough of the answer to finish the exchange; the body is not used.
    status, reason, _ = exchange(url, body, headers, timeout, allowed, deadline, max_answer=64 * 1024)
    return status, reason


def exchange(
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    allowed: Iterable[Network] | None = None,
    deadline: float | None = None,
    max_answer: int = 1024 * 1024,
) -> tuple[int, str, bytes]:
    """As ``post``, and the answer's body too: ``(status, reason phrase, body)``.

    At most ``max_answer`` bytes of the body are read; a longer one comes back cut at
    ``max_answer + 1`` bytes, so the caller can tell it was too long.
    """
    allowed = allowed_networks() if allowed is None else allowed
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = resolve(host, port, allowed)
    context = ssl.create_default_context() if parts.scheme == "https" else None
    connection = PinnedHTTPConnection(host, port, address=address, timeout=timeout, context=context)
    timer = None
    if deadline is not None:
        timer = threading.Timer(deadline, connection.cut)
        timer.daemon = True
        timer.start()
    try:
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        connection.request("POST", target, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(max_answer + 1)
        return response.status, response.reason, answer
    except (OSError, http.client.HTTPException) as exc:
        if connection.cut_off:
            raise TimeoutError(f"no complete answer within {deadline:g} s") from exc
        raise
    finally:
        if timer is not None:
            timer.cancel()
        connection.close()
