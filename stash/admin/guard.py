"""The golden examples' guard on the admin's changes of hooks. Every POST of the stash page, a hook's
page, the hooks list (toggles, actions), deletes and drags is one change that
``processing.run_checked`` checks with no lock held: drafted and rolled back, its examples run
against the live version and the draft, then made again and kept if it still leaves what was
checked. A stash that blocks (``examples_policy``) refuses a change that breaks an example (one
that passed on the live version): a page's form says why (the view runs once more under the
refusal, which its forms add as their error: ``refused_lines``), other views with an error
message. Otherwise the page warns of the examples that do not pass (already failing, not run in
time, or broken in a stash that only warns).

    return guarded(request, view, refused)   # a view's change, kept only if the examples allow it
    return guarded_form(request, view)       # the same, for a page whose form says why it was refused
    refused_lines()                          # in a form's clean: why its change was refused, or ()
"""

from contextvars import ContextVar
from functools import partial

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.utils.translation import gettext as _, ngettext

from stash import processing
from stash.processing.examples import BREAKS

# Why the change the current request's forms make was refused (set while its view runs once more).
_refused: ContextVar[tuple[str, ...]] = ContextVar("stash_examples_refused", default=())


def guarded(request, view, refused=None):
    """``view()``'s answer to a POST that may change hooks (a toggle, an action, a delete, a drag),
    as one change kept only if the changed stashes' golden examples allow it. Refused, nothing of
    it is kept, the messages it queued are dropped, an error message says why, and
    ``refused(why)`` answers (by default: back to the page). Kept, the page warns of the examples
    that do not pass."""

    def refuse(exc):
        why = (
            refusal(exc, _("Nothing was changed."))
            if isinstance(exc, processing.ExamplesBroken)
            else _("Nothing was changed: the golden examples could not be run. %(error)s") % {"error": exc}
            if isinstance(exc, processing.Unanswered)
            else str(exc)
        )
        messages.error(request, why)
        return refused(why) if refused is not None else HttpResponseRedirect(request.get_full_path())

    return _guard(request, view, refuse)


def guarded_form(request, view):
    """``guarded`` for a page with a form (a hook's page, the stash page): refused, the view runs
    once more, its forms showing why as their error (``refused_lines``), and nothing is saved."""

    def refuse(exc):
        if isinstance(exc, processing.ExamplesBroken):
            lines_ = [
                _(
                    "Not saved: this change breaks golden examples of %(stash)s, which refuses such changes. "
                    "Nothing was changed."
                )
                % {"stash": exc.stash.slug},
                *lines(exc.broken),
            ]
        elif isinstance(exc, processing.Unanswered):
            lines_ = [_("Not saved: the golden examples could not be run. %(error)s") % {"error": exc}]
        else:
            lines_ = [str(exc)]
        token = _refused.set(tuple(lines_))
        try:
            return view()
        finally:
            _refused.reset(token)

    return _guard(request, view, refuse)


def refused_lines():
    """In a form's clean: why the change this request makes was refused (lines), or ()."""
    return _refused.get()


def _guard(request, view, refuse):
    if request.method != "POST":
        return view()
    try:
        response, checked = processing.run_checked(view, again=partial(_drop_messages, request))
    except (processing.ExamplesBroken, processing.Unanswered, processing.PipelineChanged) as exc:
        _drop_messages(request)
        return refuse(exc)
    warn(request, saved_but(checked.failing))
    for why in checked.unanswered:
        warn(request, not_run(why))
    return response


def _drop_messages(request):
    # Iterating the message storage marks what it holds as used, so none of it is shown (Django's
    # documented behaviour): a draft's or a refused change's own "n hooks disabled." goes with it.
    for _message in messages.get_messages(request):
        pass


def saved_but(failing):
    """What to warn of once a change was kept whose check found the examples ``failing`` not passing
    ("" if none): first those it breaks (a stash that only warns), then the others."""
    broken = [result for result in failing if result.status == BREAKS]
    others = [result for result in failing if result.status != BREAKS]
    said = []
    if broken:
        said.append(
            ngettext(
                "Saved, but this change breaks a golden example: %(lines)s",
                "Saved, but this change breaks %(count)d golden examples: %(lines)s",
                len(broken),
            )
            % {"count": len(broken), "lines": " | ".join(lines(broken))}
        )
    if others:
        said.append(
            ngettext(
                "Saved. A golden example does not pass, which this change did not break: %(lines)s",
                "Saved. %(count)d golden examples do not pass, which this change did not break: %(lines)s",
                len(others),
            )
            % {"count": len(others), "lines": " | ".join(lines(others))}
        )
    return " ".join(said)


def not_run(error):
    """What to warn of once a change was kept whose examples could not run (``error``: why)."""
    return _("Saved, but the golden examples could not be run. %(error)s") % {"error": error}


class GuardedStashChanges:
    """A ``ModelAdmin`` whose page's saves (a stash's settings and hooks) are guarded by the golden
    examples (``guarded_form``). Put it before ``OneChangePerPost``."""

    def changeform_view(self, request, *args, **kwargs):
        return guarded_form(request, partial(super().changeform_view, request, *args, **kwargs))


class GuardedHookChanges:
    """A ``ModelAdmin`` whose pages' changes of hooks (its page, its list's toggles and actions, its
    deletes) are guarded by the golden examples (``guarded``). Put it before ``OneChangePerPost``."""

    def changeform_view(self, request, *args, **kwargs):
        return guarded_form(request, partial(super().changeform_view, request, *args, **kwargs))

    def changelist_view(self, request, *args, **kwargs):
        return guarded(request, partial(super().changelist_view, request, *args, **kwargs))

    def delete_view(self, request, *args, **kwargs):
        return guarded(request, partial(super().delete_view, request, *args, **kwargs))


def refusal(exc, outcome):
    """What to say when ``ExamplesBroken`` ``exc`` refused a change: ``outcome`` ("Nothing was
    changed."), why, and a line per broken example."""
    return " | ".join(
        [
            _("%(outcome)s It breaks golden examples of %(stash)s, which refuses such changes.")
            % {"outcome": outcome, "stash": exc.stash.slug},
            *lines(exc.broken),
        ]
    )


def broken_anyway(plan):
    """What to warn of after an import or a restore (``plan``) that was made with examples not
    passing: those it breaks (a stash that only warns), then the others ("" if none)."""
    said = []
    if plan.broken:
        said.append(_("It breaks golden examples: %(lines)s") % {"lines": " | ".join(lines(plan.broken))})
    others = [result for result in plan.failing if not result.blocks]
    if others:
        said.append(
            _("Golden examples that do not pass, which it did not break: %(lines)s")
            % {"lines": " | ".join(lines(others))}
        )
    return " ".join(said)


def lines(results):
    """A line per broken example: its name, what it expected and what it got, and why."""
    said = []
    for result in results:
        line = _("Example “%(name)s”: %(problems)s") % {"name": result.name, "problems": "; ".join(result.problems)}
        if result.note:
            line = f"{line} ({result.note})"
        said.append(
            _("%(line)s (reason: %(reason)s)") % {"line": line, "reason": result.reason} if result.reason else line
        )
    return said


def warn(request, warning):
    """After a change the stash let through: what ``saved_but`` (or the like) warned of, as a warning message."""
    if warning:
        messages.warning(request, warning)
