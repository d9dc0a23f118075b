"""The golden examples' guard on the admin's changes of hooks. Before the stash page or a hook's page
saves, the stash's examples run against the hooks as edited; the hooks list's toggles and actions,
deletes and drags run them against the hooks as the change leaves them, before it is kept. A stash
that blocks (``examples_policy``) refuses a change that breaks one, with a form error (or an error
message) listing each; one that warns keeps it, and the page says which examples broke.

    warning = check(stash, hooks)        # ValidationError (block), else what to warn of ("" if nothing)
    warn(request, warning)               # once saved, as a warning message
    return guarded(request, view, refused)   # a view's change, kept only if the examples allow it
"""
import copy
from functools import partial

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponseRedirect
from django.utils.translation import gettext as _, ngettext

from . import processing
from .models import ExamplesPolicy, HookConfig


def check(stash, hooks):
    """Run ``stash``'s examples against ``hooks`` (in run order, as a save would leave them).

    Raises ``ValidationError``, a line per broken example, when the stash refuses such a change
    (or when its examples could not run in time); returns what to warn with once saved otherwise
    ("" when every example passes, or the stash has none: then no process is started).
    """
    try:
        broken = processing.check_change(stash, hooks)
    except processing.ExamplesBroken as exc:
        refusal = _("Not saved: this change breaks golden examples of %(stash)s, which refuses such changes. "
                    "Nothing was changed.") % {"stash": stash.slug}
        raise ValidationError([refusal, *lines(exc.broken)]) from None
    except processing.Unanswered as exc:
        if stash.examples_policy == ExamplesPolicy.BLOCK:
            raise ValidationError(_("Not saved: the golden examples could not be run. %(error)s")
                                  % {"error": exc}) from None
        return not_run(exc)
    return saved_but(broken)


def saved_but(broken):
    """What to warn of once a change that breaks the examples ``broken`` was kept ("" if none)."""
    if not broken:
        return ""
    return ngettext("Saved, but this change breaks a golden example: %(lines)s",
                    "Saved, but this change breaks %(count)d golden examples: %(lines)s", len(broken)) % {
        "count": len(broken), "lines": " | ".join(lines(broken))}


def not_run(error):
    """What to warn of once a change was kept whose examples could not run in time (``error``: why)."""
    return _("Saved, but the golden examples could not be run. %(error)s") % {"error": error}


def guarded(request, view, refused=None):
    """``view()``'s answer to a POST that may change hooks (a toggle, an action, a delete, a drag),
    as one change the changed stashes' golden examples check before it is kept
    (``processing.checked_change``). Refused, nothing of it is kept, the messages it queued are
    dropped, an error message says why, and ``refused(why)`` answers (by default: back to the page).
    Kept, the page warns of the examples it broke in stashes that only warn."""
    if request.method != "POST":
        return view()
    try:
        with processing.checked_change() as checked:
            response = view()
    except processing.ExamplesBroken as exc:
        return _refuse(request, refusal(exc, _("Nothing was changed.")), refused)
    except processing.Unanswered as exc:
        return _refuse(request, _("Nothing was changed: the golden examples could not be run. %(error)s")
                       % {"error": exc}, refused)
    warn(request, saved_but(checked.broken))
    for why in checked.unanswered:
        warn(request, not_run(why))
    return response


def _refuse(request, why, refused):
    # Iterating the message storage marks what it holds as used, so none of it is shown (Django's
    # documented behaviour): the refused change's own "n hooks disabled." goes with it.
    for _message in messages.get_messages(request):
        pass
    messages.error(request, why)
    return refused(why) if refused is not None else HttpResponseRedirect(request.get_full_path())


class GuardedHookChanges:
    """A ``ModelAdmin`` of hook configs whose list (toggles, actions), deletes and drags are guarded
    by the golden examples (``guarded``); its change page guards its own form."""

    def changelist_view(self, request, *args, **kwargs):
        return guarded(request, partial(super().changelist_view, request, *args, **kwargs))

    def delete_view(self, request, *args, **kwargs):
        return guarded(request, partial(super().delete_view, request, *args, **kwargs))


def refusal(exc, outcome):
    """What to say when ``ExamplesBroken`` ``exc`` refused a change: ``outcome`` ("Nothing was
    changed."), why, and a line per broken example."""
    return " | ".join([_("%(outcome)s It breaks golden examples of %(stash)s, which refuses such changes.")
                       % {"outcome": outcome, "stash": exc.stash.slug}, *lines(exc.broken)])


def broken_anyway(plan):
    """What to warn of after an import or a restore (``plan``) that a stash which warns let through."""
    if not plan.broken:
        return ""
    return _("It breaks golden examples: %(lines)s") % {"lines": " | ".join(lines(plan.broken))}


def lines(results):
    """A line per broken example: its name, what it expected and what it got, and why."""
    said = []
    for result in results:
        line = _("Example “%(name)s”: %(problems)s") % {"name": result.name, "problems": "; ".join(result.problems)}
        said.append(_("%(line)s (reason: %(reason)s)") % {"line": line, "reason": result.reason}
                    if result.reason else line)
    return said


def warn(request, warning):
    """After a save the stash let through: what ``check`` warned of, as a warning message."""
    if warning:
        messages.warning(request, warning)


def with_edited(config):
    """The hooks of ``config``'s stash in run order, with ``config`` as edited in place of the
    saved one (a new one last, where a save appends it); copies, so nothing is saved."""
    edited = copy.copy(config)
    hooks = [edited if saved.pk == config.pk else saved
             for saved in HookConfig.objects.filter(stash_id=config.stash_id).in_order()]
    return hooks if config.pk is not None else hooks + [edited]
