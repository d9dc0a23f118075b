"""Judging again: ``reprocess`` sends selected items back to their stash's current hooks, leaving out those
whose status a person's decision gave (``decided_by_people``) unless told to include them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from stash.models import Content, Review, lease_end
from stash.processing.judging import send_by_queue

Status = Content.Status


# An item whose status a person's decision gave: reviewed, and not judged by the hooks since.
# (Overturned items are reviewed ones; the flag is named too, should a reviewer's account be gone.)
PEOPLES_DECISION = Q(overturned=True) | (
    Q(reviewed_at__isnull=False, status__in=[Status.ACCEPTED, Status.REJECTED])
    & (Q(processed_at__isnull=True) | Q(processed_at__lte=F("reviewed_at")))
)


@dataclass(frozen=True)
class PeoplesDecisions:
    """How many items of a selection have the status a person's decision gave, and whose."""

    count: int = 0
    reviewers: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.count > 0

    def who(self, most: int = 5) -> str:
        """The reviewers' names, ``most`` of them at most: "alice, bob" or "alice, bob and 4 more"."""
        if not self.reviewers:
            return gettext("people no longer registered")
        names = ", ".join(self.reviewers[:most])
        more = len(self.reviewers) - most
        return gettext("%(names)s and %(more)d more") % {"names": names, "more": more} if more > 0 else names


def decided_by_people(queryset: QuerySet[Content]) -> PeoplesDecisions:
    """The items of ``queryset`` that ``reprocess`` leaves out unless told to include them (two queries)."""
    decided = queryset.filter(PEOPLES_DECISION)
    names = (
        decided.filter(reviewed_by__isnull=False)
        .order_by()
        .values_list(f"reviewed_by__{get_user_model().USERNAME_FIELD}", flat=True)
        .distinct()
    )
    return PeoplesDecisions(count=decided.count(), reviewers=tuple(sorted(map(str, names))))


def reprocess(queryset: QuerySet[Content], include_reviewed: bool = False) -> int:
    """Judge the selected items again with their stash's current hooks (``reprocess_by_stash``);
    returns how many were sent."""
    return sum(reprocess_by_stash(queryset, include_reviewed).values())


def reprocess_by_stash(queryset: QuerySet[Content], include_reviewed: bool = False) -> Counter[int]:
    """Judge the selected items again with their stash's current hooks; returns how many were sent, by
    stash id.

    Items whose status a person's decision gave (``decided_by_people``) are left out, unless
    ``include_reviewed``. An item sent no longer names a reviewer (``reviewed_by``, ``reviewed_at``
    and ``review_note`` cleared, no longer ``overturned``): the hooks decide it now, and its
    ``reviews`` keep the people's decisions, marked replaced.
    """
    now = timezone.now()
    ids = list(queryset.values_list("pk", flat=True))
    with transaction.atomic():
        # Locked, as a review locks them: a decision made meanwhile is either seen here or made after.
        items = Content.objects.select_for_update(of=("self",)).filter(pk__in=ids)
        if not include_reviewed:
            items = items.exclude(PEOPLES_DECISION)
        rows = list(items.values_list("pk", "stash__queue", "stash_id"))
        sent = [pk for pk, _, _ in rows]
        # More than a batch is bulk work: live saves meanwhile are judged first.
        Content.objects.filter(pk__in=sent).update(
            status=Status.PENDING,
            attempts=0,
            lease_token=None,
            reason="",
            bulk=len(sent) > settings.STASH_BATCH_SIZE,
            lease_until=lease_end(now),
            updated_at=now,
            reviewed_by=None,
            reviewed_at=None,
            review_note="",
            overturned=False,
        )
        Review.objects.filter(content_id__in=sent, replaced_at__isnull=True).update(replaced_at=now)
        send_by_queue([(pk, queue) for pk, queue, _ in rows])
    return Counter(stash_id for _, _, stash_id in rows)
