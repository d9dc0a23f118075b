"""Hook precision: how often people agreed with what an enforcing hook rejected or held.

    figures = precision.for_configs(stash.hooks.all())   # {config id: {7: Precision, 30: Precision}}
    figures[config.pk][30].value, figures[config.pk][30].decisions   # 0.75, 20
    precision.for_config(config, days=30, since=config.precision_since)

Of the items a hook config decided (``Content.decided_by``: it rejected or held them), those on which
a person later made a decision within the window, by the time of that decision. Each item counts
once, by the latest person's decision on its current revision that still stands (not replaced by a
new judgement): *confirmed* when it left the item rejected (a held item rejected, a rejection upheld
on appeal), *reversed* when it left it accepted (a held item approved, an overturn, an appeal
reversed). ``precision = confirmed / (confirmed + reversed)``; None when no one decided. A first
approval of a four-eyes item (still held) and a decision made automatically at expiry are no
person's word on the hook, and do not count.

Every face (the admin's pages, the API, ``stats``, ``/metrics``, the automatic switch to observe)
reads the figures here, with one grouped query over the decisions of the window (the reviews still
standing, by ``created_at``: the index ``stash_review_standing``), whatever the number of hooks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from stash.models import Content, HookConfig, Review

#: The windows, in days, every face shows.
WINDOWS = (7, 30)
#: The decisions that are a person's word on a hook's verdict.
DECISIONS = (
    Review.Decision.APPROVE,
    Review.Decision.REJECT,
    Review.Decision.OVERTURN,
    Review.Decision.UPHOLD,
    Review.Decision.REVERSE,
)


@dataclass(frozen=True)
class Precision:
    """People's decisions on one hook's items over one window: ``confirmed`` (the item stayed
    rejected) and ``reversed`` (it was accepted)."""

    confirmed: int = 0
    reversed: int = 0

    @property
    def decisions(self) -> int:
        """How many items people decided: the count the figure stands on."""
        return self.confirmed + self.reversed

    @property
    def value(self) -> float | None:
        """``confirmed / decisions``, or None when no one decided."""
        return self.confirmed / self.decisions if self.decisions else None

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "precision": self.value,
            "decisions": self.decisions,
            "confirmed": self.confirmed,
            "reversed": self.reversed,
        }


def _standing(since: datetime) -> QuerySet[Review]:
    """The latest person's decision on each item a hook decided, made since ``since`` and still its own."""
    later = Review.objects.filter(
        content=OuterRef("content"), pk__gt=OuterRef("pk"), decision__in=DECISIONS, replaced_at__isnull=True
    )
    return (
        Review.objects.filter(
            created_at__gte=since,
            replaced_at__isnull=True,
            decision__in=DECISIONS,
            revision=F("content__revision"),
            content__decided_by__isnull=False,
        )
        .filter(~Exists(later))
        .order_by()
    )


def _counts(reviews: QuerySet[Review], windows: dict[int, datetime]) -> dict[int, dict[int, Precision]]:
    """{config id: {days: Precision}} of ``reviews`` grouped by the hook that decided their item."""
    counts = {}
    for days, start in windows.items():
        counts[f"c{days}"] = Count("pk", filter=Q(created_at__gte=start, status=Content.Status.REJECTED))
        counts[f"r{days}"] = Count("pk", filter=Q(created_at__gte=start, status=Content.Status.ACCEPTED))
    result: dict[int, dict[int, Precision]] = {}
    for row in reviews.values("content__decided_by").annotate(**counts):
        result[row["content__decided_by"]] = {
            days: Precision(confirmed=row[f"c{days}"], reversed=row[f"r{days}"]) for days in windows
        }
    return result


def _windows(now: datetime | None, windows: Iterable[int]) -> dict[int, datetime]:
    now = now or timezone.now()
    return {days: now - timedelta(days=days) for days in windows}


def for_configs(
    configs: Iterable[HookConfig], now: datetime | None = None, windows: Iterable[int] = WINDOWS
) -> dict[int, dict[int, Precision]]:
    """The precision of each enforcing one of ``configs`` over each of ``windows`` (days), by
    config id, in one query; observing configs are left out (they decide nothing)."""
    ids = [config.pk for config in configs if config.pk is not None and config.mode == HookConfig.Mode.ENFORCE]
    if not ids:
        return {}
    starts = _windows(now, windows)
    found = _counts(_standing(min(starts.values())).filter(content__decided_by__in=ids), starts)
    return {pk: found.get(pk) or {days: Precision() for days in starts} for pk in ids}


def for_enforcing(now: datetime | None = None, windows: Iterable[int] = WINDOWS) -> dict[int, dict[int, Precision]]:
    """The precision of every enforcing hook config of every stash that people decided on within
    the longest window (the others have none to show), in one query: what ``/metrics`` reads."""
    starts = _windows(now, windows)
    reviews = _standing(min(starts.values())).filter(content__decided_by__mode=HookConfig.Mode.ENFORCE)
    return _counts(reviews, starts)


def for_config(
    config: HookConfig, days: int = 30, since: datetime | None = None, now: datetime | None = None
) -> Precision:
    """The precision of ``config`` over the last ``days``, whatever its mode; with ``since``, only
    items it judged after then count (``HookConfig.precision_since``: its last automatic switch)."""
    starts = _windows(now, [days])
    reviews = _standing(starts[days]).filter(content__decided_by=config.pk)
    if since is not None:
        reviews = reviews.filter(content__processed_at__gt=since)
    return _counts(reviews, starts).get(config.pk, {}).get(days, Precision())
