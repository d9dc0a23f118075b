"""Shadows of a stash: start one (a draft document, or a saved version) on a share of its live saves, stop it,
promote it to be the live pipeline; what runs them is ``shadow_runs``, what they found ``shadow_reports``.

    shadow = start(stash, document=draft, percent=50, count=1000, user=user)
    shadow = start(stash, version=3, percent=100, minutes=60)
    stop(shadow)
    plan = promote(shadow)                  # one new version, golden examples checked (ImportPlan)

Bad input raises ``ValidationError`` naming the field (``percent``, ``count``, ``minutes``, ``document``,
``version``) or ``InvalidDocument`` naming each fault of the document; a second shadow while one runs,
stopping one that has ended and promoting one twice raise ``ShadowConflict``. Nothing changes then.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from stash.core.exceptions import StashError
from stash.models import Shadow, Stash
from stash.processing import shadow_runs
from stash.processing.importing import ImportPlan, import_document, planned_document

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

#: The most items one shadow may judge, and the longest it may run.
MAX_COUNT = 100_000
MAX_MINUTES = 7 * 24 * 60

Status = Shadow.Status


class ShadowConflict(StashError):
    """The stash's shadows are not as the request needs them (one runs already; this one has ended
    or was promoted): nothing was changed."""


def start(
    stash: Stash,
    *,
    document: Any = None,
    version: Any = None,
    percent: Any,
    count: Any = None,
    minutes: Any = None,
    user: User | AnonymousUser | None = None,
) -> Shadow:
    """Start a shadow of ``stash`` running ``document`` (a pipeline document, as an export or a draft
    has it) or its saved ``version`` (a number), on ``percent`` (1-100) of its live saves, until it
    has judged ``count`` items or ``minutes`` have passed (one of them at least). See the module
    docstring for what it raises."""
    if (document is None) == (version is None):
        raise ValidationError({"document": [_("Give a pipeline document or a version number (one of them).")]})
    percent = _whole(percent, "percent", 1, 100, required=True)
    count = _whole(count, "count", 1, MAX_COUNT)
    minutes = _whole(minutes, "minutes", 1, MAX_MINUTES)
    if count is None and minutes is None:
        raise ValidationError({"count": [_("Give a count of items, a number of minutes, or both.")]})
    if version is not None:
        number = _whole(version, "version", 1, None, required=True)
        assert number is not None  # required
        recorded = stash.versions.filter(number=number).values_list("document", flat=True).first()
        if recorded is None:
            raise ValidationError(
                {"version": [_("%(stash)s has no version %(number)d.") % {"stash": stash.slug, "number": number}]}
            )
        recorded = {key: value for key, value in recorded.items() if key != "examples"}
    else:
        number = None
        recorded = planned_document(stash, document)
    shadow_runs.finish_expired()
    now = timezone.now()
    shadow = Shadow(
        stash=stash,
        document=recorded,
        version=number,
        percent=percent,
        count=count,
        ends_at=now + timedelta(minutes=minutes) if minutes is not None else None,
        started_by=user if user is not None and user.is_authenticated else None,
        started_at=now,
    )
    try:
        with transaction.atomic():
            shadow.save()
    except IntegrityError:
        raise ShadowConflict(
            _("A shadow of %(stash)s is running: stop it before starting another.") % {"stash": stash.slug}
        ) from None
    shadow_runs.forget()
    return shadow


def _whole(value: Any, field: str, low: int, high: int | None, required: bool = False) -> int | None:
    """``value`` as a whole number from ``low`` to ``high`` (None: no bound), else ``ValidationError`` on ``field``."""
    if value is None or value == "":
        if required:
            raise ValidationError({field: [_("This field is required.")]})
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
        raise ValidationError({field: [_("Must be a whole number.")]})
    number = int(value)
    if number < low or (high is not None and number > high):
        bounds = {"low": low, "high": high}
        message = _("Must be from %(low)d to %(high)d.") if high is not None else _("Must be %(low)d or more.")
        raise ValidationError({field: [message % bounds]})
    return number


def shadows_of(stash: Stash) -> QuerySet[Shadow]:
    """The stash's shadows, newest first; those past their end time are finished first."""
    shadow_runs.finish_expired()
    return stash.shadows.select_related("started_by").order_by("-started_at", "-pk")


def running_shadow(stash: Stash) -> Shadow | None:
    """The stash's running shadow, if one runs."""
    return shadows_of(stash).filter(status=Status.RUNNING).first()


def stop(shadow: Shadow) -> Shadow:
    """Stop ``shadow`` (it records nothing more; its report stays); ``ShadowConflict`` if it is not running."""
    shadow_runs.finish_expired()
    stopped = Shadow.objects.filter(pk=shadow.pk, status=Status.RUNNING).update(
        status=Status.STOPPED, ended_at=timezone.now()
    )
    shadow.refresh_from_db()
    if not stopped:
        raise ShadowConflict(
            _("This shadow is not running: it is %(status)s.") % {"status": shadow.get_status_display()}
        )
    shadow_runs.forget()
    return shadow


def promote(shadow: Shadow) -> ImportPlan:
    """Make ``shadow``'s pipeline the live one of its stash, as one change: one new version, the stash's
    golden examples checked first (``import_document``: ``ExamplesBroken`` when its stash blocks a change
    that breaks one, and nothing changes). A running shadow ends. ``ShadowConflict`` if it was promoted."""
    if shadow.status == Status.PROMOTED:
        raise ShadowConflict(_("This shadow was promoted already."))
    plan = import_document(shadow.stash, shadow.document, note=_("promote of shadow %(id)d") % {"id": shadow.pk})
    Shadow.objects.filter(pk=shadow.pk).exclude(status=Status.PROMOTED).update(
        status=Status.PROMOTED,
        ended_at=timezone.now() if shadow.ended_at is None else shadow.ended_at,
        promoted_version=plan.version.number if plan.version else None,
    )
    shadow.refresh_from_db()
    shadow_runs.forget()
    return plan
