"""Web pages: the stashes you may submit to, the submit form, and an item's status and trail."""

import json

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.translation import gettext as _, ngettext

from stash import processing
from stash.core.exceptions import PayloadTooLarge, StashFull
from stash.models import Content, Stash
from stash.ops import access
from stash.web.appeal_forms import appeal_context
from stash.web.forms import SubmitForm
from stash.web.schema_form import SchemaSubmitForm
from stash.web.wording import trail_in_words, verdict_sentence

# Ids of the items this browser submitted, so that an anonymous submitter can follow them.
SESSION_KEY = processing.SUBMITTED_SESSION_KEY
SESSION_LIMIT = 50


def index(request):
    stashes = processing.submittable_stashes(request.user)
    return render(request, "stash/index.html", {"stashes": stashes})


def submit(request, slug):
    stash = get_object_or_404(Stash, slug=slug, is_active=True)
    if not processing.may_submit(request.user, stash):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        raise PermissionDenied(_("You may not submit to this stash."))
    form = submit_form(stash, request)
    if request.method == "POST" and (wait := access.over_rate(request, "anon_submit")) is not None:
        # The anonymous API's limit, on the same count: the form is no way around it.
        form.add_error(
            None,
            ngettext(
                "Too many submissions from this address: try again in %(n)d second.",
                "Too many submissions from this address: try again in %(n)d seconds.",
                wait,
            )
            % {"n": wait},
        )
        return _refused(request, stash, form, wait)
    if request.method == "POST" and form.is_valid():
        try:
            content, _created = processing.submit(
                stash, form.payload, request.user, Content.Source.FORM, canonical=form.canonical
            )
        except StashFull as exc:  # max_waiting: the workers are behind
            form.add_error(None, str(exc))
            return _refused(request, stash, form, exc.retry_after)
        except (ValidationError, PayloadTooLarge) as exc:  # e.g. the stash was closed meanwhile
            form.add_error(None, getattr(exc, "messages", None) or str(exc))
        else:
            submitted = request.session.get(SESSION_KEY, [])
            request.session[SESSION_KEY] = [*submitted, str(content.pk)][-SESSION_LIMIT:]
            return redirect("stash:content", pk=content.pk)
    return render(request, "stash/submit.html", {"stash": stash, "form": form})


def submit_form(stash, request):
    """The stash's submit form: one field per property of its payload schema, if it has one
    (``processing.payload_schema``), else a text, a file and JSON data."""
    schema = processing.payload_schema(stash)
    if schema is not None:
        return SchemaSubmitForm(stash, schema, request.POST or None)
    return SubmitForm(stash, request.POST or None, request.FILES or None)


def _refused(request, stash, form, wait):
    """The form again, with its error, as 429 with ``Retry-After: wait``."""
    response = render(request, "stash/submit.html", {"stash": stash, "form": form}, status=429)
    response["Retry-After"] = str(wait)
    return response


def content(request, pk):
    item = visible_content(request, pk)
    if item is None:
        return redirect_to_login(request.get_full_path())
    return content_page(request, item)


def content_page(request, item, appeal_form=None, status=200):
    """The item's page: its payload, verdict and trail, and its appeal (``appeal_form`` with errors)."""
    return render(
        request,
        "stash/content.html",
        {
            "content": item,
            **_verdict_context(request, item),
            "statement": processing.statements.current(item),
            **_payload_context(item),
            **appeal_context(request, item, appeal_form),
        },
        status=status,
    )


def content_status(request, pk):
    """The item's status as JSON, with the verdict section rendered: the status page polls it."""
    item = visible_content(request, pk)
    if item is None:
        return JsonResponse({"detail": _("Log in to see this item.")}, status=401)
    context = _verdict_context(request, item)
    return JsonResponse(
        {
            "status": item.status,
            "done": context["done"],
            "html": render_to_string("stash/_verdict.html", {"content": item, **context}, request),
            # The payload as stored: a transform may have changed it since the page was drawn.
            "payload_html": render_to_string("stash/_payload.html", {"content": item, **_payload_context(item)}),
        }
    )


# Payload keys the status page shows in their own way (a file by its name only).
_SHOWN_APART = ("text", "filename", "b64_file", "data")


def _payload_context(item):
    """The payload as the status page shows it: its text, file name and data, and any other
    properties (a payload made by a schema's form) as label and value."""
    payload = item.payload if isinstance(item.payload, dict) else {}
    data = payload.get("data")
    return {
        # Indented JSON, keys sorted: PostgreSQL keeps no order of keys (escaped by the template).
        "data_json": json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) if data else "",
        "properties": [
            (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
            for key, value in sorted(payload.items())
            if key not in _SHOWN_APART
        ],
    }


def visible_content(request, pk):
    """The item if this user (or this browser) may see it; None: log in first; Http404: no such item."""
    item = Content.objects.select_related("stash").filter(pk=pk).first()
    if item is not None and (
        str(item.pk) in request.session.get(SESSION_KEY, [])
        or processing.visible_contents(request.user).filter(pk=item.pk).exists()
    ):
        return item
    if not request.user.is_authenticated:
        return None
    raise Http404(_("No such item."))


def _verdict_context(request, item):
    """The verdict in words; the technical detail (failures' text, the recorded reason) only for
    people who may view every item: its submitter reads plain sentences."""
    run = item.runs.first()
    technical = request.user.has_perm("stash.view_content")
    done = item.status in processing.DECIDED_STATUSES
    return {
        "done": done,
        "run": run,
        "verdict": verdict_sentence(item, run),
        "technical": technical,
        "steps": trail_in_words(run.trail, technical) if run else [],
        # Sinks act after the verdict; how their deliveries went is for staff to read.
        "deliveries": processing.deliveries_of(item.pk, run.revision) if run and technical and done else [],
    }
