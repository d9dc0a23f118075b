"""Submitting: how every face saves what people and programs send, and how consumers read a queue."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_backends, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from stash.core.exceptions import IdempotencyConflict, PayloadTooLarge
from stash.db import bulk_sql, compat, publishing
from stash.models import Content, Stash, backpressure, content_hash, lease_end, validate_payload

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

#: Items one bulk submission may carry.
BULK_LIMIT = 1000

#: The permission that submitting needs, where a stash takes no anonymous submissions.
ADD_PERMISSION = "stash.add_content"


def may_submit(user: User | AnonymousUser, stash: Stash) -> bool:
    """True if ``user`` (anonymous too) may submit to ``stash``: it takes anonymous submissions,
    or the user has ``stash.add_content``. (Whether the stash is active is ``submit``'s to say.)

    A stash from ``submission_stash(user, slug)`` answers without a query of its own when the user may.
    """
    return stash.allow_anonymous or getattr(stash, "submitter_may_add", False) or user.has_perm(ADD_PERMISSION)


def submission_stash(user: User | AnonymousUser, slug: str, idempotency_key: str = "") -> Stash | None:
    """The stash ``slug`` (None if there is none), fetched with what a submission by ``user`` needs
    to know, so that finding the stash, checking the permission and looking the key up take one
    query, not four.

    The stash carries ``submitter_may_add`` when ``user`` is an active non-superuser and Django's
    ``ModelBackend`` is the only authentication backend that answers permissions (the login
    lockout's answers none): True if the user holds ``stash.add_content`` directly or through a
    group, which is that backend's rule. (For anyone else ``has_perm`` answers with no query, or by
    their own backends.) Given an ``idempotency_key``, it also carries ``key_used``: an item of
    ``user``'s has that key. Both are read with the stash, for this request only, so a revoked
    permission counts from the next.
    """
    held = keyed = False
    if user.is_authenticated:
        answering = [type(backend) for backend in get_backends() if hasattr(backend, "has_perm")]
        held = user.is_active and not user.is_superuser and answering == [ModelBackend]
        keyed = bool(idempotency_key) and not _key_problem(user, idempotency_key)
    sql, attnames = _submission_sql(connection.vendor, held, keyed)
    app_label, codename = ADD_PERMISSION.split(".")
    params = [
        *([user.pk, codename, app_label] * 2 if held else []),
        *([user.pk, idempotency_key] if keyed else []),
        slug,
    ]
    # The one query of every submission besides the insert: planning it cost more than running it.
    with compat.preparing_cursor(connection) as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    stash = Stash.from_db(connection.alias, attnames, row[: len(attnames)])
    extra = iter(row[len(attnames) :])
    if held:
        stash.submitter_may_add = bool(next(extra))
    if keyed:
        stash.key_used = bool(next(extra))
    return stash


@functools.cache
def _submission_sql(vendor: str, held: bool, keyed: bool) -> tuple[str, list[str]]:
    """The query of ``submission_stash`` and the attribute names of the stash's columns in it.

    Written out, and built once per process: it is the one query of every submission besides the
    insert, and the ORM's form of it costs more to build and compile than to run."""
    qn = connection.ops.quote_name
    fields = Stash._meta.concrete_fields
    selected = [f"s.{qn(field.column)}" for field in fields]
    if held:
        selected.append(f"({_held_sql()})")
    if keyed:
        content = Content._meta
        selected.append(
            f"EXISTS (SELECT 1 FROM {qn(content.db_table)} k "
            f"WHERE k.{qn(content.get_field('submitted_by').column)} = %s "
            f"AND k.{qn(content.get_field('idempotency_key').column)} = %s)"
        )
    sql = (
        f"SELECT {', '.join(selected)} FROM {qn(Stash._meta.db_table)} s "
        f"WHERE s.{qn(Stash._meta.get_field('slug').column)} = %s"
    )
    return sql, [field.attname for field in fields]


def _held_sql() -> str:
    """SQL that is true when a user holds a permission directly or through a group, ``ModelBackend``'s
    rule for an active user; its parameters are (user id, codename, app label), twice.

    Written out because the ORM's forms of it (``User.objects.with_perm()``, or ``Permission``
    filtered on ``user`` or ``group__user``) cost more to build, compile and plan than all the
    other queries of a submission. The user model's tables and columns are read from it, as it may
    be swapped; those of ``Permission`` and ``ContentType`` are Django's own.
    """
    qn = connection.ops.quote_name
    permission, content_type = qn(Permission._meta.db_table), qn(ContentType._meta.db_table)

    def holds(rows: str, user_column: str, permission_column: str) -> str:
        return (
            f"EXISTS (SELECT 1 FROM {rows} JOIN {permission} p ON p.id = {permission_column} "
            f"JOIN {content_type} c ON c.id = p.content_type_id "
            f"WHERE {user_column} = %s AND p.codename = %s AND c.app_label = %s)"
        )

    direct = get_user_model()._meta.get_field("user_permissions")
    member = get_user_model()._meta.get_field("groups")
    granted = Group._meta.get_field("permissions")
    through_groups = (
        f"{qn(member.m2m_db_table())} m JOIN {qn(granted.m2m_db_table())} g "
        f"ON g.{qn(granted.m2m_column_name())} = m.{qn(member.m2m_reverse_name())}"
    )
    directly = holds(
        f"{qn(direct.m2m_db_table())} d", f"d.{qn(direct.m2m_column_name())}", f"d.{qn(direct.m2m_reverse_name())}"
    )
    by_group = holds(through_groups, f"m.{qn(member.m2m_column_name())}", f"g.{qn(granted.m2m_reverse_name())}")
    return f"{directly} OR {by_group}"


def submittable_stashes(user: User | AnonymousUser) -> QuerySet[Stash]:
    """The active stashes ``user`` may submit to, as a queryset."""
    stashes = Stash.objects.filter(is_active=True)
    return stashes if user.has_perm(ADD_PERMISSION) else stashes.filter(allow_anonymous=True)


def visible_contents(user: User | AnonymousUser) -> QuerySet[Content]:
    """The items ``user`` may read: every item with ``stash.view_content``, else their own."""
    if user.has_perm("stash.view_content"):
        return Content.objects.all()
    if not user.is_authenticated:
        return Content.objects.none()
    return Content.objects.filter(submitted_by=user)


def check_payload(stash: Stash, payload: Any) -> bytes:
    """Raise unless ``payload`` may be submitted to ``stash``; return its canonical JSON
    (``models.canonical_json``), for ``Content.save`` and ``content_hash`` to reuse.

    ``ValidationError`` (on ``payload``) for anything but a JSON object that every database can
    store: no NUL characters or unpaired surrogates, no infinite numbers, at most
    ``MAX_PAYLOAD_DEPTH`` levels deep. ``PayloadTooLarge`` when it is larger than the stash's
    ``max_payload_bytes``.
    """
    try:
        return validate_payload(payload, stash)
    except ValidationError as exc:
        if exc.error_dict["payload"][0].code == "too_large":
            raise PayloadTooLarge(exc.message_dict["payload"][0]) from exc
        raise


def _submitter(user: User | AnonymousUser | None) -> User | None:
    return user if user is not None and user.is_authenticated else None


def _check_open(stash: Stash) -> None:
    if not stash.is_active:
        raise ValidationError(
            {"stash": _("The stash %(slug)s is inactive and takes no submissions.") % {"slug": stash.slug}}
        )


def submit(
    stash: Stash,
    payload: Any,
    user: User | AnonymousUser | None = None,
    source: str = Content.Source.CODE,
    idempotency_key: str = "",
    canonical: bytes | None = None,
) -> tuple[Content, bool]:
    """Save ``payload`` as a new item of ``stash``; return ``(content, created)``. ``source``: the
    face it came through (each passes its own; code, by default).

    With an ``idempotency_key`` (authenticated submitters only), repeating the same stash and
    payload returns the item the key made first, with ``created`` False; the same key with another
    stash or payload raises ``IdempotencyConflict``. Raises ``ValidationError`` for an inactive
    stash, a bad payload, a key without a user or over 200 characters, and ``PayloadTooLarge``
    (see ``check_payload``). A caller that ran ``check_payload`` already passes what it returned
    as ``canonical``, and the payload is not checked again.
    """
    content = Content(stash=stash, payload=payload, idempotency_key=idempotency_key or "")
    return submit_item(content, user, source, canonical)


def submit_item(
    content: Content,
    user: User | AnonymousUser | None = None,
    source: str = Content.Source.CODE,
    canonical: bytes | None = None,
) -> tuple[Content, bool]:
    """Save ``content``, a new item built with its stash, payload and idempotency key (by a form,
    say), as ``submit`` does; return ``(content, created)`` as ``submit`` does."""
    user = _submitter(user)
    stash, payload, idempotency_key = content.stash, content.payload, content.idempotency_key
    _check_open(stash)
    if canonical is None:
        canonical = check_payload(stash, payload)
    if idempotency_key:
        problem = _key_problem(user, idempotency_key)
        if problem:
            raise ValidationError({"idempotency_key": problem})
        # A stash from submission_stash() has looked the key up already.
        earlier = _keyed(user, idempotency_key) if getattr(stash, "key_used", True) else None
        if earlier is not None:
            return _replayed(earlier, stash, payload, canonical), False
    content.submitted_by, content.source = user, source
    try:
        # Only a key can break the insert (see below): then a savepoint keeps an enclosing
        # transaction usable. Outside one the insert commits alone, with no BEGIN and COMMIT.
        savepoint = idempotency_key and transaction.get_connection().in_atomic_block
        with transaction.atomic() if savepoint else nullcontext():
            content.save(canonical=canonical)
    except IntegrityError:
        # Two requests with one key raced; the unique constraint let one through.
        earlier = _keyed(user, idempotency_key) if idempotency_key else None
        if earlier is None:
            raise
        return _replayed(earlier, stash, payload, canonical), False
    return content, True


def check_key(user: User | AnonymousUser | None, idempotency_key: str) -> None:
    """Raise ``ValidationError`` (on ``idempotency_key``) unless ``user`` may make a new item with
    ``idempotency_key``: what ``submit`` checks, and that the key made no item yet."""
    user = _submitter(user)
    problem = _key_problem(user, idempotency_key)
    earlier = None if problem else _keyed(user, idempotency_key)
    if earlier is not None:
        problem = _("This idempotency key was already used (item %(id)s).") % {"id": earlier.pk}
    if problem:
        raise ValidationError({"idempotency_key": problem})


def _key_problem(user: User | AnonymousUser | None, key: str) -> str:
    """Why ``user`` may not submit with the idempotency key ``key``, or "" if they may."""
    if user is None or not user.is_authenticated:
        return _("An idempotency key needs an authenticated submitter.")
    limit = Content._meta.get_field("idempotency_key").max_length
    if limit is not None and len(key) > limit:
        return _("At most %(limit)d characters.") % {"limit": limit}
    if "\x00" in key:
        return _("An idempotency key cannot contain a NUL character.")
    return ""


def _keyed_items(user: User | None, key: str) -> QuerySet[Content]:
    return Content.objects.filter(submitted_by=user, idempotency_key=key)


def _keyed(user: User | None, key: str) -> Content | None:
    return _keyed_items(user, key).select_related("stash", "submitted_by").first()


def _replayed(earlier: Content, stash: Stash, payload: Any, canonical: bytes) -> Content:
    if earlier.stash_id != stash.pk or earlier.content_hash != content_hash(payload, canonical):
        raise IdempotencyConflict(
            _("This idempotency key was already used for another stash or payload (item %(id)s).") % {"id": earlier.pk}
        )
    return earlier


class InvalidItems(ValidationError):
    """Some payloads of a bulk submission are invalid: ``by_index`` maps each one's index to its
    messages; as a ``ValidationError`` it says ``{"items": ["<index>: <message>", ...]}``."""

    def __init__(self, by_index: dict[int, list[str]]):
        super().__init__(
            {"items": [f"{index}: {message}" for index, messages in by_index.items() for message in messages]}
        )
        self.by_index = by_index


def submit_many(
    stash: Stash, payloads: Sequence[Any], user: User | AnonymousUser | None = None, source: str = Content.Source.CODE
) -> list[Content]:
    """Save ``payloads`` as new items of ``stash``, all or none, in one transaction; return them.

    ``StashFull`` when the stash has no room for all of them (``max_waiting``). Each payload is
    checked first (``check_payload``; ``InvalidItems`` names the indexes) and
    nothing is saved if any fails. One bulk insert sends no ``post_save``, so the ids are handed to the
    workers here: together, after commit, in chunks of ``STASH_BATCH_SIZE``, as bulk work (``Content.bulk``:
    the live saves of the queue are judged ahead of it).
    """
    if len(payloads) > BULK_LIMIT:
        raise ValidationError({"items": _("At most %(limit)d items per request.") % {"limit": BULK_LIMIT}})
    user = _submitter(user)
    _check_open(stash)
    backpressure.check_room(stash, adding=len(payloads))  # all of the call or none of it
    errors: dict[int, list[str]] = {}
    canonicals: list[bytes] = []
    for index, payload in enumerate(payloads):
        try:
            canonicals.append(check_payload(stash, payload))
        except ValidationError as exc:
            errors[index] = exc.messages
        except PayloadTooLarge as exc:
            raise PayloadTooLarge(_("Item %(index)d: %(reason)s") % {"index": index, "reason": exc}) from exc
    if errors:
        raise InvalidItems(errors)
    # What Content.save() sets on a new item; the other fields' defaults are a pending revision 1.
    # Each item is a copy of one: building a thousand with Content(...) costs more than inserting them.
    template = Content(stash=stash, lease_until=lease_end(), submitted_by=user, source=source, bulk=True)
    contents = [
        _new_item(template, payload, canonical) for payload, canonical in zip(payloads, canonicals, strict=True)
    ]
    # By COPY on PostgreSQL, one prepared INSERT on SQLite: compiling an INSERT of 1,000 rows costs
    # more than the rest of the call. Prepared before the transaction: on SQLite it holds the one
    # write lock, which a worker's claim of a live save waits for.
    insert = bulk_sql.prepare_insert(Content, contents)
    with transaction.atomic():
        insert()
        # Bulk work publishes its own messages (no stash: it never joins a live save's message),
        # and live saves are judged ahead of it (see ``judging``).
        publishing.send_on_commit([content.pk for content in contents], queue=stash.queue)
    return contents


def _new_item(template: Content, payload: Any, canonical: bytes) -> Content:
    content = copy.copy(template)
    content.pk = Content._meta.pk.get_default()
    content.payload, content.content_hash = payload, content_hash(payload, canonical)
    return content


def edit_payload(content: Content, payload: Any, canonical: bytes | None = None) -> Content:
    """Replace ``content``'s payload; a changed payload is a new revision, judged again.

    Raises like ``check_payload`` (unless given the ``canonical`` JSON it returned); saving an
    unchanged payload changes nothing.
    """
    if canonical is None:
        canonical = check_payload(content.stash, payload)
    content.payload = payload
    content.save(canonical=canonical)
    return content


def queue_page(stash: Stash, after: int = 0, limit: int = 100) -> list[Content]:
    """Up to ``limit`` accepted items of ``stash`` numbered after ``after``, in queue order.

    Numbers are given at acceptance under the stash's row lock, so they commit in number order:
    a consumer that passes the last number it read as ``after`` never misses or repeats an item.
    An item edited after acceptance leaves the queue and, accepted again, comes back later with a
    new number.
    """
    return list(
        Content.objects.accepted()
        .filter(stash=stash, queue_seq__gt=after)
        .select_related("stash")
        .order_by("queue_seq")[:limit]
    )
