"""The admin's review queue: a stash's held items (or those of every stash, in one queue) one at a time, in
the queue's order (priority, then the oldest), each claimed by the reviewer who opens it, and a person's
decisions on an item (approve, reject, overturn, judge again, each said in words) from that page or the
item's own."""

import uuid
from dataclasses import dataclass, replace

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin import previews
from stash.admin.forms import DecisionForm
from stash.admin.trails import trail_table
from stash.models import Content


@dataclass(frozen=True)
class Button:
    """A decision's button: what it says, its single-key shortcut on the review page, what it does
    (``title``: said beside the buttons, in words; ``held``: what it does to a held item, if that differs)."""

    decision: str
    label: str
    key: str
    title: str
    held: str = ""

    def meaning(self, status):
        """What this decision does to an item with ``status``, as the page says it."""
        return self.held if self.held and status == Content.Status.HELD else self.title


BUTTONS = {
    button.decision: button
    for button in [
        Button(
            "approve",
            gettext_lazy("Approve"),
            "a",
            gettext_lazy("Accepts the item: it is fine, and the hook was right to ask a person."),
        ),
        Button("reject", gettext_lazy("Reject"), "r", gettext_lazy("Rejects the item: the hook's hold is confirmed.")),
        Button(
            "overturn",
            gettext_lazy("Overturn"),
            "o",
            gettext_lazy(
                "Reverses the hooks' verdict: a rejected item is accepted, and counted against the hook that "
                "rejected it as a false positive; an accepted one is rejected."
            ),
            held=gettext_lazy(
                "Accepts the item, and counts it against the hook that held it: one more false positive "
                "(overturned) on the hook's counters. Use it when the hook should not have held the item."
            ),
        ),
        Button(
            "judge", gettext_lazy("Judge again"), "j", gettext_lazy("Runs the stash's current hooks over it again.")
        ),
    ]
}
SKIP_KEY = "n"
RELEASE_KEY = "l"
#: How many items of the queue the review page lists under the item shown.
QUEUE_SHOWN = 20
DONE = {
    "approve": gettext_lazy("Approved item %(item)s."),
    "reject": gettext_lazy("Rejected item %(item)s."),
    "overturn": gettext_lazy("Overturned the verdict on item %(item)s: it is %(status)s now."),
    "judge": gettext_lazy("Sent item %(item)s to be judged again."),
}
FIRST_APPROVAL = gettext_lazy(
    "Recorded your approval of item %(item)s: it needs a second approval by another reviewer, and stays held."
)


def short(pk):
    return str(pk)[:8]


def decision_context(admin, request, content, decide_url, skip_url=""):
    """What the decision form needs: the buttons for ``content``'s status (none without the change
    permission), its form and where it posts. ``admin`` is the items' ModelAdmin."""
    buttons = []
    if admin.has_change_permission(request, content):
        # Each button says what it does to an item of this status.
        buttons = [
            replace(BUTTONS[name], title=BUTTONS[name].meaning(content.status))
            for name in processing.decisions_for(content)
        ]
    return {
        "buttons": buttons,
        "hook_precision": _precision(content) if buttons else None,
        "decide_url": decide_url,
        "skip_url": skip_url,
        "skip_key": SKIP_KEY,
        "decision_form": DecisionForm(initial={"item": content.pk, "status": content.status}),
    }


def _precision(content):
    """The precision (``processing.hook_precision``, 30 days) of the hook that rejected or held
    ``content``, for the words beside the buttons; None when no enforcing hook decided it."""
    config = content.decided_by
    if config is None:
        return None
    figures = processing.hook_precision([config]).get(config.pk)
    if figures is None:
        return None
    if content.status == Content.Status.HELD:
        effect = _("Approving or overturning lowers it (its hold not confirmed); rejecting raises it.")
    else:
        effect = _("Overturning lowers it (its verdict not confirmed).")
    return config.title, figures[30], effect


def review(model_admin, request, object_id):
    """A stash's held items, one at a time, in the queue's order (``?after=<id>`` skips to the one
    after that item, releasing it). Someone who may decide claims the item shown, and is shown
    none that another reviewer holds; a POST decides on the item shown (or releases it), then
    the next is shown."""
    admin = model_admin.admin_site.get_model_admin(Content)
    if not admin.has_view_permission(request):
        raise PermissionDenied
    stash = model_admin.get_object(request, unquote(object_id))
    if stash is None:
        raise Http404(_("No stash with id %(id)s.") % {"id": object_id})
    here = reverse("admin:stash_stash_review", args=[stash.pk])
    context = {
        "opts": model_admin.model._meta,
        "original": stash,
        "title": _("Review %(stash)s") % {"stash": stash},
        "appeals_url": f"{reverse('admin:stash_content_appeals')}?{urlencode({'stash': stash.pk})}",
    }
    return _queue_page(admin, request, stash, here, context)


def review_all(admin, request):
    """The held items of every stash the user may review (``processing.reviewable_stashes``) in one
    queue, in the same order and with the same claims as a stash's own review page."""
    if not admin.has_view_permission(request):
        raise PermissionDenied
    context = {
        "opts": admin.model._meta,
        "title": _("Review all stashes"),
        "appeals_url": reverse("admin:stash_content_appeals"),
    }
    stashes = processing.reviewable_stashes(request.user)
    return _queue_page(admin, request, stashes, reverse("admin:stash_content_review_all"), context)


def _queue_page(admin, request, scope, here, context):
    """The review page of ``scope``: one stash, or a queryset of stashes (``review_all``) whose held
    items form one queue. ``admin`` is the items' ModelAdmin; ``context`` what the caller adds."""
    deciding = admin.has_change_permission(request)
    one = None if isinstance(scope, QuerySet) else scope
    in_scope = Content.objects.filter(stash=one) if one is not None else Content.objects.filter(stash__in=scope)
    if request.method == "POST":
        if "release" in request.POST:
            return _release(request, here, deciding)
        form = DecisionForm(request.POST)
        if form.is_valid() and not in_scope.filter(pk=form.cleaned_data["item"]).exists():
            where = one if one is not None else _("the stashes you may review")
            form.add_error("item", _("No such item in %(stash)s.") % {"stash": where})
        refusal = _decide(admin, request, form, here, one)
        if refusal is not None:
            return refusal
        return redirect(f"{here}?{urlencode({'after': form.cleaned_data['item']})}")

    after = None
    if request.GET.get("after"):
        try:
            after_id = uuid.UUID(request.GET["after"])
        except ValueError:
            return refused(admin, request, {"after": [_("Not an item id.")]}, here)
        after = in_scope.filter(pk=after_id).first()
        if after is None:
            missing = (
                _("No item %(item)s in this stash: here is the oldest held item.")
                if one is not None
                else _("No item %(item)s in the stashes you may review: here is the first held item.")
            )
            messages.warning(request, missing % {"item": after_id})
        elif deciding:
            processing.release(after.pk, request.user)  # skipped: back to the others
    item = processing.next_for(scope, request.user, after) if deciding else processing.next_held(scope, after)
    held = processing.held_items(scope)
    now = timezone.now()
    queue = list(held.select_related("stash", "claimed_by")[:QUEUE_SHOWN])
    rows = processing.queue_rows([*queue, item] if item is not None else queue, one, now)
    overdue = processing.overdue_counts(now)
    stash_ids = [one.pk] if one is not None else list(scope.values_list("pk", flat=True))
    appeals = (
        processing.open_appeals(one) if one is not None else processing.open_appeals().filter(content__stash__in=scope)
    )
    context = {
        **admin.admin_site.each_context(request),
        **context,
        "stash": one,
        "item": item,
        "total": held.count(),
        "overdue_total": sum(overdue.get(pk, 0) for pk in stash_ids),
        "review_url": here,
        "skipped": after is not None,
        "queue": rows[: len(queue)],
        "release_key": RELEASE_KEY,
        # Appeals join the queue, marked as such; they are decided on the appeals page.
        "appeals": list(appeals[:QUEUE_SHOWN]),
        "changelist_url": reverse("admin:stash_content_changelist")
        + "?"
        + urlencode({"stash__id__exact": one.pk} if one is not None else {"status__exact": Content.Status.HELD}),
    }
    if item is not None:
        context.update(decision_context(admin, request, item, here, f"{here}?{urlencode({'after': item.pk})}"))
        code = processing.reason_codes([item]).get(item.pk, "")
        context.update(
            position=processing.queue_position(item, None if one is not None else scope),
            preview=previews.preview(item.payload),
            trail=_latest_trail(item),
            row=rows[-1],
            four_eyes=processing.needs_two(item, code),
        )
    return TemplateResponse(request, "admin/stash/stash/review.html", context)


def _latest_trail(item):
    """The trail of ``item``'s latest run with its sinks' deliveries, as its own page shows them; "" if
    it was never judged."""
    run = item.runs.first()
    return trail_table(run) if run is not None else ""


def _release(request, here, deciding):
    """The Release button: the item shown goes back to the queue, and the next one is shown."""
    if not deciding:
        raise PermissionDenied
    try:
        item_id = uuid.UUID(request.POST.get("item", ""))
    except ValueError:
        return redirect(here)
    if processing.release(item_id, request.user):
        messages.info(request, _("Released item %(item)s: other reviewers may take it.") % {"item": short(item_id)})
    return redirect(f"{here}?{urlencode({'after': item_id})}")


def decide(model_admin, request, object_id):
    """The decision buttons of an item's page: decide, then back to the item's page."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    content = model_admin.get_object(request, unquote(object_id))
    if content is None:
        raise Http404(_("No item with id %(id)s.") % {"id": object_id})
    page = reverse("admin:stash_content_change", args=[content.pk])
    form = DecisionForm(request.POST)
    if form.is_valid() and form.cleaned_data["item"] != content.pk:
        form.add_error("item", _("This is not the item of this page."))
    refusal = _decide(model_admin, request, form, page)
    return refusal if refusal is not None else redirect(page)


def _decide(admin, request, form, back_url, stash=None):
    """Apply the decision ``form`` holds and say what became of it (logged in the item's history
    with the note). Returns a 400 answer for bad input, having changed nothing; None otherwise.
    Raises ``PermissionDenied`` without the change permission on items."""
    if not admin.has_change_permission(request):
        raise PermissionDenied
    if not form.is_valid():
        return refused(admin, request, form.errors, back_url)
    data = form.cleaned_data
    outcome = processing.decide(data["item"], data["decision"], request.user, data["note"], data["status"], stash)
    content = outcome.content
    if content is None:
        messages.warning(
            request, _("Item %(item)s no longer exists. Nothing was changed.") % {"item": short(data["item"])}
        )
    elif outcome.refused:
        messages.error(request, outcome.message)
    elif outcome.applied:
        done = (FIRST_APPROVAL if outcome.first_approval else DONE[outcome.decision]) % {
            "item": short(content.pk),
            "status": content.get_status_display(),
        }
        admin.log_change(request, content, f"{done} {data['note']}".strip())
        messages.success(request, done)
    else:
        messages.warning(request, stale(content, data["status"], outcome.decision))
    return None


def stale(content, seen, decision):
    """Why a decision on ``content``, seen with status ``seen``, changed nothing."""
    values = {
        "item": short(content.pk),
        "status": content.get_status_display(),
        "seen": Content.Status(seen).label,
        "decision": BUTTONS[decision].label,
    }
    if content.status == seen:
        return _("Item %(item)s is %(status)s: %(decision)s does not apply to it. Nothing was changed.") % values
    reviewer = content.reviewer
    if reviewer is not None:
        values["reviewer"] = reviewer.get_username()
        return (
            _(
                "Item %(item)s is no longer %(seen)s: %(reviewer)s has decided it meanwhile (it is %(status)s). "
                "Nothing was changed."
            )
            % values
        )
    return _("Item %(item)s is no longer %(seen)s: it is %(status)s now. Nothing was changed.") % values


def refused(admin, request, errors, back_url):
    """Bad input to a decision or the queue: what was wrong, field by field, with a 400."""
    context = {
        **admin.admin_site.each_context(request),
        "title": _("Nothing was changed"),
        "errors": errors,
        "back_url": back_url,
    }
    return TemplateResponse(request, "admin/stash/refused.html", context, status=400)
