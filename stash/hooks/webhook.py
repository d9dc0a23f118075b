"""The ``webhook`` sink: POST the verdict and item as signed JSON to a public URL, from its own task.

The receiver checks ``X-Stash-Signature: sha256=<hex>``, the HMAC-SHA256 of the raw body with
the shared secret::

    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    hmac.compare_digest(expected, request.headers["X-Stash-Signature"])

What is retried and what is not: a network error, a timeout, a 5xx or a 429 raises, so the
delivery task tries again with backoff; a refused address, a redirect or another 4xx will not
get better by retrying, so it is logged as given up and the task ends.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import logging
from typing import Any, Mapping
from urllib.parse import urlsplit

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks import netguard
from stash.hooks.base import EVENTS_SCHEMA, EventSink
from stash.hooks.sinks import describe

logger = logging.getLogger(__name__)

#: The whole exchange (connecting, sending, the answer) is cut off at this many times the ``timeout``
#: param, which bounds each read only: a receiver that drips its answer holds a delivery no longer.
DEADLINE_FACTOR = 2


class WebhookError(Exception):
    """A delivery failed in a way that may pass: the task retries."""


def signature(secret: str, body: bytes) -> str:
    """The ``X-Stash-Signature`` value of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@register("webhook")
class Webhook(EventSink):
    """POST each verdict and its item as signed JSON to a URL (public addresses only)."""

    deliver_async = True
    params_schema = {
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "pattern": "^https?://",
                "maxLength": 2000,
                "description": "Where to POST, http:// or https://.",
            },
            "secret": {
                "type": "string",
                "minLength": 16,
                "maxLength": 200,
                "writeOnly": True,
                "description": "Shared secret for the X-Stash-Signature HMAC-SHA256 header.",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 30,
                "default": 5,
                "description": "Seconds to wait to connect, and then for each read; the whole "
                "exchange is cut off at twice this.",
            },
            "events": EVENTS_SCHEMA,
        },
        "required": ["url", "secret"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        try:
            parts = urlsplit(params["url"])
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError as exc:
            return {"url": f"not a valid URL: {exc}"}
        if not parts.hostname:
            return {"url": "the URL has no host"}
        if parts.username or parts.password:
            return {"url": "put no credentials in the URL; the signature authenticates the request"}
        blocked = netguard.check_host(parts.hostname, netguard.allowed_networks())
        if blocked:
            return {"url": f"{blocked}; allow it with STASH_WEBHOOK_ALLOWED_NETWORKS"}
        return {}

    def handle(self, event: str, item: pipeline.Item, result: pipeline.Result) -> None:
        """Raises ``WebhookError`` for a failure worth retrying; logs and returns for one that is not."""
        url = self.params["url"]
        body = json.dumps(
            describe(event, item, result), ensure_ascii=False, separators=(",", ":"), default=str
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "stash-webhook/1",
            "X-Stash-Event": event,
            "X-Stash-Delivery": f"{item.id}:{item.revision}:{event}",
            "X-Stash-Signature": signature(self.params["secret"], body),
        }
        try:
            timeout = self.params.get("timeout", 5)
            status, reason = netguard.post(url, body, headers, timeout=timeout, deadline=DEADLINE_FACTOR * timeout)
        except netguard.BlockedAddress as exc:
            logger.error("Webhook to %s for item %s (%s) refused, not retried: %s", url, item.id, event, exc)
            return
        except (OSError, http.client.HTTPException) as exc:
            raise WebhookError(f"POST {url} failed: {type(exc).__name__}: {exc}") from exc
        if status >= 500 or status == 429:
            raise WebhookError(f"POST {url} answered {status} {reason}")
        if status >= 300:
            logger.error(
                "Webhook to %s for item %s (%s) gave up, not retried: it answered %s %s",
                url,
                item.id,
                event,
                status,
                reason,
            )
            return
        logger.info("Webhook to %s for item %s (%s) delivered: %s", url, item.id, event, status)
