"""A stash's statement policy in the admin: an entry per reason code of its hooks (and the default),
saved as a change of the stash, with a preview of the statements recent items would get."""

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin.views.tools import stash_context, stash_or_404
from stash.core import statements as policies

#: What a blank choice means: the entry takes the value from the default (or the built-in one).
INHERIT = [("", gettext_lazy("(as the default)"))]
NEW = "new"


class EntryForm(forms.Form):
    """One entry of a policy: every field blank means "as the default"."""

    text = forms.CharField(
        label=gettext_lazy("text"),
        required=False,
        max_length=policies.ENTRY_KEYS["text"],
        widget=forms.Textarea(attrs={"rows": 2, "cols": 70}),
        help_text=gettext_lazy("What the submitter reads. Placeholders: %(names)s.")
        % {"names": ", ".join("{" + name + "}" for name in policies.PLACEHOLDERS)},
    )
    restriction = forms.ChoiceField(
        label=gettext_lazy("restriction"), required=False, choices=INHERIT + [(r, r) for r in policies.RESTRICTIONS]
    )
    ground = forms.ChoiceField(
        label=gettext_lazy("ground"),
        required=False,
        choices=INHERIT + [("terms", gettext_lazy("terms")), ("illegal", gettext_lazy("illegal content"))],
    )
    reference = forms.CharField(
        label=gettext_lazy("reference"),
        required=False,
        max_length=policies.ENTRY_KEYS["reference"],
        help_text=gettext_lazy("The clause of the terms, or the legal ground."),
    )
    url = forms.CharField(label=gettext_lazy("URL"), required=False, max_length=policies.ENTRY_KEYS["url"])
    category = forms.ChoiceField(
        label=gettext_lazy("DSA category"), required=False, choices=INHERIT + [(c, c) for c in policies.CATEGORIES]
    )

    def entry(self):
        """The entry as the policy stores it: only the keys given."""
        return {key: value for key, value in self.cleaned_data.items() if key in policies.ENTRY_KEYS and value}


class NewCodeForm(EntryForm):
    code = forms.CharField(
        label=gettext_lazy("reason code"),
        required=False,
        max_length=100,
        help_text=gettext_lazy("A code the stash's hooks give that is not listed above."),
    )
    field_order = ["code"]


class PreviewForm(forms.Form):
    items = forms.MultipleChoiceField(
        label=gettext_lazy("items to preview on"), required=False, widget=forms.CheckboxSelectMultiple
    )


def _forms(stash, data):
    policy = stash.statement_policy or {}
    codes = processing.statements.known_codes(stash)
    default = EntryForm(data, prefix="default", initial=policy.get("default") or {})
    entries = [
        (code, EntryForm(data, prefix=f"code-{n}", initial=(policy.get("codes") or {}).get(code) or {}))
        for n, code in enumerate(codes)
    ]
    return default, entries, NewCodeForm(data, prefix=NEW)


def _policy(default, entries, new):
    """The policy the forms give; None when one of them is invalid."""
    if not all(form.is_valid() for form in [default, new, *(form for _code, form in entries)]):
        return None
    codes = {code: form.entry() for code, form in entries if form.entry()}
    if new.cleaned_data["code"].strip():
        codes[new.cleaned_data["code"].strip()] = new.entry()
    policy = {"codes": codes}
    if default.entry():
        policy["default"] = default.entry()
    return policy


def _place_errors(errors, default, entries, new):
    """Put each of the policy's errors ("codes.link.url: must ...") on its form and field."""
    by_where = {"default": default, **{f"codes.{code}": form for code, form in entries}}
    if new.is_bound and new.cleaned_data.get("code"):
        by_where[f"codes.{new.cleaned_data['code'].strip()}"] = new
    rest = []
    for error in errors:
        head, _sep, message = error.partition(": ")
        where, _dot, key = head.rpartition(".")
        form = by_where.get(where)
        if form is not None and key in policies.ENTRY_KEYS:
            form.add_error(key, message)
        elif head in by_where:
            by_where[head].add_error(None, message)
        else:
            rest.append(error)
    return rest


def statement_policy(model_admin, request, object_id):
    """The statement policy editor of a stash: GET shows it; POST ``_preview`` shows the statements
    the chosen items would get (nothing saved); POST ``_save`` saves it as a change of the stash."""
    stash = stash_or_404(model_admin, request, object_id)
    if not model_admin.has_change_permission(request, stash):
        raise PermissionDenied
    data = request.POST if request.method == "POST" else None
    default, entries, new = _forms(stash, data)
    recent = processing.statements.recent_restricted(stash)
    preview_form = PreviewForm(data, initial={"items": [str(item.pk) for item in recent[:3]]})
    preview_form.fields["items"].choices = [
        (str(item.pk), f"{item.status} · {item.reason or '—'} · {str(item.pk)[:8]}") for item in recent
    ]
    errors, previews = [], None
    if data is not None:
        policy = _policy(default, entries, new)
        if policy is None:
            errors = [_("Correct the errors below.")]
        else:
            errors = _place_errors(policies.policy_errors(policy), default, entries, new)
            invalid = any(form.errors for form in [default, new, *(form for _code, form in entries)])
            if not errors and not invalid and "_save" in request.POST:
                try:
                    processing.statements.save_policy(stash, policy)
                except ValidationError as exc:
                    errors = exc.messages
                else:
                    messages.success(request, _("The statement policy of %(stash)s was saved.") % {"stash": stash})
                    return redirect("admin:stash_stash_statements", stash.pk)
            elif not errors and not invalid and preview_form.is_valid():
                chosen = set(preview_form.cleaned_data["items"]) or {str(item.pk) for item in recent[:3]}
                previews = processing.statements.preview(
                    stash, policy, [item for item in recent if str(item.pk) in chosen]
                )
            elif errors or invalid:
                errors = errors or [_("Correct the errors below.")]
    context = {
        **stash_context(model_admin, request, stash, _("Statement policy of %(stash)s") % {"stash": stash}),
        "default_form": default,
        "entries": entries,
        "new_form": new,
        "preview_form": preview_form,
        "recent": recent,
        "previews": previews,
        "policy_errors": errors,
    }
    return TemplateResponse(request, "admin/stash/stash/statement_policy.html", context)
