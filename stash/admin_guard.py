"""The golden examples' guard on the admin's saves of hooks: before the stash page or a hook's page
saves, the stash's examples run against the hooks as edited. A stash that blocks (``examples_policy``)
refuses a change that breaks one, with a form error listing each; one that warns saves it, and the
page says which examples broke.

    warning = check(stash, hooks)        # ValidationError (block), else what to warn of ("" if nothing)
    warn(request, warning)               # once saved, as a warning message
"""
import copy

from django.contrib import messages
from django.core.exceptions import ValidationError
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
        return _("Saved, but the golden examples could not be run. %(error)s") % {"error": exc}
    if not broken:
        return ""
    return ngettext("Saved, but this change breaks a golden example: %(lines)s",
                    "Saved, but this change breaks %(count)d golden examples: %(lines)s", len(broken)) % {
        "count": len(broken), "lines": " | ".join(lines(broken))}


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
