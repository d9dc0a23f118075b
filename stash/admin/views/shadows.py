"""A stash's shadows in the admin: the list with a form to start one (a saved version, a pipeline file, or the
simulate page's draft: the hooks as edited on the stash's page, not saved), and a page per shadow with its
agreement report, the disagreeing items' two trails side by side, Stop and Promote."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin import guard as admin_guard
from stash.admin.drafts import DRAFT, read_draft
from stash.admin.views.pipelines import may_change, parse_document, pipeline_stash
from stash.admin.views.tools import stash_context
from stash.core import documents
from stash.processing import limits


class StartForm(forms.Form):
    """A shadow to start: a saved version or a pipeline file (one of them); ``processing.start_shadow``
    checks the rest and names the field at fault."""

    version = forms.IntegerField(
        label=gettext_lazy("version"), required=False, help_text=gettext_lazy("A saved version of the stash to run.")
    )
    document = forms.FileField(
        label=gettext_lazy("or a pipeline file"),
        required=False,
        help_text=gettext_lazy("A pipeline document (.json), as “Download pipeline” gives it, edited."),
    )
    percent = forms.IntegerField(
        label=gettext_lazy("percent of live saves"), initial=10, help_text=gettext_lazy("From 1 to 100.")
    )
    count = forms.IntegerField(label=gettext_lazy("items"), required=False, initial=1000)
    minutes = forms.IntegerField(label=gettext_lazy("or minutes"), required=False)

    def clean_document(self):
        upload = self.cleaned_data.get("document")
        if upload is None:
            return None
        try:
            limits.check_document_bytes(upload.size)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None
        return parse_document(upload.read())


def _shadow(stash, shadow_id):
    shadow = processing.shadows_of(stash).filter(pk=shadow_id).first()
    if shadow is None:
        raise Http404(_("%(stash)s has no shadow %(id)d.") % {"stash": stash.slug, "id": shadow_id})
    return shadow


def shadows(model_admin, request, object_id):
    """The stash's shadows, newest first, and (for who may change its pipeline) the form that starts one."""
    if request.method not in ("GET", "POST"):
        return HttpResponseNotAllowed(["GET", "POST"])
    stash = pipeline_stash(model_admin, request, object_id, change=request.method == "POST")
    form = StartForm(initial={"version": request.GET.get("version") or stash.config_version})
    if request.method == "POST":
        form = StartForm(request.POST, request.FILES)
        draft = read_draft(model_admin, request, stash) if DRAFT in request.POST else None
        if draft is not None and not draft.valid:
            form.add_error(None, draft.errors)
        elif form.is_valid():
            data = form.cleaned_data
            document = data["document"] if draft is None else processing.draft_document(draft.stash, draft.hooks)
            try:
                shadow = processing.start_shadow(
                    stash,
                    document=document,
                    version=data["version"] if document is None else None,
                    percent=data["percent"],
                    count=data["count"],
                    minutes=data["minutes"],
                    user=request.user,
                )
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            except processing.InvalidDocument as exc:
                form.add_error("document", [f"{path}: {' '.join(errors)}" for path, errors in exc.errors.items()])
            except processing.ShadowConflict as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, _("Shadow %(id)d started.") % {"id": shadow.pk})
                return redirect(reverse("admin:stash_stash_shadow", args=[stash.pk, shadow.pk]))
    return TemplateResponse(
        request,
        "admin/stash/stash/shadows.html",
        {
            **stash_context(model_admin, request, stash, _("Shadows of %(stash)s") % {"stash": stash}),
            "rows": list(processing.shadows_of(stash)),
            "form": form,
            "may_change": may_change(model_admin, request, stash),
        },
        status=400 if request.method == "POST" else 200,
    )


def shadow(model_admin, request, object_id, shadow_id):
    """One shadow: what it runs, its agreement report, the latest disagreeing items with both trails."""
    stash = pipeline_stash(model_admin, request, object_id)
    shown = _shadow(stash, shadow_id)
    title = _("Shadow %(id)d of %(stash)s") % {"id": shown.pk, "stash": stash}
    return TemplateResponse(
        request,
        "admin/stash/stash/shadow.html",
        {
            **stash_context(model_admin, request, stash, title),
            "shadow": shown,
            "report": processing.shadow_report(shown),
            "document": documents.dumps(processing.public_document(shown.document)),
            "may_change": may_change(model_admin, request, stash),
            "shadows_url": reverse("admin:stash_stash_shadows", args=[stash.pk]),
        },
    )


def stop(model_admin, request, object_id, shadow_id):
    """Stop the shadow (POST only)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    stash = pipeline_stash(model_admin, request, object_id, change=True)
    chosen = _shadow(stash, shadow_id)
    try:
        processing.stop_shadow(chosen)
    except processing.ShadowConflict as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Shadow %(id)d stopped.") % {"id": chosen.pk})
    return redirect(reverse("admin:stash_stash_shadow", args=[stash.pk, chosen.pk]))


def promote(model_admin, request, object_id, shadow_id):
    """Promote the shadow (POST only): its pipeline becomes the live one, as a new version, unless golden
    examples refuse it."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    stash = pipeline_stash(model_admin, request, object_id, change=True)
    chosen = _shadow(stash, shadow_id)
    page = reverse("admin:stash_stash_shadow", args=[stash.pk, chosen.pk])
    try:
        plan = processing.promote_shadow(chosen)
    except processing.ExamplesBroken as exc:
        messages.error(request, admin_guard.refusal(exc, _("The shadow was not promoted.")))
        return redirect(page)
    except (
        processing.ShadowConflict,
        processing.InvalidDocument,
        processing.Unanswered,
        processing.PipelineChanged,
    ) as exc:
        messages.error(request, _("The shadow was not promoted: %(error)s") % {"error": exc})
        return redirect(page)
    if plan.version is None:
        messages.info(request, _("The live pipeline already was the shadow's: no version was made."))
    else:
        messages.success(
            request,
            _("Shadow %(id)d promoted as version %(version)d.") % {"id": chosen.pk, "version": plan.version.number},
        )
        admin_guard.warn(request, admin_guard.broken_anyway(plan))
    return redirect(page)
