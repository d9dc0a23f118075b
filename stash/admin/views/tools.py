"""Admin pages of a stash that save nothing (simulate a payload, replay recent items with the current
hooks), and the endpoint that drag and drop in the hooks list posts to."""

import json
import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import unquote
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied, ValidationError
from django.http import (
    Http404,
    HttpResponseBadRequest,
    HttpResponseForbidden,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
    JsonResponse,
)
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext as _, gettext_lazy, ngettext

from stash import processing
from stash.admin.drafts import DRAFT, may_draft, read_draft
from stash.admin.following import follow_message
from stash.admin.forms import ReplayForm, SimulateForm
from stash.admin.hook_groups import in_groups
from stash.admin.previews import short_preview
from stash.core.exceptions import PayloadTooLarge
from stash.models import Content, HookConfig, Stash

# The button of the replay page that sends its changed items to be judged again, and what it needs.
JUDGE_AGAIN = "_judge_again"
JUDGE_AGAIN_PERMISSION = "stash.change_content"
# The checkbox that includes items decided by people (their decisions replaced), and the field the
# items list's confirmation posts once it has been shown.
INCLUDE_REVIEWED = "include_reviewed"
CONFIRMED = "_confirmed"
# What a replay counts, in the order it says it ("would newly reject 37, newly accept 4").
REPLAY_VERDICTS = [
    (Content.Status.REJECTED, gettext_lazy("reject")),
    (Content.Status.ACCEPTED, gettext_lazy("accept")),
    (Content.Status.HELD, gettext_lazy("hold")),
]


def stash_or_404(model_admin, request, object_id):
    """The stash ``object_id``; 404 if there is none, 403 if the user may not see it."""
    stash = model_admin.get_object(request, unquote(object_id))
    if stash is None:
        raise Http404(_("No stash with id %(id)s.") % {"id": object_id})
    if not model_admin.has_view_permission(request, stash):
        raise PermissionDenied
    return stash


def stash_page(model_admin, request, object_id, title, template, extra):
    """The page ``template`` of the stash ``object_id`` (see ``stash_or_404``), titled ``title % {"stash": ...}``,
    with the admin's context, the stash and its enabled hooks (``in_groups``: the line above the page lists
    them), and what ``extra(stash)`` adds."""
    stash = stash_or_404(model_admin, request, object_id)
    context = {
        **stash_context(model_admin, request, stash, title % {"stash": stash}),
        "enabled_hooks": in_groups(stash.hooks.enabled().in_order()),
        **extra(stash),
    }
    return TemplateResponse(request, template, context)


def stash_context(model_admin, request, stash, title):
    """What every page of ``stash`` shows (``stash_page.html``): the admin's frame, the stash, the title."""
    return {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "original": stash,
        "stash": stash,
        "title": title,
    }


def simulate(model_admin, request, object_id):
    """Run the stash's enabled hooks over a pasted payload, or an item's, and show each hook's outcome,
    reason and time; verbose (by default), every hook and the payload after each transform. A draft
    posted from the stash's page (``admin_drafts``) runs its hooks as edited instead. Nothing is saved."""

    def extra(stash):
        result, draft = None, None
        visible = processing.visible_contents(request.user)
        if request.method == "POST":
            draft = read_draft(model_admin, request, stash) if DRAFT in request.POST else None
            # Sent from the stash's page, a draft comes without the fields of this page: their defaults.
            data = (
                request.POST
                if "payload" in request.POST
                else {"payload": json.dumps(_latest_payload(stash)), "verbose": "on"}
            )
            form = SimulateForm(data, stash=stash, visible=visible)
            if form.is_valid() and (draft is None or draft.valid):
                result = _simulate(
                    model_admin, request, form, draft.stash if draft else stash, draft.hooks if draft else None
                )
        else:
            form = SimulateForm(initial={"payload": _latest_payload(stash)}, stash=stash, visible=visible)
        transformed = json.dumps(result.payload, indent=2, ensure_ascii=False) if result and result.transformed else ""
        context = {"form": form, "result": result, "transformed_payload": transformed, "draft": draft}
        if draft is not None and draft.valid:
            context["enabled_hooks"] = in_groups(draft.enabled_hooks)
        return context

    return stash_page(
        model_admin, request, object_id, _("Simulate %(stash)s"), "admin/stash/stash/simulate.html", extra
    )


def _latest_payload(stash):
    latest = stash.contents.order_by("-created_at").values_list("payload", flat=True).first()
    return latest if latest is not None else {"text": ""}


def _simulate(model_admin, request, form, stash, hooks):
    """The result of the simulation ``form`` asks for, or None with the error on the form or the page."""
    try:
        return processing.simulate(
            stash,
            form.cleaned_data["payload"],
            content=form.cleaned_data["content"],
            hooks=hooks,
            verbose=form.cleaned_data["verbose"],
        )
    except (ValidationError, PayloadTooLarge) as exc:
        form.add_error("payload", exc.messages if isinstance(exc, ValidationError) else str(exc))
    except processing.Unanswered as exc:
        model_admin.message_user(request, str(exc), messages.ERROR)
    return None


def replay(model_admin, request, object_id):
    """Judge the stash's latest items again with its current hooks and show what would change, item by
    item; "Judge these items again" (``JUDGE_AGAIN``) sends the changed ones to the workers. A draft
    posted from the stash's page (``admin_drafts``), or a pipeline file (uploaded here, or sent from
    the upload's preview), is replayed instead, compared with the same recorded verdicts. Nothing is saved."""
    if request.method == "POST" and JUDGE_AGAIN in request.POST:
        return _judge_again(model_admin, request, object_id)

    def extra(stash):
        report, summary, rows, draft = None, "", [], None
        form = ReplayForm()
        if request.method == "POST":
            draft = read_draft(model_admin, request, stash) if DRAFT in request.POST else None
            # Sent from the stash's page or the upload's preview, a draft or a file comes without the
            # fields of this page: their defaults.
            data = (
                request.POST
                if "last_n" in request.POST
                else {**request.POST.dict(), "last_n": ReplayForm.base_fields["last_n"].initial}
            )
            form = ReplayForm(data, request.FILES)
        document = form.cleaned_data["document"] if form.is_valid() else None
        if document is not None and not may_draft(model_admin, request, stash):
            raise PermissionDenied
        if form.is_valid() and (draft is None or draft.valid):
            try:
                report = processing.replay(
                    draft.stash if draft else stash,
                    form.cleaned_data["last_n"],
                    hooks=draft.hooks if draft else None,
                    document=document,
                )
            except processing.InvalidDocument as exc:
                form.add_error(
                    "file", [f"{path}: {message}" for path, errors in exc.errors.items() for message in errors]
                )
            except processing.Unanswered as exc:
                model_admin.message_user(request, str(exc), messages.ERROR)
            else:
                summary = ", ".join(
                    _("would newly %(verb)s %(n)d") % {"verb": verb, "n": report.newly(verdict)}
                    for verdict, verb in REPLAY_VERDICTS
                )
                rows = [(change, short_preview(change.submitted)) for change in report.changes]
        people = None
        if report is not None and rows and request.user.has_perm(JUDGE_AGAIN_PERMISSION):
            people = processing.decided_by_people(
                Content.objects.filter(pk__in=[change.content.pk for change in report.changes])
            )
        context = {
            "form": form,
            "report": report,
            "summary": summary,
            "rows": rows,
            # Judging again records the current hooks' verdicts: not what a draft or a file said.
            "may_judge_again": request.user.has_perm(JUDGE_AGAIN_PERMISSION) and draft is None and document is None,
            "include_reviewed": include_reviewed_label(people) if people else "",
            "may_make_example": request.user.has_perm("stash.add_example"),
            "draft": draft,
            "replayed": _("the current hooks"),
        }
        if draft is not None and draft.valid:
            context.update(enabled_hooks=in_groups(draft.enabled_hooks), replayed=_("the draft hooks"))
        if document is not None:
            name = form.cleaned_data["document_name"] or _("the file")
            context.update(
                document=json.dumps(document),
                document_name=form.cleaned_data["document_name"],
                replayed=_("the hooks of %(file)s") % {"file": name},
            )
            if report is not None:
                context["enabled_hooks"] = in_groups(report.steps)
        return context

    return stash_page(model_admin, request, object_id, _("Replay %(stash)s"), "admin/stash/stash/replay.html", extra)


def _judge_again(model_admin, request, object_id):
    """Send the posted items (``ids``) of the stash to be judged again, as the items list's action does."""
    stash = stash_or_404(model_admin, request, object_id)
    if not request.user.has_perm(JUDGE_AGAIN_PERMISSION):
        raise PermissionDenied
    back = HttpResponseRedirect(request.path)
    try:
        ids = [uuid.UUID(value) for value in request.POST.getlist("ids")]
    except ValueError:
        model_admin.message_user(
            request, _("Nothing was sent: the list of items is not one of item ids."), messages.ERROR
        )
        return back
    items = Content.objects.filter(stash=stash, pk__in=ids)
    people = processing.decided_by_people(items)
    include = bool(people) and INCLUDE_REVIEWED in request.POST
    left = len(set(ids)) - items.count()
    since = timezone.now()
    sent = processing.reprocess_by_stash(items, include_reviewed=include)
    say_sent_again(model_admin, request, sent, since, stash.pk)
    say_decided_by_people(model_admin, request, people, include)
    if left:
        model_admin.message_user(
            request,
            ngettext(
                "%d item was left alone: it is not an item of this stash.",
                "%d items were left alone: they are not items of this stash.",
                left,
            )
            % left,
            messages.WARNING,
        )
    return back


def say_sent_again(model_admin, request, sent_by_stash, since, listed_stash=None):
    """Say how many items were sent to be judged again (``sent_by_stash``: {stash id: how many}, at
    ``since``) and, past a batch, link to each stash's judging (``follow_message``)."""
    count = sum(sent_by_stash.values())
    model_admin.message_user(request, sent_again(count), messages.SUCCESS if count else messages.WARNING)
    if count > settings.STASH_BATCH_SIZE:
        sent = {stash: sent_by_stash[stash.pk] for stash in Stash.objects.filter(pk__in=sent_by_stash)}
        model_admin.message_user(request, follow_message(sent, since, listed_stash), messages.INFO)


def sent_again(count):
    """What the admin says after sending ``count`` items to be judged again."""
    return ngettext("%d item sent to be judged again.", "%d items sent to be judged again.", count) % count


def include_reviewed_label(people):
    """The label of the checkbox that includes the items ``people`` (``processing.PeoplesDecisions``) decided."""
    return ngettext(
        "Also judge again %(n)d item decided by people (%(who)s): their decision will be replaced.",
        "Also judge again %(n)d items decided by people (%(who)s): their decisions will be replaced.",
        people.count,
    ) % {"n": people.count, "who": people.who()}


def say_decided_by_people(model_admin, request, people, included):
    """Tell what became of the items ``people`` decided: replaced (``included``), or left out."""
    if not people:
        return
    values = {"n": people.count, "who": people.who()}
    if included:
        model_admin.message_user(
            request,
            ngettext(
                "%(n)d decision by people (%(who)s) was replaced; the item's history keeps it.",
                "%(n)d decisions by people (%(who)s) were replaced; the items' history keeps them.",
                people.count,
            )
            % values,
            messages.WARNING,
        )
    else:
        model_admin.message_user(
            request,
            ngettext(
                "%(n)d item was left out: people decided it (%(who)s), and their decision stands.",
                "%(n)d items were left out: people decided them (%(who)s), and their decisions stand.",
                people.count,
            )
            % values,
            messages.WARNING,
        )


def confirm_judge_again(model_admin, request, people):
    """The items list's confirmation before judging again a selection that holds items decided by
    people (``people``): one checkbox includes them. It posts the selection and the action back."""
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": _("Judge items again"),
        "people": people,
        "include_label": include_reviewed_label(people),
        "include_name": INCLUDE_REVIEWED,
        "confirmed_name": CONFIRMED,
        "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
        "select_across": request.POST.get("select_across", "0"),
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/stash/content/judge_again.html", context)


def update_order(model_admin, request):
    """django-admin-sortable2's endpoint for drag and drop in the hooks list (``SortableAdminMixin``'s
    ``update_order``): the moved rows' new places, applied by one atomic reorder. It answers every
    position of the stash's hooks (``{"positions": {id: position}, "count": n}``), which
    hook_order.js shows in the list's "#" column."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not model_admin.has_change_permission(request):
        return HttpResponseForbidden(_("Missing permissions to perform this request"))
    try:
        moved = json.loads(request.body).get("updatedItems")
        processing.place_dragged_hooks(moved)
    except (ValueError, TypeError, AttributeError, ObjectDoesNotExist) as exc:  # malformed; a stash gone meanwhile
        return HttpResponseBadRequest(_("Invalid POST request: %(error)s") % {"error": exc})
    stash_hooks = HookConfig.objects.filter(stash__hooks__pk=int(moved[0][0]))
    positions = {str(pk): position for pk, position in stash_hooks.values_list("pk", "position")}
    return JsonResponse({"positions": positions, "count": len(positions)})
