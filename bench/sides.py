"""The two sides of every row: the stash under test and the hand-written baseline, behind one interface.

for side in (StashSide(stash), HandSide()):
    side.save_one(payload(1)); side.save_many(payloads(1000))
    side.undecided().exists(); side.verdicts(); side.clear()
"""

from abc import ABC, abstractmethod

from django.db import connection
from django.db.models import Count, Max

from stash import processing
from stash.models import Content, PipelineRun

from .baseline import submitting
from .baseline.models import Item
from .workload import make_stash, number

BULK_CALL = 1000  # payloads per submit call


def vacuum():
    """On PostgreSQL, VACUUM (ANALYZE) the database: what was deleted leaves no dead rows behind
    for the next figure to scan, whether or not the server runs autovacuum (a deployment does; a
    test server may not), and both sides start each figure alike."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE)")


class Side(ABC):
    """What a row needs of a side: save items, see which are judged, read verdicts, clean up."""

    name = ""
    label = ""
    api_path = ""
    api_stash = ""  # the body's "stash" (blank: none)

    @abstractmethod
    def items(self):
        """The side's items, as a queryset."""

    @abstractmethod
    def undecided(self):
        """The side's items still waiting for a verdict."""

    @abstractmethod
    def save_one(self, payload):
        """Save one item in its own transaction; return its id."""

    @abstractmethod
    def submit_many(self, payloads):
        """Save up to 1,000 ``payloads`` in one call."""

    def save_many(self, payloads):
        """Save ``payloads`` in bulk calls of 1,000."""
        for start in range(0, len(payloads), BULK_CALL):
            self.submit_many(payloads[start : start + BULK_CALL])

    def clear(self):
        self.items().delete()
        vacuum()

    def runs_per_item_ok(self):
        """True if every item has the trail its side promises (the baseline promises none)."""
        return True

    def live_side(self):
        """Where live saves go while this side imports in bulk: the side itself (the baseline has
        no stashes)."""
        return self

    def verdicts(self):
        """``{payload number: status}`` of every item."""
        return {number(payload): status for payload, status in self.items().values_list("payload", "status")}

    def last_verdict(self):
        """The latest ``processed_at``, as a Unix time."""
        return self.items().aggregate(last=Max("processed_at"))["last"].timestamp()


class StashSide(Side):
    """Items of the stash under test, saved the ways its users save them."""

    name = "stash"
    label = "stash"
    api_path = "/api/contents/"

    def __init__(self, stash):
        self.stash = stash
        self.api_stash = stash.slug

    def items(self):
        return Content.objects.filter(stash=self.stash)

    def undecided(self):
        # An item waiting for an outside service (an asynchronous hook) has no verdict yet either.
        return self.items().filter(
            status__in=[Content.Status.PENDING, Content.Status.PROCESSING, Content.Status.WAITING]
        )

    def save_one(self, payload):
        return Content.objects.create(stash=self.stash, payload=payload).pk

    def submit_many(self, payloads):
        processing.submit_many(self.stash, payloads)

    def clear(self):
        PipelineRun.objects.filter(content__stash=self.stash).delete()
        super().clear()

    def live_side(self):
        """Another stash with the same hooks, on the same queue."""
        return StashSide(make_stash(f"{self.stash.slug}-live"))

    def runs_per_item_ok(self):
        """True if every item has exactly one pipeline run."""
        return not self.items().annotate(run_count=Count("runs")).exclude(run_count=1).exists()


class HandSide(Side):
    """Items of the hand-written baseline (``bench.baseline.submitting``)."""

    name = "hand"
    label = "hand-written"
    api_path = "/bench/items/"

    def items(self):
        return Item.objects.all()

    def undecided(self):
        return Item.objects.filter(status=Item.Status.PENDING)

    def save_one(self, payload):
        return submitting.submit(payload).pk

    def submit_many(self, payloads):
        submitting.submit_many(payloads)
