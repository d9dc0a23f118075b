"""How far a stash's judging again has come. Items sent again above a batch are bulk work (``reprocess``
marks them ``bulk``, pending): those of the stash still pending or processing are waiting, the rest of
the ``sent`` are judged; the rate is the judged ones over the time since sending."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from stash.models import Content, Stash


@dataclass(frozen=True)
class JudgingProgress:
    """Of ``sent`` items: ``waiting`` still to be judged, ``judged`` the others (never below 0), and
    ``per_second`` judged per second since sending (``None`` without a send time)."""

    sent: int
    waiting: int
    per_second: float | None = None

    @property
    def judged(self) -> int:
        return max(self.sent - self.waiting, 0)

    @property
    def done(self) -> bool:
        return self.waiting == 0


def judging_progress(stash: Stash, sent: int, since: datetime | None = None) -> JudgingProgress:
    """How far judging again the ``sent`` items of ``stash``, sent at ``since``, has come (one query)."""
    waiting = Content.objects.filter(stash=stash, bulk=True).waiting().count()
    progress = JudgingProgress(sent=sent, waiting=waiting)
    if since is None:
        return progress
    elapsed = (timezone.now() - since).total_seconds()
    per_second = progress.judged / elapsed if elapsed > 0 else None
    return JudgingProgress(sent=sent, waiting=waiting, per_second=per_second)
