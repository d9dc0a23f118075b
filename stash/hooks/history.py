"""Filters that look at what came before: ``duplicate`` (the stash's items) and ``rate_limit`` (the cache).

Unlike the other hooks these need Django: the database and the cache are imported inside the
methods, so that importing the hook library never needs a configured project. ``rate_limit``
declares ``side_effects``: it counts in ``self.state``, a scratch copy of the cache in runs that
only look; ``duplicate`` only reads.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks.base import Filter

_WINDOW = {"type": "integer", "minimum": 1, "maximum": 366 * 24 * 3600}


@register("duplicate")
class Duplicate(Filter):
    """Drop content whose payload was already submitted to the same stash within a window."""

    params_schema = {
        "type": "object",
        "properties": {
            "window_seconds": {
                **_WINDOW,
                "default": 24 * 3600,
                "description": "How far back an earlier submission counts (default: a day).",
            },
            "count_rejected": {
                "type": "boolean",
                "default": False,
                "description": "Count earlier items that were rejected or failed too.",
            },
        },
        "additionalProperties": False,
    }

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        """An item is a duplicate of an *earlier* one, so of two equal items submitted together one is kept."""
        from django.db.models import Q
        from django.utils import timezone

        from stash.models import Content, content_hash

        window = self.params.get("window_seconds", 24 * 3600)
        digest = item.content_hash or content_hash(item.payload)
        anchor = item.created_at or timezone.now()
        earlier = Content.objects.filter(
            stash__slug=item.stash, content_hash=digest, created_at__gte=anchor - timedelta(seconds=window)
        )
        if item.id is None:  # a simulation: everything stored so far is earlier
            earlier = earlier.filter(created_at__lte=anchor)
        else:
            earlier = earlier.filter(Q(created_at__lt=anchor) | Q(created_at=anchor, pk__lt=item.id))
        if not self.params.get("count_rejected", False):
            earlier = earlier.exclude(status__in=[Content.Status.REJECTED, Content.Status.FAILED])
        first = earlier.order_by("created_at", "pk").values_list("pk", flat=True).first()
        if first is None:
            return self.keep()
        return self.drop(f"same content as item {first}, submitted within {window} s before", "duplicate")


@register("rate_limit")
class RateLimit(Filter):
    """Drop content from a submitter who sent more than max_items within a window (counted on the cache)."""

    params_schema = {
        "type": "object",
        "properties": {
            "max_items": {"type": "integer", "minimum": 1, "description": "Items kept per submitter per window."},
            "window_seconds": {**_WINDOW, "description": "Length of a window; windows start on the clock."},
            "anonymous": {
                "enum": ["shared", "exempt"],
                "default": "shared",
                "description": "Anonymous submissions share one allowance, or are not limited.",
            },
        },
        "required": ["max_items", "window_seconds"],
        "additionalProperties": False,
    }
    # The counts: judging for real adds to them; simulate, replay and examples count on a scratch copy.
    side_effects = True

    def open_state(self) -> Any:
        from django.core.cache import cache

        return cache

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        """Counts each judged item in the window of its submission time.

        A run that only looks (simulate, replay, golden examples) counts on a scratch copy of
        the count: it shows what this item would make it, and the real count stays. An item
        judged again (reprocessed) counts again. The count is exact on Redis; on the file cache
        of the embedded default, two workers counting the same submitter at the same instant
        may lose one.
        """
        counts = self.state
        if item.submitted_by is None and self.params.get("anonymous", "shared") == "exempt":
            return self.keep()
        window, limit = self.params["window_seconds"], self.params["max_items"]
        submitted = item.created_at.timestamp() if item.created_at else time.time()
        who = item.submitted_by or "anonymous"
        key = f"stash:rate_limit:{item.stash}:{window}:{who}:{int(submitted // window)}"
        # Kept for two windows after the last count, so a backlog judged late still counts.
        timeout = 2 * window
        counts.add(key, 0, timeout)
        try:
            count = counts.incr(key)
        except ValueError:  # expired between add and incr
            counts.set(key, 1, timeout)
            count = 1
        counts.touch(key, timeout)  # incr on the file cache resets the timeout to the default
        if count > limit:
            label = f"submitter {who}" if item.submitted_by else "anonymous submitters"
            return self.drop(f"{label} sent {count} items within {window} s; the limit is {limit}", "rate_limited")
        return self.keep()
