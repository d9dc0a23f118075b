"""Expiring reviews: held items that waited past their stash's ``review_expire_hours`` are decided
automatically with its ``review_expire_action`` (beat runs ``expire_reviews`` every few minutes).

    report = expiring.expire_reviews()   # ExpiryReport(decided={stash id: count}, more=False)

Each decision is a ``Review`` of kind ``EXPIRE`` with no reviewer, the item's reason saying
"decided automatically after N hours"; the sinks hear of it as of a reviewer's. A claim on such an
item does not stop it. A pass decides at most ``limit`` items (``more`` says some were left for
the next), each stash in its own transaction, and notifies the sinks after each commit: no lock
is held while they are called. Running it again decides nothing twice: only held items change.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from stash.models import Content, ExpireAction, Stash
from stash.processing.reviewing import decide_automatically

logger = logging.getLogger(__name__)

Status = Content.Status

#: Items one pass decides at most, over all stashes.
LIMIT = 500


@dataclass
class ExpiryReport:
    """What one pass decided: per stash id, how many items; ``more``: some were left for the next."""

    decided: dict[int, int] = field(default_factory=dict)
    more: bool = False

    @property
    def total(self) -> int:
        return sum(self.decided.values())


def expire_reviews(now: datetime | None = None, limit: int = LIMIT) -> ExpiryReport:
    """Decide the held items past their stash's ``review_expire_hours``, oldest first, up to ``limit``."""
    now = now or timezone.now()
    report = ExpiryReport()
    stashes = Stash.objects.filter(review_expire_hours__gt=0).order_by("pk")
    for stash in stashes:
        left = limit - report.total
        if left <= 0:
            report.more = True
            break
        cut = now - timedelta(hours=stash.review_expire_hours)
        due = Content.objects.filter(stash=stash, status=Status.HELD, processed_at__lt=cut).order_by(
            "processed_at", "pk"
        )
        ids = list(due.values_list("pk", flat=True)[: left + 1])
        if len(ids) > left:
            ids, report.more = ids[:left], True
        if not ids:
            continue
        to = Status.ACCEPTED if stash.review_expire_action == ExpireAction.APPROVE else Status.REJECTED
        reason = f"decided automatically after {stash.review_expire_hours} hours"
        count = decide_automatically(Content.objects.filter(pk__in=ids), to, reason)
        if count:  # each with its statement of reasons (``_review`` writes them, kind expiry)
            report.decided[stash.pk] = count
            logger.info("Review expiry: %d held items of stash %s decided (%s)", count, stash.pk, to)
    return report
