"""The ``webhook`` sink: POST the verdict and item as signed JSON to a public URL, from its own task.

The receiver checks ``X-Stash-Signature: sha256=<hex>``, the HMAC-SHA256 of the raw body with
the shared secret::

    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    hmac.compare_digest(expected, request.headers["X-Stash-Signature"])

What is retried and what is not: a network error, a timeout, a 5xx or a 429 raises, so the
delivery task tries again with backoff; a refused address, a redirect or another 4xx will not
get better by retrying: it raises ``DeliveryRefused``, recorded as failed, and the task ends.
"""

from __future__ import annotations

import http.client
import json
import logging
from typing import Any, Mapping

from stash.core import pipeline
from stash.core.exceptions import DeliveryRefused
from stash.core.registry import register
from stash.hooks import netguard
from stash.hooks.base import EVENTS_SCHEMA, EventSink
from stash.hooks.outbound import DEADLINE_FACTOR, SECRET_SCHEMA, URL_SCHEMA, check_url, signature
from stash.hooks.sinks import describe

__all__ = ["DEADLINE_FACTOR", "Webhook", "WebhookError", "signature"]

logger = logging.getLogger(__name__)


class WebhookError(Exception):
    """A delivery failed in a way that may pass: the task retries."""


@register("webhook")
class Webhook(EventSink):
    """POST each verdict and its item as signed JSON to a URL (public addresses only)."""

    deliver_async = True
    params_schema = {
        "type": "object",
        "properties": {
            "url": {**URL_SCHEMA, "description": "Where to POST, http:// or https://."},
            "secret": SECRET_SCHEMA,
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
        problem = check_url(params["url"])
        return {"url": problem} if problem else {}

    def handle(self, event: str, item: pipeline.Item, result: pipeline.Result) -> None:
        """Raises ``WebhookError`` for a failure worth retrying, ``DeliveryRefused`` for one that is not."""
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
            raise DeliveryRefused(f"POST {url} refused: {exc}") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise WebhookError(f"POST {url} failed: {type(exc).__name__}: {exc}") from exc
        if status >= 500 or status == 429:
            raise WebhookError(f"POST {url} answered {status} {reason}")
        if status >= 300:
            raise DeliveryRefused(f"POST {url} answered {status} {reason}")
        logger.info("Webhook to %s for item %s (%s) delivered: %s", url, item.id, event, status)
