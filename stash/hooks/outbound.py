"""Signed JSON requests from hooks to outside services: the URL check, the signature, the cut-off.

Shared by the ``webhook`` sink and the ``moderation_api`` filter, so both refuse the same URLs
and sign the same way::

    errors = check_url(params["url"])           # None, or why the URL is refused
    headers["X-Stash-Signature"] = signature(secret, body)
    netguard.exchange(url, body, headers, timeout=t, deadline=DEADLINE_FACTOR * t)

The receiver checks ``X-Stash-Signature: sha256=<hex>``, the HMAC-SHA256 of the raw body with
the shared secret.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from stash.hooks import netguard

#: The whole exchange (connecting, sending, the answer) is cut off at this many times the ``timeout``
#: param, which bounds each read only: a receiver that drips its answer holds a request no longer.
DEADLINE_FACTOR = 2

#: The JSON Schema of a URL param: http:// or https://, of a sane length.
URL_SCHEMA = {"type": "string", "pattern": "^https?://", "maxLength": 2000}

#: The JSON Schema of a shared secret param: never shown back (``writeOnly``), long enough to matter.
SECRET_SCHEMA = {
    "type": "string",
    "minLength": 16,
    "maxLength": 200,
    "writeOnly": True,
    "description": "Shared secret for the X-Stash-Signature HMAC-SHA256 header.",
}


def signature(secret: str, body: bytes) -> str:
    """The ``X-Stash-Signature`` value of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def check_url(url: str) -> str | None:
    """Why ``url`` may not be posted to (bad port, no host, credentials, a refused literal
    address), or None. Host names are checked when connecting (``netguard``)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"not a valid URL: {exc}"
    if not parts.hostname:
        return "the URL has no host"
    if parts.username or parts.password:
        return "put no credentials in the URL; the signature authenticates the request"
    blocked = netguard.check_host(parts.hostname, netguard.allowed_networks())
    if blocked:
        return f"{blocked}; allow it with STASH_WEBHOOK_ALLOWED_NETWORKS"
    return None
