"""A stash page's unsaved edits as a draft to simulate: validated as a save validates them, never saved.

The stash page's buttons "Simulate with these hooks (unsaved)" and "Replay these hooks (unsaved)"
post the whole change form (the stash's fields and its hooks formset) to the simulate page or the
replay page. ``read_draft`` builds the admin's own form and formset from that data, as the change
view does, and gives back the hooks as a save would leave them, or the errors a save would show;
either page sends the same fields again with each run, so the draft stays until the page is left.
"""

import copy
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext as _

from stash.admin.forms import HookConfigInlineFormSet, ReplayForm, SimulateForm
from stash.models import HookConfig, Stash

#: The name of the button that sends a draft, and of the hidden field that keeps it on the page.
DRAFT = "_draft"
# Fields of the simulate and replay pages' own forms and of the request, never carried as part of a draft.
_NOT_CARRIED = {"csrfmiddlewaretoken", *SimulateForm.base_fields, *ReplayForm.base_fields, "document", "document_name"}


@dataclass
class Draft:
    """The stash and its hooks as edited and not saved, or what a save would refuse."""

    stash: Stash
    hooks: list[HookConfig] = field(default_factory=list)  # every hook, in the order a save gives them
    errors: list[str] = field(default_factory=list)
    carried: list[tuple[str, str]] = field(default_factory=list)  # the posted fields, to send again

    @property
    def valid(self):
        return not self.errors

    @property
    def enabled_hooks(self):
        return [config for config in self.hooks if config.enabled]


def may_draft(model_admin, request, stash):
    """Whether the user may run hooks of their own choosing on ``stash`` (a draft, a pipeline file):
    they may change the stash and its hooks, as a save needs, since such hooks run with the stored
    params (secrets included) of the rows they keep."""
    return model_admin.has_change_permission(request, stash) and request.user.has_perm("stash.change_hookconfig")


def read_draft(model_admin, request, stash):
    """The draft in ``request.POST`` of ``stash``'s page, for ``model_admin`` (a ``StashAdmin``).

    Raises ``PermissionDenied`` unless the user may change the stash and its hooks (``may_draft``).
    """
    if not may_draft(model_admin, request, stash):
        raise PermissionDenied
    carried = [(name, value) for name, values in request.POST.lists() if name not in _NOT_CARRIED for value in values]
    # A copy: the page around the simulation shows the stash as saved.
    form = model_admin.get_form(request, stash, change=True)(request.POST, request.FILES, instance=copy.copy(stash))
    errors = _form_errors(form)
    drafted_stash = form.instance
    formset = None
    for formset_class, inline in model_admin.get_formsets_with_inlines(request, drafted_stash):
        prefix = formset_class.get_default_prefix()
        if issubclass(formset_class, HookConfigInlineFormSet):
            formset = formset_class(**model_admin.get_formset_kwargs(request, drafted_stash, inline, prefix))
            formset.guard_examples = False  # simulated, not saved: a broken example is no reason to refuse it
    if formset is None:  # the page has no hooks table for this user
        raise PermissionDenied
    errors += _formset_errors(formset)
    if errors:
        return Draft(stash=drafted_stash, errors=errors, carried=carried)
    return Draft(stash=drafted_stash, hooks=formset.drafted(), carried=carried)


def _form_errors(form):
    """The errors of a form as lines a person reads: "field: message"."""
    if form.is_valid():
        return []
    lines = []
    for name, messages in form.errors.items():
        label = form.fields[name].label if name in form.fields else None
        lines += [f"{label}: {message}" if label else str(message) for message in messages]
    return lines


def _formset_errors(formset):
    """The errors of the hooks formset, each row named by its place on the page and its title."""
    if formset.is_valid():
        return []
    lines = [str(message) for message in formset.non_form_errors()]
    for number, form in enumerate(formset.forms, start=1):
        if form.errors:
            title = form["label"].value() or form["hook"].value() or _("new hook")
            row = _("Hook %(number)d (%(title)s)") % {"number": number, "title": title}
            lines += [f"{row}: {line}" for line in _form_errors(form)]
    return lines
