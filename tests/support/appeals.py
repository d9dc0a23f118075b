"""Helpers for the appeal tests: a rejected item with a statement of reasons, as judging will write it."""

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
    if statement:
        Statement.objects.create(
            content=item,
            revision=item.revision,
            kind=Statement.Kind.REVIEWER if reviewer else Statement.Kind.HOOK,
            restriction="removed",
            text=f"Your content was removed because {item.reason}.",
            automated_detection=True,
            automated_decision=reviewer is None,
            ground="terms",
            ground_reference="Terms §4",
            category="STATEMENT_CATEGORY_SCOPE_OF_PLATFORM_SERVICE",
            decided_at=decided_at,
            hook_config=item.decided_by,
            reviewer=reviewer,
            appeal_until=appeal_until if appeal_until is not None else decided_at + timedelta(days=stash.appeal_days),
        )
    return item
