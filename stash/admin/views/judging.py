"""A stash's judging again of many items, followed live: how many of those sent are judged, how many are
waiting, and how fast (``processing.judging_progress``), on a page and as JSON for its script."""

import math
from datetime import UTC, datetime

from django.core.exceptions import PermissionDenied
from django.http import HttpResponseBadRequest, JsonResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _, ngettext

from stash import processing
from stash.admin.following import SENT, SINCE, waiting_url
from stash.admin.views.tools import stash_context, stash_or_404


class BadQuery(ValueError):
    """A query value the page cannot count with; its message says which and why."""


def judging(model_admin, request, object_id):
    """The page: "X of N judged, Y waiting, Z items/s" and a progress bar, as counted at load; its
    script (judging_progress.js) asks ``judging_counts`` again every second or two."""
    stash = _stash(model_admin, request, object_id)
    try:
        progress = _progress(stash, request.GET)
    except BadQuery as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
    context = {
        **stash_context(model_admin, request, stash, _("Judging %(stash)s again") % {"stash": stash}),
        "progress": progress,
        "progress_text": progress_text(progress),
        "counts_url": f"{reverse('admin:stash_stash_judging_counts', args=[stash.pk])}?{request.GET.urlencode()}",
        "waiting_url": waiting_url(stash.pk),
    }
    return TemplateResponse(request, "admin/stash/stash/judging.html", context)


def judging_counts(model_admin, request, object_id):
    """The page's counts as JSON: ``sent``, ``judged``, ``waiting``, ``per_second``, ``done`` and the
    sentence the page shows (``text``); a bad query answers 400 with ``error``."""
    stash = _stash(model_admin, request, object_id)
    try:
        progress = _progress(stash, request.GET)
    except BadQuery as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(
        {
            "sent": progress.sent,
            "judged": progress.judged,
            "waiting": progress.waiting,
            "per_second": progress.per_second,
            "done": progress.done,
            "text": progress_text(progress),
        }
    )


def progress_text(progress):
    """ "X of N judged, Y waiting, Z items/s" (the rate when it is known)."""
    text = ngettext("%(judged)d of %(sent)d item judged", "%(judged)d of %(sent)d items judged", progress.sent) % {
        "judged": progress.judged,
        "sent": progress.sent,
    }
    text += ", " + ngettext("%d waiting", "%d waiting", progress.waiting) % progress.waiting
    if progress.per_second is not None:
        text += ", " + _("%(rate)s items/s") % {"rate": f"{progress.per_second:.1f}"}
    return text + "."


def _stash(model_admin, request, object_id):
    """The stash (``stash_or_404``), for whoever may view its items."""
    stash = stash_or_404(model_admin, request, object_id)
    if not (request.user.has_perm("stash.view_content") or request.user.has_perm("stash.change_content")):
        raise PermissionDenied
    return stash


def _progress(stash, query):
    return processing.judging_progress(stash, _sent(query), _since(query))


def _sent(query):
    value = query.get(SENT, "")
    if not value.isascii() or not value.isdigit():
        raise BadQuery(
            _("The count of items sent (sent) must be a whole number of 0 or more, not %(value)r.") % {"value": value}
        )
    return int(value)


def _since(query):
    value = query.get(SINCE, "")
    if not value:
        return None
    try:
        seconds = float(value)
        if not math.isfinite(seconds):
            raise ValueError(value)
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise BadQuery(
            _("The time the items were sent (since) must be seconds since 1970, not %(value)r.") % {"value": value}
        ) from None
