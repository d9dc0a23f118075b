"""The admin's appeals page: the open appeals, each with the decision appealed, its statement of
reasons and the submitter's words side by side, and Uphold / Reverse for a reviewer who did not
make the decision."""

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin.views.review import refused
from stash.models import Appeal, Stash

DONE = {
    Appeal.Status.UPHELD: gettext_lazy("Upheld the decision on item %(item)s: it stays rejected."),
    Appeal.Status.REVERSED: gettext_lazy("Reversed the decision on item %(item)s: it is accepted now."),
}


class AppealDecisionForm(forms.Form):
    """A reviewer's decision on one appeal: the button pressed, and a note the submitter reads."""

    appeal = forms.IntegerField(widget=forms.HiddenInput)
    outcome = forms.ChoiceField(choices=[(name, name) for name in processing.APPEAL_OUTCOMES])
    note = forms.CharField(label=gettext_lazy("Note to the submitter"), required=False, max_length=2000, strip=True)


def appeals(model_admin, request):
    """The open appeals, oldest first (``?stash=<id>``: of one stash); a POST decides one."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    here = reverse("admin:stash_content_appeals")
    if request.method == "POST":
        return _decide(model_admin, request, AppealDecisionForm(request.POST), here)
    stash = None
    if request.GET.get("stash", "").isdigit():
        stash = Stash.objects.filter(pk=request.GET["stash"]).first()
    rows = [(appeal, processing.appeal_refusal(request.user, appeal)) for appeal in processing.open_appeals(stash)]
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": _("Appeals awaiting a decision") + (f": {stash.name}" if stash else ""),
        "rows": rows,
        "appeals_url": here,
    }
    return TemplateResponse(request, "admin/stash/appeals.html", context)


def _decide(model_admin, request, form, back_url):
    if not form.is_valid():
        return refused(model_admin, request, form.errors, back_url)
    data = form.cleaned_data
    try:
        processing.decide_appeal(data["appeal"], data["outcome"], data["note"], request.user)
    except Appeal.DoesNotExist:
        messages.warning(request, _("No appeal %(id)s. Nothing was changed.") % {"id": data["appeal"]})
    except processing.NotYourAppealToDecide as exc:
        raise PermissionDenied(str(exc)) from exc
    except processing.AppealConflict as exc:
        messages.warning(request, _("%(reason)s Nothing was changed.") % {"reason": exc})
    else:
        appeal = Appeal.objects.select_related("content").get(pk=data["appeal"])
        done = DONE[data["outcome"]] % {"item": str(appeal.content_id)[:8]}
        model_admin.log_change(request, appeal.content, f"{done} {data['note']}".strip())
        messages.success(request, done)
    return redirect(back_url)
