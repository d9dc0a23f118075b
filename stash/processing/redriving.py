"""Re-driving the failure store: judge a group's items again, and say what became of them.

redriving.redrive("3f9c0a...")      # Redrive(sent=40, left_out=2, reviewers="alice")
redriving.outcome("3f9c0a...")      # {"waiting": 0, "accepted": 38, ..., "still_failing": 0}
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Exists, Max, OuterRef
from django.utils import timezone

from stash.models import Content, Failure
from stash.processing.failures import items_of
from stash.processing.rejudging import PeoplesDecisions, decided_by_people, reprocess

Status = Content.Status
#: The counts ``outcome`` gives, in the order the faces show them.
OUTCOMES = ("waiting", "accepted", "rejected", "held", "still_failing")


@dataclass(frozen=True)
class Redrive:
    """What a re-drive of a group did: ``sent`` items to be judged again; ``people``: the group's
    items whose status a person's decision gave, replaced if ``included``, else left out."""

    sent: int
    people: PeoplesDecisions
    included: bool

    @property
    def left_out(self) -> int:
        return 0 if self.included else self.people.count


def redrive(key: str, include_reviewed: bool = False) -> Redrive:
    """Judge the items of the group ``key`` again on their stash's current pipeline, as
    ``reprocess`` does (items decided by people are left out unless ``include_reviewed``), and
    mark the group's failures re-driven now: ``outcome`` then says what became of them."""
    items = items_of(key)
    people = decided_by_people(items)
    now = timezone.now()
    sent = reprocess(items, include_reviewed=include_reviewed)
    Failure.objects.filter(group=key).update(redriven_at=now)
    return Redrive(sent=sent, people=people, included=include_reviewed)


def outcome(key: str) -> dict[str, int]:
    """What became of the items of the group ``key`` since it was last re-driven: how many are
    ``waiting`` (not judged yet), ``accepted``, ``rejected``, ``held``, and ``still_failing`` (a
    failure again since the re-drive, or given up on); empty if it never was."""
    since = Failure.objects.filter(group=key).aggregate(at=Max("redriven_at"))["at"]
    if since is None:
        return {}
    again = Failure.objects.filter(content_id=OuterRef("pk"), at__gt=since)
    rows = items_of(key).annotate(failing=Exists(again)).order_by().values("status", "failing").annotate(n=Count("pk"))
    counts = dict.fromkeys(OUTCOMES, 0)
    for row in rows:
        if row["failing"] or row["status"] == Status.FAILED:
            counts["still_failing"] += row["n"]
        elif row["status"] in (Status.ACCEPTED, Status.REJECTED, Status.HELD):
            counts[row["status"]] += row["n"]
        else:
            counts["waiting"] += row["n"]
    return counts
