"""Built-in sinks: ``log``, ``email`` and ``redis_stream`` act on verdicts (``webhook`` is in ``webhook``).

A sink that does network I/O is delivered by its own Celery task (``deliver_async``), which
retries it with backoff when it raises.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks.base import EVENTS_SCHEMA, EventSink

if TYPE_CHECKING:
    from redis import Redis
    from redis.typing import EncodableT, FieldT

logger = logging.getLogger(__name__)

_VERDICT_WORD = {"accept": "accepted", "reject": "rejected", "hold": "held", "error": "had a hook error"}


def describe(event: str, item: pipeline.Item, result: pipeline.Result) -> dict[str, Any]:
    """The verdict and item as JSON-ready data: what webhooks post and streams carry."""
    return {
        "event": event,
        "verdict": result.verdict,
        "reason": result.reason,
        "item": {
            "id": item.id,
            "stash": item.stash,
            "revision": item.revision,
            "source": item.source,
            "submitted_by": item.submitted_by,
            "created_at": item.created_at.isoformat() if item.created_at else None,
            "payload": result.payload,
        },
        "trail": [entry.as_dict() for entry in result.trail],
    }


def summary(event: str, item: pipeline.Item, result: pipeline.Result) -> str:
    """One line: "audit: item 3f2c… r1 rejected: missing text"."""
    line = f"{item.stash}: item {item.id} r{item.revision} {_VERDICT_WORD[event]}"
    return f"{line}: {result.reason}" if result.reason else line


@register("log")
class Log(EventSink):
    """Write a line per verdict to the stash.hooks.sinks logger."""

    params_schema = {
        "type": "object",
        "properties": {
            "level": {"enum": ["debug", "info", "warning", "error"], "default": "info"},
            "events": EVENTS_SCHEMA,
        },
        "additionalProperties": False,
    }

    def handle(self, event: str, item: pipeline.Item, result: pipeline.Result) -> None:
        level = logging.getLevelName(self.params.get("level", "info").upper())
        logger.log(level, "%s", summary(event, item, result))


@register("email")
class Email(EventSink):
    """Email a notice per verdict through Django's email backend."""

    deliver_async = True
    params_schema = {
        "type": "object",
        "properties": {
            "to": {
                "type": "array",
                "minItems": 1,
                "maxItems": 50,
                "uniqueItems": True,
                "items": {
                    "type": "string",
                    "pattern": r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
                    "maxLength": 254,
                    "description": "An email address, e.g. ann@example.com.",
                },
                "description": "Addresses to send to.",
            },
            "subject_prefix": {"type": "string", "maxLength": 100, "default": "[stash]"},
            "events": EVENTS_SCHEMA,
        },
        "required": ["to"],
        "additionalProperties": False,
    }

    def handle(self, event: str, item: pipeline.Item, result: pipeline.Result) -> None:
        """Raises what the email backend raises (SMTP down: the task retries)."""
        from django.core.mail import send_mail

        prefix = self.params.get("subject_prefix", "[stash]")
        subject = f"{prefix} {item.stash}: item {item.id} {_VERDICT_WORD[event]}".strip()
        lines = [
            summary(event, item, result),
            "",
            f"source: {item.source}",
            f"submitted by: {item.submitted_by or 'anonymous'}",
            "",
            "trail:",
        ]
        lines += [f"  {e.position:>3}  {e.title:<24} {e.outcome:<12} {e.message}" for e in result.trail]
        lines += ["", "payload:", json.dumps(result.payload, indent=2, ensure_ascii=False, default=str)[:10_000]]
        send_mail(subject, "\n".join(lines), None, self.params["to"], fail_silently=False)


_clients: dict[str, Redis] = {}


def redis_client(url: str) -> Redis:
    """One client (and connection pool) per URL, per process."""
    if url not in _clients:
        import redis

        _clients[url] = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
    return _clients[url]


@register("redis_stream")
class RedisStream(EventSink):
    """Add accepted items to a Redis stream (XADD) for consumers outside Django."""

    deliver_async = True
    default_events = ("accept",)
    params_schema = {
        "type": "object",
        "properties": {
            "stream": {
                "type": "string",
                "pattern": r"^[A-Za-z0-9:_.\-]{1,200}$",
                "description": "The stream's key, e.g. stash:audit:accepted.",
            },
            "maxlen": {
                "type": "integer",
                "minimum": 1,
                "description": "Keep about this many entries (older ones are trimmed).",
            },
            "events": {**EVENTS_SCHEMA, "default": ["accept"]},
        },
        "required": ["stream"],
        "additionalProperties": False,
    }

    def handle(self, event: str, item: pipeline.Item, result: pipeline.Result) -> None:
        """Raises ``redis.RedisError`` when Redis cannot be reached (the task retries).

        Delivery is at least once: a retry after a lost reply adds the entry again, so
        consumers should recognise an item by ``id`` and ``revision``.
        """
        from django.conf import settings

        fields: dict[FieldT, EncodableT] = {
            "event": event,
            "verdict": result.verdict,
            "reason": result.reason,
            "id": item.id or "",
            "stash": item.stash,
            "revision": item.revision,
            "source": item.source,
            "submitted_by": item.submitted_by or "",
            "payload": json.dumps(result.payload, ensure_ascii=False, default=str),
        }
        maxlen = self.params.get("maxlen")
        redis_client(settings.STASH_REDIS_URL).xadd(
            self.params["stream"], fields, maxlen=maxlen, approximate=maxlen is not None
        )
