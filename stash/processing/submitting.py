"""Submitting: how every face saves what people and programs send, and how consumers read a queue."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from .. import dispatch
from ..exceptions import IdempotencyConflict, PayloadTooLarge
from ..models import Content, Stash, content_hash, lease_end, validate_payload

#: Items one bulk submission may carry.
BULK_LIMIT = 1000


def may_submit(user, stash) -> bool:
    """True if ``user`` (anonymous too) may submit to ``stash``: it takes anonymous submissions,
    or the user has ``stash.add_content``. (Whether the stash is active is ``submit``'s to say.)"""
    return stash.allow_anonymous or user.has_perm("stash.add_content")


def submittable_stashes(user):
    """The active stashes ``user`` may submit to, as a queryset."""
    stashes = Stash.objects.filter(is_active=True)
    return stashes if user.has_perm("stash.add_content") else stashes.filter(allow_anonymous=True)


def visible_contents(user):
    """The items ``user`` may read: every item with ``stash.view_content``, else their own."""
    if user.has_perm("stash.view_content"):
        return Content.objects.all()
    if not user.is_authenticated:
        return Content.objects.none()
    return Content.objects.filter(submitted_by=user)


def check_payload(stash: Stash, payload) -> None:
    """Raise unless ``payload`` may be submitted to ``stash``.

    ``ValidationError`` (on ``payload``) for anything but a JSON object that every database can
    store: no NUL characters, no infinite numbers, at most ``MAX_PAYLOAD_DEPTH`` levels deep.
    ``PayloadTooLarge`` when it is larger than the stash's ``max_payload_bytes``.
    """
    validate_payload(payload, None)
    try:
        validate_payload(payload, stash)
    except ValidationError as exc:  # the type is fine, so it is the size
        raise PayloadTooLarge(exc.message_dict["payload"][0]) from exc


def _submitter(user):
    return user if user is not None and user.is_authenticated else None


def _check_open(stash: Stash) -> None:
    if not stash.is_active:
        raise ValidationError({"stash": _("The stash %(slug)s is inactive and takes no submissions.")
                               % {"slug": stash.slug}})


def submit(stash: Stash, payload, user=None, source=Content.Source.API, idempotency_key=""):
    """Save ``payload`` as a new item of ``stash``; return ``(content, created)``.

    With an ``idempotency_key`` (authenticated submitters only), repeating the same stash and
    payload returns the item the key made first, with ``created`` False; the same key with another
    stash or payload raises ``IdempotencyConflict``. Raises ``ValidationError`` for an inactive
    stash, a bad payload, a key without a user or over 200 characters, and ``PayloadTooLarge``
    (see ``check_payload``).
    """
    user = _submitter(user)
    _check_open(stash)
    check_payload(stash, payload)
    if idempotency_key:
        if user is None:
            raise ValidationError({"idempotency_key": _("An idempotency key needs an authenticated submitter.")})
        limit = Content._meta.get_field("idempotency_key").max_length
        if len(idempotency_key) > limit:
            raise ValidationError({"idempotency_key": _("At most %(limit)d characters.") % {"limit": limit}})
        earlier = _keyed(user, idempotency_key)
        if earlier is not None:
            return _replayed(earlier, stash, payload), False
    content = Content(stash=stash, payload=payload, submitted_by=user, source=source,
                      idempotency_key=idempotency_key or "")
    try:
        with transaction.atomic():
            content.save()
    except IntegrityError:
        # Two requests with one key raced; the unique constraint let one through.
        earlier = _keyed(user, idempotency_key) if idempotency_key else None
        if earlier is None:
            raise
        return _replayed(earlier, stash, payload), False
    return content, True


def _keyed(user, key):
    return Content.objects.select_related("stash").filter(submitted_by=user, idempotency_key=key).first()


def _replayed(earlier: Content, stash: Stash, payload) -> Content:
    if earlier.stash_id != stash.pk or earlier.content_hash != content_hash(payload):
        raise IdempotencyConflict(_("This idempotency key was already used for another stash or payload "
                                    "(item %(id)s).") % {"id": earlier.pk})
    return earlier


def submit_many(stash: Stash, payloads, user=None, source=Content.Source.API) -> list[Content]:
    """Save ``payloads`` as new items of ``stash``, all or none, in one transaction; return them.

    Each payload is checked first (``check_payload``; errors name the item's index) and nothing
    is saved if any fails. One bulk insert sends no ``post_save``, so the ids are handed to the
    workers here: together, after commit, in chunks of ``STASH_BATCH_SIZE``.
    """
    if len(payloads) > BULK_LIMIT:
        raise ValidationError({"items": _("At most %(limit)d items per request.") % {"limit": BULK_LIMIT}})
    user = _submitter(user)
    _check_open(stash)
    errors = []
    for index, payload in enumerate(payloads):
        try:
            check_payload(stash, payload)
        except ValidationError as exc:
            errors.extend(f"{index}: {message}" for message in exc.messages)
        except PayloadTooLarge as exc:
            raise PayloadTooLarge(_("Item %(index)d: %(reason)s") % {"index": index, "reason": exc}) from exc
    if errors:
        raise ValidationError({"items": errors})
    # What Content.save() sets on a new item; the other fields' defaults are a pending revision 1.
    lease_until = lease_end()
    contents = [Content(stash=stash, payload=payload, content_hash=content_hash(payload), lease_until=lease_until,
                        submitted_by=user, source=source) for payload in payloads]
    with transaction.atomic():
        Content.objects.bulk_create(contents)
        dispatch.send_on_commit([content.pk for content in contents])
    return contents


def edit(content: Content, payload) -> Content:
    """Replace ``content``'s payload; a changed payload is a new revision, judged again.

    Raises like ``check_payload``; saving an unchanged payload changes nothing.
    """
    check_payload(content.stash, payload)
    content.payload = payload
    content.save()
    return content


def queue_page(stash: Stash, after: int = 0, limit: int = 100) -> list[Content]:
    """Up to ``limit`` accepted items of ``stash`` numbered after ``after``, in queue order.

    Numbers are given at acceptance under the stash's row lock, so they commit in number order:
    a consumer that passes the last number it read as ``after`` never misses or repeats an item.
    An item edited after acceptance leaves the queue and, accepted again, comes back later with a
    new number.
    """
    return list(Content.objects.accepted().filter(stash=stash, queue_seq__gt=after)
                .select_related("stash").order_by("queue_seq")[:limit])
