"""The admin's failure store: hook errors, timeouts and items given up on, grouped by hook, error type
and pipeline version (filtered by stash and time); a group's page with the trail of one example,
and Re-drive: its items judged again on the current pipeline, with what became of them."""

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin.views.tools import (
    INCLUDE_REVIEWED,
    JUDGE_AGAIN_PERMISSION,
    include_reviewed_label,
    say_decided_by_people,
    sent_again,
)
from stash.models import Stash

OUTCOME_LABELS = {
    "waiting": gettext_lazy("not judged yet"),
    "accepted": gettext_lazy("accepted"),
    "rejected": gettext_lazy("rejected"),
    "held": gettext_lazy("held"),
    "still_failing": gettext_lazy("still failing"),
}


_WHEN = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class FailureFilterForm(forms.Form):
    """The failure store's filters: a stash, and the time the failures were seen in."""

    stash = forms.ModelChoiceField(
        queryset=Stash.objects.order_by("name"), required=False, empty_label=gettext_lazy("every stash")
    )
    since = forms.DateTimeField(label=gettext_lazy("Seen since"), required=False, widget=_WHEN)
    until = forms.DateTimeField(label=gettext_lazy("Seen until"), required=False, widget=_WHEN)

    def clean(self):
        cleaned = super().clean()
        processing.failures.check_window(cleaned.get("since"), cleaned.get("until"))
        return cleaned


def failures(model_admin, request):
    """The groups of failures, the latest seen first, as the filters (GET) pick them."""
    _check_view(model_admin, request)
    form = FailureFilterForm(request.GET)  # no filter is a valid filter: every stash, any time
    valid = form.is_valid()
    filters = {name: value for name, value in form.cleaned_data.items() if value is not None} if valid else {}
    groups = processing.failures.groups(**filters) if valid else []
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": _("Failures"),
        "form": form,
        "groups": groups,
        "filtered": bool(filters),
    }
    return TemplateResponse(request, "admin/stash/failures.html", context)


def failure_group(model_admin, request, key):
    """One group: what it shares, its counts, the trail of its latest failure, and Re-drive (POST)."""
    _check_view(model_admin, request)
    group = processing.failures.group(key)
    if group is None:
        raise Http404(_("No such group of failures."))
    here = reverse("admin:stash_content_failure_group", args=[key])
    may_redrive = request.user.has_perm(JUDGE_AGAIN_PERMISSION)
    if request.method == "POST":
        if not may_redrive:
            raise PermissionDenied
        done = processing.redriving.redrive(key, include_reviewed=INCLUDE_REVIEWED in request.POST)
        model_admin.message_user(request, sent_again(done.sent), messages.SUCCESS if done.sent else messages.WARNING)
        say_decided_by_people(model_admin, request, done.people, done.included)
        return redirect(here)
    people = processing.decided_by_people(processing.failures.items_of(key))
    outcome = processing.redriving.outcome(key)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": _("Failures: %(hook)s, %(error)s")
        % {"hook": group.label or group.hook or _("no hook"), "error": group.error_type},
        "group": group,
        "run": group.example_run,
        "outcome": [(OUTCOME_LABELS[name], outcome[name]) for name in processing.redriving.OUTCOMES] if outcome else [],
        "may_redrive": may_redrive,
        "include_reviewed": include_reviewed_label(people) if people else "",
        "failures_url": reverse("admin:stash_content_failures") + f"?stash={group.stash.pk}",
    }
    return TemplateResponse(request, "admin/stash/failure_group.html", context)


def _check_view(model_admin, request):
    # Failures carry items' trails and hooks' messages: whoever may view the items may read them.
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
