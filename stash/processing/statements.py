"""Statements of reasons (DSA Art. 17): the one place they are built, from each stash's policy.

- ``record(items, kind, ...)`` writes a statement for each rejected or held item, when its verdict
  is recorded: by the worker (``judging``, kind ``hook``), a reviewer (``reviewing``), the review
  deadline (``expiry``) or an appeal.
- ``end(items)`` notes that the restriction on items was lifted (a held item approved, a rejection
  reversed); ``current(content)`` is the statement an item's submitter is shown.
- ``preview(stash, policy, items)`` shows what a policy being edited would say; nothing is saved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import F, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from stash.core import dsa, pipeline, registry, statements
from stash.db.versioning import one_change
from stash.models import Content, HookConfig, PipelineRun, Stash, Statement, validate_statement_policy

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

Status = Content.Status
#: The statuses that restrict an item: only these get a statement.
RESTRICTING = (Status.REJECTED, Status.HELD)
#: The reason code of a reviewer's decision on an item no hook rejected or held.
REVIEWED_CODE = "reviewed"
#: The reason of a decision no hook made, and of a hook that failed, as the submitter reads it.
REVIEWED_REASON = "a moderator decided it breaks the rules"
FAILED_REASON = "an automated check could not check it"
#: The longest facts a statement keeps of a reason or an appeal's note.
_FACT_MAX = 1000
#: A trail entry's outcomes that decide a run (the last entry of a run that stopped).
_DECIDING = (pipeline.DROPPED, pipeline.HELD, pipeline.ERROR, pipeline.TIMEOUT)


def record(
    items: Iterable[Content],
    kind: str,
    *,
    reviewer: User | None = None,
    note: str = "",
    now: datetime | None = None,
    decisions: Mapping[Any, Mapping[str, Any]] | None = None,
) -> list[Statement]:
    """Write the statement of each rejected or held item of ``items`` (others are skipped), in one
    ``bulk_create``, and return them.

    ``kind``: a ``Statement.Kind``; ``reviewer``: who decided (kind ``reviewer`` or ``appeal``);
    ``note`` is kept in the facts for kind ``appeal`` only (the answer its submitter reads: a
    review note stays with the review). The facts (the hook, its reason code, its reason, the field) come
    from ``decisions`` (item pk: the deciding trail entry, as ``TrailEntry.as_dict`` gives it;
    judging has it at hand) or else from each item's last run of its revision (one query).
    A decision other than a hook's replaces the one before: the items' open statements are
    ended first (``end``, one update). The items' ``stash`` should be loaded (``select_related``).
    """
    items = [item for item in items if item.status in RESTRICTING]
    if not items:
        return []
    now = now or timezone.now()
    if decisions is None:
        decisions = _deciding_entries(items)
    if kind != Statement.Kind.HOOK:
        end(items, now)  # the statement of the decision this one replaces (a hold, a rejection appealed)
    built = _build(items, kind, lambda stash: stash.statement_policy, decisions, reviewer, note, now)
    return Statement.objects.bulk_create(built)


def end(items: Iterable[Content], now: datetime | None = None) -> int:
    """Note that the restriction on ``items`` was lifted at ``now``: their open statements get
    ``ended_at`` (one update). Returns how many statements it ended."""
    ids = [item.pk for item in items]
    if not ids:
        return 0
    return Statement.objects.filter(content_id__in=ids, ended_at=None).update(ended_at=now or timezone.now())


def current(content: Content) -> Statement | None:
    """The statement ``content``'s submitter is shown: the latest for its current revision, while
    the item is rejected or held (None otherwise)."""
    if content.status not in RESTRICTING:
        return None
    return (
        Statement.objects.filter(content=content, revision=content.revision)
        .select_related("hook_config")
        .order_by("-decided_at", "-pk")
        .first()
    )


def preview(stash: Stash, policy: Mapping[str, Any], items: Iterable[Content]) -> list[Statement]:
    """The statements ``items`` (of ``stash``, rejected or held) would get under ``policy``: built,
    never saved. Kind ``reviewer`` for items a person decided, ``hook`` otherwise."""
    items = [item for item in items if item.status in RESTRICTING]
    decisions = _deciding_entries(items)
    built = []
    for item in items:
        item.stash = stash
        kind = Statement.Kind.REVIEWER if item.reviewed_by_id else Statement.Kind.HOOK
        built += _build([item], kind, lambda _stash: policy, decisions, item.reviewed_by, item.review_note, None)
    return built


def for_stash(stash: Stash) -> QuerySet[Statement]:
    """The statements of ``stash``'s items, newest first."""
    return Statement.objects.filter(content__stash=stash)


def known_codes(stash: Stash) -> list[str]:
    """The reason codes a policy for ``stash`` may name, sorted: those its policy has, those its
    items' statements and recent runs gave, and those its hooks declare (``reason_codes``)."""
    codes = set((stash.statement_policy or {}).get("codes") or {})
    codes.update(
        Statement.objects.filter(content__stash=stash).order_by().values_list("reason_code", flat=True).distinct()
    )
    for name in HookConfig.objects.filter(stash=stash).values_list("hook", flat=True):
        if registry.is_registered(name):
            codes.update(getattr(registry.get(name), "reason_codes", ()))
    runs = PipelineRun.objects.filter(content__stash=stash, outcome__in=RESTRICTING).order_by("-pk")[:200]
    for trail in runs.values_list("trail", flat=True):
        if trail:
            codes.add(trail[-1].get("code") or "")
    codes.discard("")
    return sorted(codes)


def _deciding_entries(items: list[Content]) -> dict[Any, Mapping[str, Any]]:
    """Item pk: the trail entry that rejected or held it in its last run of its revision (one query)."""
    entries: dict[Any, Mapping[str, Any]] = {}
    revisions = {item.pk: item.revision for item in items}
    runs = (
        PipelineRun.objects.filter(content_id__in=list(revisions), outcome__in=RESTRICTING)
        .order_by("content_id", "-finished_at", "-pk")
        .values_list("content_id", "revision", "trail")
    )
    for content_id, revision, trail in runs:
        if content_id in entries or revision != revisions.get(content_id) or not trail:
            continue
        last = trail[-1]
        if last.get("outcome") in _DECIDING:
            entries[content_id] = last
    return entries


def _reason(entry: Mapping[str, Any]) -> str:
    """The reason a submitter may read: a filter's own, or plain words for a failure or a person."""
    if not entry:
        return REVIEWED_REASON
    if entry.get("outcome") in (pipeline.ERROR, pipeline.TIMEOUT):
        return FAILED_REASON  # the failure's text is for staff: it may name internals
    return str(entry.get("message") or "")


def _build(
    items: list[Content],
    kind: str,
    policy_of: Callable[[Stash], Mapping[str, Any] | None],
    decisions: Mapping[Any, Mapping[str, Any]],
    reviewer: User | None,
    note: str,
    now: datetime | None,
) -> list[Statement]:
    now = now or timezone.now()
    built = []
    for item in items:
        stash = item.stash
        entry = decisions.get(item.pk) or {}
        by_hook = bool(entry)
        code = str(entry.get("code") or "") or (REVIEWED_CODE if kind == Statement.Kind.REVIEWER else "")
        policy_entry = statements.entry_for(policy_of(stash), code)
        held = item.status == Status.HELD
        restriction = "held" if held else policy_entry["restriction"]
        if restriction == "held" and not held:
            restriction = "removed"  # a rejection is no hold, whatever the policy says
        facts: dict[str, Any] = {
            "hook": str(entry.get("label") or entry.get("hook") or ""),
            "code": code,
            "reason": _reason(entry)[:_FACT_MAX],
            "field": str(entry.get("field") or ""),
        }
        if note and kind == Statement.Kind.APPEAL:
            facts["note"] = note[:_FACT_MAX]  # an appeal's note is the submitter's answer; a review note stays inside
        placeholders = {**facts, "restriction": restriction, "stash": stash.name or stash.slug}
        text = statements.render(policy_entry["text"], placeholders)
        appeal_until = None
        if not held and stash.appeal_days > 0 and kind != Statement.Kind.APPEAL:  # an appeal's answer is final
            appeal_until = now + timedelta(days=stash.appeal_days)
        built.append(
            Statement(
                content=item,
                revision=item.revision,
                kind=kind,
                restriction=restriction,
                text=text[: statements.ENTRY_KEYS["text"] * 2],
                reason_code=code[:100],
                facts=facts,
                automated_detection=by_hook,
                automated_decision=kind in (Statement.Kind.HOOK, Statement.Kind.EXPIRY),
                ground=policy_entry["ground"],
                ground_reference=policy_entry["reference"],
                ground_url=policy_entry["url"],
                category=policy_entry["category"],
                decided_at=now,
                hook_config_id=item.decided_by_id if by_hook else None,
                reviewer=reviewer if kind in (Statement.Kind.REVIEWER, Statement.Kind.APPEAL) else None,
                appeal_until=appeal_until,
            )
        )
    return built


#: The fields of a statement as exported (JSON Lines, the API's list).
EXPORT_FIELDS = (
    "id",
    "content_id",
    "revision",
    "kind",
    "text",
    "restriction",
    "reason_code",
    "facts",
    "automated_detection",
    "automated_decision",
    "ground",
    "ground_reference",
    "ground_url",
    "category",
    "decided_at",
    "appeal_until",
    "ended_at",
)


def exported(stash: Stash | None = None, since: datetime | None = None) -> QuerySet[Statement]:
    """The statements to export, oldest first: of ``stash`` (all stashes: None), decided at or after ``since``."""
    found = Statement.objects.all()
    if stash is not None:
        found = found.filter(content__stash=stash)
    if since is not None:
        found = found.filter(decided_at__gte=since)
    return found.order_by("decided_at", "id")


def export_rows(
    stash: Stash | None = None, since: datetime | None = None, fmt: str = "jsonl"
) -> Iterator[dict[str, Any]]:
    """Each statement of ``exported(stash, since)`` as plain data, streamed (``iterator``): ``fmt``
    ``jsonl`` gives stash's own fields, ``dsa`` the DSA Transparency Database's statement
    (``core.dsa.to_dsa``). Raises ``ValueError`` for another ``fmt``."""
    if fmt not in ("jsonl", "dsa"):
        raise ValueError(f"unknown format {fmt!r}: dsa or jsonl")
    rows = exported(stash, since).values(*EXPORT_FIELDS, content_created_at=F("content__created_at"))
    for row in rows.iterator(chunk_size=1000):
        if fmt == "dsa":
            yield dsa.to_dsa(row)
        else:
            row.pop("content_created_at")
            row["content_id"] = str(row["content_id"])
            for key in ("decided_at", "appeal_until", "ended_at"):
                row[key] = row[key].isoformat() if row[key] else None
            yield row


def save_policy(stash: Stash, policy: Mapping[str, Any]) -> None:
    """Make ``policy`` the statement policy of ``stash``: one change of the stash (its version moves
    and is recorded, as any change of its settings). Raises ``ValidationError`` listing what is
    wrong with ``policy`` (``core.statements.policy_errors``), saving nothing."""
    validate_statement_policy(policy)
    with one_change(note="statement policy"):
        Stash.lock_one(stash.pk)
        stash.statement_policy = dict(policy)
        stash.save(update_fields=["statement_policy", "updated_at"])


def recent_restricted(stash: Stash, limit: int = 20) -> list[Content]:
    """The latest ``limit`` rejected or held items of ``stash``, newest first: what a preview may use."""
    return list(
        Content.objects.filter(stash=stash, status__in=RESTRICTING)
        .select_related("reviewed_by")
        .order_by("-created_at", "-pk")[:limit]
    )


def parse_since(value: str) -> datetime:
    """``value`` (YYYY-MM-DD, or an ISO 8601 date and time) as an aware datetime in UTC, the form every
    database takes; ``ValueError`` if it is neither, or outside the years a datetime holds."""
    try:
        moment = parse_datetime(value)
        if moment is None:
            day = parse_date(value)
            if day is None:
                raise ValueError(value)
            moment = datetime.combine(day, time.min)
        moment = timezone.make_aware(moment) if timezone.is_naive(moment) else moment
        return moment.astimezone(UTC)
    except OverflowError as exc:  # an offset that pushes the time past year 1 or 9999
        raise ValueError(value) from exc
