"""A stash's pipeline versions in the admin: the list (who changed what, when), each version's document,
the difference between any two, and restoring one (as a new version)."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin import guard as admin_guard
from stash.admin.views.pipelines import diff_rows, may_change, pipeline_stash
from stash.admin.views.review import refused
from stash.admin.views.tools import stash_context
from stash.core import documents
from stash.models import PipelineVersion

#: Versions listed per page, newest first.
PER_PAGE = 50


class CompareForm(forms.Form):
    a = forms.IntegerField(label=gettext_lazy("from version"), min_value=1)
    b = forms.IntegerField(label=gettext_lazy("to version"), min_value=1)


def _page(model_admin, request, stash, title, template, **extra):
    context = {
        **stash_context(model_admin, request, stash, title),
        "may_restore": may_change(model_admin, request, stash),
        "versions_url": reverse("admin:stash_stash_versions", args=[stash.pk]),
        **extra,
    }
    return TemplateResponse(request, template, context)


def _version(stash, number):
    try:
        return stash.versions.select_related("created_by").get(number=number)
    except PipelineVersion.DoesNotExist:
        raise Http404(_("%(stash)s has no version %(number)d.") % {"stash": stash.slug, "number": number}) from None


def versions(model_admin, request, object_id):
    """The stash's versions, newest first (``?p=`` pages them), with a choice of two to compare."""
    stash = pipeline_stash(model_admin, request, object_id)
    page = Paginator(stash.versions.select_related("created_by").order_by("-number"), PER_PAGE).get_page(
        request.GET.get("p")
    )
    rows = list(page)
    return _page(
        model_admin,
        request,
        stash,
        _("Pipeline versions of %(stash)s") % {"stash": stash},
        "admin/stash/stash/versions.html",
        page=page,
        rows=rows,
        older=rows[1].number if len(rows) > 1 else None,
        newer=rows[0].number if rows else None,
    )


def version(model_admin, request, object_id, number):
    """One version: who made it, when, what changed, and its document (no secrets, no ids)."""
    stash = pipeline_stash(model_admin, request, object_id)
    shown = _version(stash, number)
    previous = stash.versions.filter(number__lt=number).order_by("-number").values_list("number", flat=True).first()
    return _page(
        model_admin,
        request,
        stash,
        _("Pipeline version %(number)d of %(stash)s") % {"number": number, "stash": stash},
        "admin/stash/stash/version.html",
        version=shown,
        previous=previous,
        document=documents.dumps(processing.shown_version(shown)),
        current=number == stash.config_version,
    )


def compare(model_admin, request, object_id):
    """What changed between versions ``?a=`` and ``?b=``: the changes in words, and the documents' diff."""
    stash = pipeline_stash(model_admin, request, object_id)
    back = reverse("admin:stash_stash_versions", args=[stash.pk])
    form = CompareForm(request.GET)
    if not form.is_valid():
        return refused(model_admin, request, form.errors, back)
    a, b = form.cleaned_data["a"], form.cleaned_data["b"]
    try:
        diff = processing.compare_versions(stash, a, b)
    except PipelineVersion.DoesNotExist as exc:
        return refused(model_admin, request, {"version": [str(exc)]}, back)
    title = _("Pipeline version %(a)d → %(b)d of %(stash)s") % {"a": a, "b": b, "stash": stash}
    return _page(
        model_admin,
        request,
        stash,
        title,
        "admin/stash/stash/version_compare.html",
        diff=diff,
        lines=diff_rows(diff.lines),
        a_url=reverse("admin:stash_stash_version", args=[stash.pk, a]),
        b_url=reverse("admin:stash_stash_version", args=[stash.pk, b]),
    )


def restore(model_admin, request, object_id, number):
    """Restoring a version: a GET asks to confirm (saying what it would change); the POST restores it,
    as a new version, unless golden examples refuse it."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    stash = pipeline_stash(model_admin, request, object_id, change=True)
    chosen = _version(stash, number)
    if request.method == "GET":
        return _page(
            model_admin,
            request,
            stash,
            _("Restore version %(number)d of %(stash)s?") % {"number": number, "stash": stash},
            "admin/stash/stash/version_restore.html",
            version=chosen,
            diff=_from_current(stash, number),
            current=number == stash.config_version,
        )
    page = reverse("admin:stash_stash_version", args=[stash.pk, number])
    try:
        plan = processing.restore(stash, number)
    except processing.ExamplesBroken as exc:
        messages.error(
            request, admin_guard.refusal(exc, _("Version %(number)d was not restored.") % {"number": number})
        )
        return redirect(page)
    except (processing.InvalidDocument, processing.Unanswered, processing.PipelineChanged) as exc:
        messages.error(request, _("Version %(number)d was not restored: %(error)s") % {"number": number, "error": exc})
        return redirect(page)
    if not plan.applied:
        messages.info(
            request, _("The pipeline already is version %(number)d: nothing was changed.") % {"number": number}
        )
        return redirect(page)
    messages.success(
        request,
        _("Version %(number)d restored as version %(version)d.") % {"number": number, "version": plan.version.number},
    )
    admin_guard.warn(request, admin_guard.broken_anyway(plan))
    return redirect(reverse("admin:stash_stash_version", args=[stash.pk, plan.version.number]))


def _from_current(stash, number):
    """What restoring version ``number`` changes, or None when it is the current one (or the current
    one was never recorded: a stash older than versions)."""
    if number == stash.config_version:
        return None
    try:
        return processing.compare_versions(stash, stash.config_version, number)
    except PipelineVersion.DoesNotExist:
        return None
