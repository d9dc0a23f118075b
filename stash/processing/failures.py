"""The failure store: hook errors, hook timeouts and items given up on, grouped for an operator to work from.

    failures.record(runs)                        # judging: the errors and timeouts of a batch's trails
    failures.record_gave_up(ids, now)            # the sweeper and recovery: items out of attempts
    failures.groups(stash=s, since=t)            # [FailureGroup]: counts, first and last seen, an example
    failures.check_window(since, until)          # the faces' filters: since after until is refused

A group is one hook config (or hook name), error type and pipeline version of one stash (see
``models.failures.group_key``); ``redriving`` judges a group again. Every face (the admin's page,
the API, ``stash_reprocess --failure-group``) calls these. Writing a failure costs nothing while
hooks succeed: a batch's trails are read once, in memory, and only failures are written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Count, Max, Min, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from stash.core import pipeline
from stash.models import Content, Failure, PipelineRun, Stash, group_key

Status = Content.Status
_KINDS = {pipeline.ERROR: Failure.Kind.ERROR, pipeline.TIMEOUT: Failure.Kind.TIMEOUT}
# "ValueError: ..." as the runner writes a hook's exception (after "<title>: " when it decided the
# item); the exception's type names the error.
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*): ")
GAVE_UP_TYPE = "worker stopped"


def error_type(entry: dict[str, Any]) -> str:
    """What kind of failure a trail entry records: ``timeout``, the exception's type (``KeyError``),
    or the runner's code for it (``bad_return``)."""
    if entry.get("outcome") == pipeline.TIMEOUT:
        return "timeout"
    message = entry.get("message") or ""
    for title in (entry.get("label"), entry.get("hook")):
        if title and message.startswith(f"{title}: "):
            message = message[len(title) + 2 :]
            break
    match = _EXCEPTION.match(message)
    if match and entry.get("code") == "hook_error":
        return match.group(1)
    return entry.get("code") or "error"


def _failure(**fields: Any) -> Failure:
    fields["group"] = group_key(
        fields["stash_id"], fields.get("config_id"), fields["hook"], fields["error_type"], fields["config_version"]
    )
    return Failure(**fields)


def failures_of(runs: Iterable[PipelineRun]) -> list[Failure]:
    """The failures the trails of ``runs`` (unsaved, each with its ``content``) record."""
    found = []
    for run in runs:
        for entry in run.trail:
            kind = _KINDS.get(entry.get("outcome"))
            if kind is None:
                continue
            found.append(
                _failure(
                    stash_id=run.content.stash_id,
                    content_id=run.content_id,
                    revision=run.revision,
                    config_version=run.config_version,
                    config_id=entry.get("config_id"),
                    hook=entry.get("hook") or "",
                    label=entry.get("label") or "",
                    kind=kind,
                    error_type=error_type(entry)[:200],
                    message=entry.get("message") or "",
                    at=run.finished_at,
                )
            )
    return found


def record(runs: Iterable[PipelineRun]) -> int:
    """Keep the failures of ``runs`` (in the caller's transaction, with the runs); returns how many."""
    found = failures_of(runs)
    if found:
        Failure.objects.bulk_create(found)
    return len(found)


def record_gave_up(content_ids: Iterable[Any], now: datetime | None = None) -> int:
    """Keep a failure for each of these items, given up on (set ``failed``) just now."""
    content_ids = list(content_ids)
    if not content_ids:
        return 0
    now = now or timezone.now()
    rows = Content.objects.filter(pk__in=content_ids, status=Status.FAILED).values_list(
        "pk", "stash_id", "revision", "stash__config_version", "reason"
    )
    found = [
        _failure(
            stash_id=stash_id,
            content_id=pk,
            revision=revision,
            config_version=version,
            config_id=None,
            hook="",
            label="",
            kind=Failure.Kind.GAVE_UP,
            error_type=GAVE_UP_TYPE,
            message=reason,
            at=now,
        )
        for pk, stash_id, revision, version, reason in rows
    ]
    Failure.objects.bulk_create(found)
    return len(found)


# --- reading -------------------------------------------------------------------------------


def check_window(since: datetime | None, until: datetime | None) -> None:
    """Refuse a time window that ends before it starts (every face's filters: ``ValidationError`` on ``until``)."""
    if since is not None and until is not None and since > until:
        raise ValidationError({"until": _("“Until” must not come before “since”.")})


def selected(
    stash: Stash | None = None, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[Failure]:
    """The failures of ``stash`` (every stash's if None) seen from ``since`` up to ``until``."""
    failures = Failure.objects.all()
    if stash is not None:
        failures = failures.filter(stash=stash)
    if since is not None:
        failures = failures.filter(at__gte=since)
    if until is not None:
        failures = failures.filter(at__lte=until)
    return failures


@dataclass
class FailureGroup:
    """One group of failures: what they share, how many, when, and the latest as an example."""

    key: str
    stash: Stash
    hook: str
    label: str
    config_id: int | None
    kind: str
    error_type: str
    config_version: int
    count: int
    items: int
    first_seen: datetime
    last_seen: datetime
    example: Failure
    redriven_at: datetime | None = None

    @cached_property
    def example_run(self) -> PipelineRun | None:
        """The run that failed (its trail: a failure is kept with its run's time), if it is still kept."""
        example = self.example
        return (
            PipelineRun.objects.filter(content_id=example.content_id, revision=example.revision, finished_at=example.at)
            .order_by("-pk")
            .first()
        )


def groups(
    stash: Stash | None = None, since: datetime | None = None, until: datetime | None = None, limit: int = 200
) -> list[FailureGroup]:
    """The groups of the failures ``selected`` picks, the latest seen first, ``limit`` at most (two queries)."""
    return _grouped(selected(stash, since, until), limit)


def _grouped(failures: QuerySet[Failure], limit: int) -> list[FailureGroup]:
    rows = list(
        failures.order_by()
        .values("group")
        .annotate(
            count=Count("pk"),
            items=Count("content", distinct=True),
            first_seen=Min("at"),
            last_seen=Max("at"),
            example=Max("pk"),
            redriven_at=Max("redriven_at"),
        )
        .order_by("-last_seen")[:limit]
    )
    examples = Failure.objects.select_related("stash").in_bulk([row["example"] for row in rows])
    found = []
    for row in rows:
        example = examples[row["example"]]
        found.append(
            FailureGroup(
                key=row["group"],
                stash=example.stash,
                hook=example.hook,
                label=example.label,
                config_id=example.config_id,
                kind=example.kind,
                error_type=example.error_type,
                config_version=example.config_version,
                count=row["count"],
                items=row["items"],
                first_seen=row["first_seen"],
                last_seen=row["last_seen"],
                example=example,
                redriven_at=row["redriven_at"],
            )
        )
    return found


def group(key: str) -> FailureGroup | None:
    """The group ``key`` (all its failures); None if there is none."""
    found = _grouped(Failure.objects.filter(group=key), limit=1)
    if not found:
        return None
    return found[0]


def items_of(key: str) -> QuerySet[Content]:
    """The items with a failure in the group ``key``."""
    return Content.objects.filter(pk__in=Failure.objects.filter(group=key).values("content_id"))
