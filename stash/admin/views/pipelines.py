"""A stash's pipeline as a file, in the admin: download it (``<slug>-pipeline.json``, no secrets), upload
one, see what it would change and which golden examples it would break, then apply it."""

import json

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin import guard as admin_guard
from stash.admin.forms import parse_document, read_document_file
from stash.admin.views.review import refused
from stash.admin.views.tools import stash_context, stash_or_404
from stash.core import documents
from stash.models import ExamplesPolicy

#: The button of the preview that applies the document it shows.
CONFIRM = "_apply"
#: A diff line's kind, by its first character, and the words a screen reader says before it.
DIFF_KINDS = {
    "+": ("added", gettext_lazy("added:")),
    "-": ("removed", gettext_lazy("removed:")),
    "@": ("hunk", gettext_lazy("lines:")),
}
#: What seeing and changing a stash's pipeline need, besides the view or change permission on the stash.
VIEW_PERMISSIONS = ("stash.view_hookconfig", "stash.view_example")
CHANGE_PERMISSION = "stash.change_hookconfig"


def may_change(model_admin, request, stash):
    """Whether the user may change ``stash``'s pipeline as a whole (upload, restore): its settings and hooks."""
    return model_admin.has_change_permission(request, stash) and request.user.has_perm(CHANGE_PERMISSION)


def pipeline_stash(model_admin, request, object_id, change=False):
    """The stash ``object_id`` if the user may see its pipeline (or, with ``change``, change it);
    404 if there is none, 403 otherwise."""
    stash = stash_or_404(model_admin, request, object_id)
    if not request.user.has_perms(VIEW_PERMISSIONS) or (change and not may_change(model_admin, request, stash)):
        raise PermissionDenied
    return stash


def tools(model_admin, request, stash):
    """What the stash page's "Pipeline as code" links need (``pipeline_tools.html``), or None for a
    user who may not see the pipeline."""
    if not (model_admin.has_view_permission(request, stash) and request.user.has_perms(VIEW_PERMISSIONS)):
        return None
    return {"examples": stash.examples.count(), "may_change": may_change(model_admin, request, stash)}


class UploadForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("pipeline file"),
        help_text=gettext_lazy(
            "A pipeline document (.json), as “Download pipeline” gives it. "
            "Nothing changes before you confirm what it would do."
        ),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        self.cleaned_data["document"] = read_document_file(upload)
        return upload


class ApplyForm(forms.Form):
    """The preview's confirmation: the document again, the name of its file, and the version of the
    stash it was previewed on."""

    document = forms.CharField(widget=forms.HiddenInput, strip=False)
    name = forms.CharField(widget=forms.HiddenInput, required=False, max_length=255)
    version = forms.IntegerField(widget=forms.HiddenInput)

    def clean_document(self):
        return parse_document(self.cleaned_data["document"])


def diff_rows(lines):
    """A unified diff's lines as (kind, words for a screen reader, line): kinds ``added``, ``removed``,
    ``hunk``, ``file`` (the two headers) and ``same``. The versions' comparison and the upload's
    preview show them alike (``version_diff.html``)."""
    rows = []
    for line in lines:
        if line.startswith(("---", "+++")) and len(rows) < 2:
            rows.append(("file", "", line))
        else:
            kind, words = DIFF_KINDS.get(line[:1], ("same", ""))
            rows.append((kind, words, line))
    return rows


def download(model_admin, request, object_id):
    """The stash's pipeline document, with its golden examples, as an attachment: no ids, no secrets."""
    stash = pipeline_stash(model_admin, request, object_id)
    response = HttpResponse(
        documents.dumps(processing.export_document(stash)) + "\n", content_type="application/json; charset=utf-8"
    )
    response["Content-Disposition"] = content_disposition_header(True, f"{stash.slug}-pipeline.json")
    return response


def upload(model_admin, request, object_id):
    """Upload a pipeline document: a preview of what it changes and of the golden examples' results
    (a dry run), then "Apply" (``CONFIRM``) checks it again and applies it, all or nothing."""
    stash = pipeline_stash(model_admin, request, object_id, change=True)
    form, document, name = UploadForm(), None, ""
    if request.method == "POST" and CONFIRM in request.POST:
        confirmed = ApplyForm(request.POST)
        if not confirmed.is_valid():
            return refused(model_admin, request, confirmed.errors, request.path)
        if confirmed.cleaned_data["version"] == stash.config_version:
            return _apply(request, stash, confirmed.cleaned_data["document"])
        messages.warning(
            request,
            _(
                "The pipeline has changed since this preview (it is pipeline version %(version)d now): "
                "here is what the file would change now."
            )
            % {"version": stash.config_version},
        )
        document, name = confirmed.cleaned_data["document"], confirmed.cleaned_data["name"]
    elif request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            document, name = form.cleaned_data["document"], form.cleaned_data["file"].name
    plan = None
    if document is not None:
        try:
            plan = _preview(request, stash, document)
        except ValidationError as exc:
            if form.is_bound:
                form.add_error("file", exc)
            else:  # a preview shown again: its file is not on the page
                messages.error(request, " | ".join(exc.messages))
    context = {
        **stash_context(model_admin, request, stash, _("Upload a pipeline to %(stash)s") % {"stash": stash}),
        "form": form,
        "plan": plan,
        "confirm": CONFIRM,
        "file_name": name or _("this file"),
    }
    if plan is not None:
        context["apply_form"] = ApplyForm(
            initial={"document": json.dumps(document), "name": name, "version": stash.config_version}
        )
        context["lines"] = diff_rows(processing.plan_diff(stash, plan, name or "file"))
        context["result_rows"] = [(None, result) for result in plan.results]  # the file's examples have no page
        context["blocked"] = bool(plan.broken) and stash.examples_policy == ExamplesPolicy.BLOCK
    return TemplateResponse(request, "admin/stash/stash/pipeline_upload.html", context)


def check_permissions(request, document):
    """``ValidationError`` naming the permissions the user lacks to import ``document``
    (``processing.import_permissions``: the API's rule too)."""
    missing = processing.missing_import_permissions(request.user, document)
    if not missing:
        return
    message = _("Importing this file needs permissions you do not have: %(missing)s.") % {"missing": ", ".join(missing)}
    if set(missing) <= set(processing.EXAMPLES_PERMISSIONS):
        message += " " + _("Its golden examples would replace the stash's: remove “examples” from it to keep them.")
    raise ValidationError(message)


def _preview(request, stash, document):
    """What importing ``document`` would do; ``ValidationError`` listing why it cannot be imported."""
    check_permissions(request, document)
    try:
        return processing.import_document(stash, document, dry_run=True)
    except processing.InvalidDocument as exc:
        raise ValidationError(
            [f"{path}: {message}" for path, errors in exc.errors.items() for message in errors]
        ) from None
    except processing.Unanswered as exc:
        raise ValidationError(_("The golden examples could not be run: %(error)s") % {"error": exc}) from None


def _apply(request, stash, document):
    """Apply ``document`` to ``stash``, then back to the stash's page; refused, back to the upload page,
    the reasons told as messages."""
    try:
        check_permissions(request, document)  # the confirmation posts the document back: it may not be the preview's
    except ValidationError as exc:
        messages.error(request, _("Nothing was changed: %(error)s") % {"error": " ".join(exc.messages)})
        return redirect(request.path)
    try:
        plan = processing.import_document(stash, document, note=_("upload"))
    except processing.ExamplesBroken as exc:
        messages.error(request, admin_guard.refusal(exc, _("Nothing was changed.")))
        return redirect(request.path)
    except (processing.InvalidDocument, processing.Unanswered, processing.PipelineChanged) as exc:
        messages.error(request, _("Nothing was changed: %(error)s") % {"error": exc})
        return redirect(request.path)
    if not plan.applied:
        messages.info(request, _("The pipeline already is what this file says: nothing was changed."))
    else:
        messages.success(
            request,
            _("Pipeline uploaded: it is pipeline version %(version)d now (%(changes)s).")
            % {"version": plan.version.number, "changes": "; ".join(plan.changes)},
        )
        admin_guard.warn(request, admin_guard.broken_anyway(plan))
    return redirect(reverse("admin:stash_stash_change", args=[stash.pk]))
