"""Helpers for the appeal tests: a rejected item with the statement of reasons judging wrote, dated as a test needs."""

from datetime import timedelta

from django.utils import timezone

from stash import hooks, processing
from stash.models import Content, Statement


class Recorder(hooks.Sink):
    """Record every lifecycle callback it gets, in process: ``Recorder.events``."""

    events: list[tuple[str, str]] = []

    def on_accept(self, item, result):
        self.events.append(("on_accept", item.id))

    def on_reject(self, item, result):
        self.events.append(("on_reject", item.id))

    def on_reversed(self, item, result):
        self.events.append(("on_reversed", item.id))


def rejected(stash, user=None, *, reviewer=None, decided_at=None, appeal_until=None, statement=True, text="spam"):
    """An item of ``stash`` submitted by ``user`` and rejected by its ``keyword_blocklist`` hook
    (``reviewer``: by that person instead), with a statement of reasons unless ``statement`` is False."""
    item = Content.objects.create(stash=stash, payload={"text": text}, submitted_by=user)
    processing.judge([item.pk])
    item.refresh_from_db()
    assert item.status == "rejected", item.reason
    decided_at = decided_at or timezone.now()
    Content.objects.filter(pk=item.pk).update(
        processed_at=decided_at, reviewed_by=reviewer, reviewed_at=decided_at if reviewer else None
    )
    item.refresh_from_db()
    written = Statement.objects.filter(content=item)  # judging wrote the hook's statement
    assert written.count() == 1
    if not statement:
        written.delete()  # as an item rejected before statements were written
    else:
        written.update(
            kind=Statement.Kind.REVIEWER if reviewer else Statement.Kind.HOOK,
            automated_decision=reviewer is None,
            decided_at=decided_at,
            reviewer=reviewer,
            appeal_until=appeal_until if appeal_until is not None else decided_at + timedelta(days=stash.appeal_days),
        )
    return item
