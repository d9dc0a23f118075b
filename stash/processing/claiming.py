"""Claiming items for a batch: a compare-and-set on ``pending`` that returns the claimed items.

``claim(ids, token, others_of, lease_until)`` claims the pending items among ``ids`` and, up to
``STASH_BATCH_SIZE`` in all, other items of the stashes ``others_of`` (``None``: those of ``ids``;
empty: none) that wait for their first run, and returns them, each with its stash, oldest first.

Single saves that arrive close together are judged together: the message of the first claims the
others, and a later message whose own items are taken claims what has come since, so the verdicts
never wait for the messages to be read one by one. A claim that fills its batch with others wakes
their stashes again: saves that published nothing (``publishing``) may still wait. Items tried before
are only ever claimed through their own message (one per message: see ``sweeping.sweep``), never
swept into a batch, and so are bulk items (``Content.bulk``): a live save's batch never takes on
bulk work. The other way round, a batch of bulk work first claims the live saves waiting in its
queue (``claim_live``), whichever of its stashes they belong to. Two workers reaching for one item
never both get it.

The claim and the read of what it claimed are one statement (``UPDATE ... RETURNING``) where the
database has it (PostgreSQL, SQLite 3.35+): a message that judges one item pays one round trip and
compiles no ORM query for it. Elsewhere the ORM updates, then reads.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, F, Field, OuterRef, Q, QuerySet

from stash.db import publishing
from stash.models import Content, Stash

Status = Content.Status

# stash id -> Stash, as of the config_version last seen (every change of a stash bumps it).
_stashes: dict[int, Stash] = {}


def claim(
    ids: Sequence[uuid.UUID | str], token: uuid.UUID, others_of: Collection[int] | None, lease_until: datetime
) -> list[Content]:
    """Claim and return the items of a batch under ``token``; see the module docstring."""
    claimed = take(ids, token, lease_until) if ids else []
    room = settings.STASH_BATCH_SIZE - len(claimed)
    if room > 0 and (ids if others_of is None else others_of):
        picked, others = _take_others(ids, others_of, room, token, lease_until)
        claimed += others
        if picked and len(picked) == room:
            publishing.wake(_queues({stash for _, stash in picked}, others))
    # Items saved together (a bulk submission) may share a created_at: they keep the order of ``ids``.
    position = {uuid.UUID(str(pk)): index for index, pk in enumerate(ids)}
    return sorted(claimed, key=lambda content: (content.created_at, position.get(content.pk, len(ids)), content.pk))


def _queues(stash_ids: set[int], claimed: list[Content]) -> dict[int, str]:
    """Each of ``stash_ids`` with its ``queue`` field, from the stashes of the items ``claimed``;
    a stash none of whose picked items this claim got (another took them first) is read."""
    queues = {content.stash_id: content.stash.queue for content in claimed}
    missing = stash_ids - queues.keys()
    if missing:
        queues.update(Stash.objects.filter(pk__in=missing).values_list("pk", "queue"))
    return {stash: queues[stash] for stash in sorted(stash_ids) if stash in queues}


def claim_live(queue: str, token: uuid.UUID, lease_until: datetime) -> list[Content]:
    """Claim up to ``STASH_BATCH_SIZE`` live saves waiting for their first run, oldest first, of
    the stashes whose messages go where a stash with ``queue`` (a ``queue`` field) sends its own:
    a batch of bulk work judges them ahead of itself."""
    effective = publishing.queue_name(queue)
    same_queue = Q(queue=effective) | Q(queue="") if effective == settings.STASH_QUEUE else Q(queue=effective)
    stashes = Stash.objects.filter(same_queue).values("pk")
    return _take_others([], stashes, settings.STASH_BATCH_SIZE, token, lease_until, oldest_first=True)[1]


def _take_others(
    ids: Sequence[uuid.UUID | str],
    others_of: Collection[int] | QuerySet[Stash, Any] | None,
    room: int,
    token: uuid.UUID,
    lease_until: datetime,
    oldest_first: bool = False,
) -> tuple[list[tuple[uuid.UUID, int]], list[Content]]:
    """Claim up to ``room`` live saves waiting for their first run in ``others_of`` (or the stashes
    of ``ids``); return the (id, stash id) picked, and the items claimed. Bulk items are only ever
    claimed through their own messages: a live save never waits on a batch of them."""
    stashes = others_of or Content.objects.filter(pk__in=ids).values("stash_id")
    waiting = (
        Content.objects.filter(status=Status.PENDING, attempts=0, bulk=False, stash_id__in=stashes)
        .exclude(pk__in=ids)
        .order_by(*(("created_at",) if oldest_first else ()))
    )
    if connection.vendor == "postgresql":
        # One statement: the rows are picked (those another worker is claiming passed over, never
        # waited for: two claims that lock the same rows in different orders would deadlock) and
        # claimed at once. ``= ANY(ARRAY(...))`` makes the pick an InitPlan, run once; as ``IN
        # (...)``, a LIMIT ... FOR UPDATE may be run again for each row and claim more than ``room``.
        pick, pick_params = waiting.values_list("pk", flat=True)[:room].query.sql_with_params()
        contents = _take_where(
            f"{connection.ops.quote_name(Content._meta.pk.column)} = ANY(ARRAY({pick} FOR UPDATE SKIP LOCKED))",
            list(pick_params),
            token,
            lease_until,
        )
        return [(content.pk, content.stash_id) for content in contents], contents
    others = waiting.values_list("pk", "stash_id")[:room]
    # A plain read first: most often there is nothing to take, and it costs no transaction.
    if not others.exists():
        return [], []
    if connection.features.has_select_for_update_skip_locked:
        others = others.select_for_update(skip_locked=True)  # as above
    with transaction.atomic():
        # Read, then write: as a subquery of the UPDATE, a LIMIT ... FOR UPDATE may be run again for
        # each row and claim more than ``room``.
        picked = list(others)
        return picked, take([pk for pk, _ in picked], token, lease_until) if picked else []


def waiting_stashes(now: datetime) -> dict[int, str]:
    """The stashes with items waiting for their first run under a lease that runs past ``now``
    (stash id: its ``queue`` field): one index probe per stash, however many items wait."""
    waiting = Content.objects.filter(
        stash=OuterRef("pk"), status=Status.PENDING, attempts=0, bulk=False, lease_until__gte=now
    )
    return dict(Stash.objects.filter(Exists(waiting)).order_by("pk").values_list("pk", "queue"))


def take(pks: Sequence[uuid.UUID | str], token: uuid.UUID, lease_until: datetime) -> list[Content]:
    """Claim the items among ``pks`` still ``pending`` and under ``STASH_MAX_ATTEMPTS`` (a compare-
    and-set: a duplicate delivery takes nothing), and return them, each with its stash."""
    if not can_return_from_update():
        Content.objects.filter(pk__in=pks, status=Status.PENDING, attempts__lt=settings.STASH_MAX_ATTEMPTS).update(
            status=Status.PROCESSING, lease_token=token, attempts=F("attempts") + 1, lease_until=lease_until
        )
        return list(Content.objects.filter(pk__in=pks, lease_token=token).select_related("stash"))
    quote = connection.ops.quote_name
    where = f"{quote(Content._meta.pk.column)} IN ({', '.join(['%s'] * len(pks))})"
    return _take_where(where, [Content._meta.pk.get_db_prep_save(pk, connection) for pk in pks], token, lease_until)


def _take_where(where: str, params: list[Any], token: uuid.UUID, lease_until: datetime) -> list[Content]:
    """``take`` the items that SQL ``where`` (with ``params``) selects, in one ``UPDATE ... RETURNING``."""
    contents = list(Content.objects.raw(*_take_statement(where, params, token, lease_until)))
    _attach_stashes(contents)
    return contents


def can_return_from_update() -> bool:
    """True where an ``UPDATE`` can return the rows it changed, subqueries included."""
    return connection.vendor == "postgresql" or (
        connection.vendor == "sqlite" and sqlite3.sqlite_version_info >= (3, 35)
    )


def _take_statement(
    where: str, where_params: list[Any], token: uuid.UUID, lease_until: datetime
) -> tuple[str, list[Any]]:
    meta, quote = Content._meta, connection.ops.quote_name

    def field(name: str) -> Field[Any, Any]:
        return cast("Field[Any, Any]", meta.get_field(name))  # a column of the table, not a relation's other end

    def column(name: str) -> str:
        return quote(field(name).column)

    def value(name: str, raw: object) -> Any:
        return field(name).get_db_prep_save(raw, connection)

    table, stashes = quote(meta.db_table), quote(Stash._meta.db_table)
    status, attempts = column("status"), column("attempts")
    sql = (
        f"UPDATE {table} SET {status} = %s, {column('lease_token')} = %s, {attempts} = {attempts} + 1, "
        f"{column('lease_until')} = %s "
        f"WHERE {where} AND {status} = %s AND {attempts} < %s "
        f"RETURNING *, (SELECT {stashes}.{quote('config_version')} FROM {stashes} "
        f"WHERE {stashes}.{quote('id')} = {table}.{column('stash')}) AS {quote('stash_version')}"
    )
    params = [
        Status.PROCESSING,
        value("lease_token", token),
        value("lease_until", lease_until),
        *where_params,
        Status.PENDING,
        settings.STASH_MAX_ATTEMPTS,
    ]
    return sql, params


def forget_stashes() -> None:
    _stashes.clear()


def _attach_stashes(contents: list[Content]) -> None:
    """Give each item its stash: kept per process while its ``config_version`` holds, else read
    again (one query for all that changed)."""
    # ``stash_version`` is a column of the claim's RETURNING (``_take_statement``), not a field.
    stale = {
        content.stash_id
        for content in contents
        if content.stash_id not in _stashes or _stashes[content.stash_id].config_version != content.stash_version  # type: ignore[attr-defined]
    }
    if stale:
        _stashes.update(Stash.objects.in_bulk(stale))
    for content in contents:
        content.stash = _stashes[content.stash_id]  # one read after the claim: the stash held then
