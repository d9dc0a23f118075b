"""Admin forms: the hook picker, the params editor, indented JSON editors, the hooks inline that reorders
atomically (and, like a hook's own page, checks the golden examples before a save), and accessible
names for the inputs of table rows."""

import copy
import json

from adminsortable2.admin import CustomInlineFormSet
from django import forms
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import ValidationError
from django.forms.fields import InvalidJSONInput
from django.forms.models import BaseModelFormSet
from django.utils.html import json_script
from django.utils.translation import gettext, gettext_lazy as _

from stash import processing
from stash.admin import guard as admin_guard
from stash.admin.hook_groups import number_in_groups
from stash.admin.params import ParamsWidget, error_map, form_schema, indented
from stash.core import registry
from stash.core.exceptions import InvalidParams, PayloadTooLarge, StashFull
from stash.models import Content, HookConfig
from stash.processing import limits, stats


class PrettyJSONField(forms.JSONField):
    """A JSON object edited in a textarea, shown indented (and escaped, like any field)."""

    def prepare_value(self, value):
        if isinstance(value, InvalidJSONInput):
            return value
        # A refused value comes back to the page as typed: a lone surrogate as its escape, \ud800.
        return indented(value)


def describe_params(schema) -> str:
    """A hook's params schema as lines a person reads: name, type, required, default, description."""
    required = set(schema.get("required", ()))
    lines = []
    for name, spec in schema.get("properties", {}).items():
        spec = spec if isinstance(spec, dict) else {}  # a schema may say just `true`
        kind = spec.get("type", "any")
        if "enum" in spec:
            kind = "one of " + ", ".join(json.dumps(choice) for choice in spec["enum"])
        elif kind == "array" and isinstance(spec.get("items"), dict):
            kind = f"list of {spec['items'].get('type', 'any')}"
        facts = [kind] + (["required"] if name in required else [])
        if spec.get("writeOnly"):
            facts.append(str(_("secret: never shown once saved; leave it out to keep it")))
        if "default" in spec:
            facts.append(f"default {json.dumps(spec['default'])}")
        line = f"{name} ({', '.join(facts)})"
        lines.append(f"{line}: {spec['description']}" if spec.get("description") else line)
    return "\n".join(lines) or str(_("No params."))


def _choice_label(hook_class) -> str:
    return f"{hook_class.name} ({hook_class.kind}): {hook_class.description()}"


def hook_choices(current=""):
    """The registered hooks, read now (never frozen in a migration), plus ``current`` if it has gone."""
    choices = [("", "---------")]
    choices += [(cls.name, _choice_label(cls)) for cls in registry.all()]
    if current and not registry.is_registered(current):
        choices.append((current, _("%(name)s (not registered)") % {"name": current}))
    return choices


def hook_picker() -> list[dict[str, str]]:
    """What the hook picker (hook_picker.js) shows of each registered hook, in the order of the choices:
    its choice, its params described, its JSON Schema and its defaults (indented JSON).

    A page holds it once (``json_script`` with the id ``stash-hook-picker``), however many pickers
    it has: the hook's own page after its picker, the stash's page after its table of hooks.
    """
    return [
        {
            "name": cls.name,
            "label": _choice_label(cls),
            "params": describe_params(cls.params_schema),
            "schema": json.dumps(cls.params_schema, indent=2),
            "defaults": json.dumps(cls.default_params(), indent=2),
        }
        for cls in registry.all()
    ]


class HookSelect(forms.Select):
    """A select of hooks, followed by ``hook_picker`` for the picker script. ``shared``: a row of a
    table whose page holds ``hook_picker`` once for all its rows; the row lists only its own choice
    (``HookConfigInlineForm``) and the script adds the others from the page's."""

    shared = False

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if value and not registry.is_registered(value):
            option["attrs"]["data-description"] = _("This hook is not registered: it fails by its on-error policy.")
        return option

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        if self.shared:
            context["widget"]["attrs"]["data-hook-choices"] = "page"
        return context

    def render(self, name, value, attrs=None, renderer=None):
        html = super().render(name, value, attrs, renderer)
        return html if self.shared else html + json_script(hook_picker(), "stash-hook-picker")


class HookConfigForm(forms.ModelForm):
    """A configured hook: a registered hook picked by name, its params in a form made from the hook's
    schema (or as raw JSON), checked on save: a param that breaks the schema is named on the field."""

    hook = forms.ChoiceField(
        label=_("hook"),
        widget=HookSelect(attrs={"data-hook-picker": ""}),
        help_text=_("A registered hook; its params show its defaults, stored only once changed."),
    )
    params = PrettyJSONField(
        label=_("params"),
        required=False,
        initial=dict,
        widget=ParamsWidget(attrs={"rows": 6, "cols": 60, "class": "stash-json"}),
        help_text=_(
            "Checked against the hook's params schema: in a form made from it once "
            "the hook is saved, or as a JSON object. Secret params are never shown: "
            "leave them out (or empty) to keep them."
        ),
    )

    class Meta:
        model = HookConfig
        fields = [
            "stash",
            "hook",
            "label",
            "params",
            "enabled",
            "mode",
            "on_error",
            "condition",
            "timeout_ms",
            "cache_seconds",
            "min_precision",
            "min_precision_count",
        ]

    class Media:
        js = ["stash/hook_picker.js"]
        css = {"all": ["stash/admin.css"]}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["hook"].choices = hook_choices(self.instance.hook)
        for name in ("cache_seconds", "min_precision_count"):
            if name in self.fields:
                self.fields[name].required = False  # left out or blank: as it is
        if self.instance.pk is not None:
            # Secrets are written, never shown: the editor starts without them.
            self.initial["params"] = registry.shown_params(self.instance.hook, self.instance.params)
        if "params" in self.fields:
            hook = self.chosen_hook()
            widget = self.fields["params"].widget
            widget.hook = hook
            widget.schema = form_schema(registry.get(hook).params_schema) if registry.is_registered(hook) else None
            saved = self.instance.params if self.instance.pk is not None and hook == self.instance.hook else {}
            widget.stored = frozenset(saved) if isinstance(saved, dict) else frozenset()
            widget.open = self.instance.pk is None

    def chosen_hook(self) -> str:
        """The hook whose schema the params editor follows: as posted, or as saved."""
        if self.is_bound:
            return str(self.data.get(self.add_prefix("hook")) or "")
        return self.initial.get("hook") or self.instance.hook

    def clean_cache_seconds(self):
        value = self.cleaned_data.get("cache_seconds")
        return self.instance.cache_seconds if value is None else value

    def clean_min_precision_count(self):
        value = self.cleaned_data.get("min_precision_count")
        return self.instance.min_precision_count if value is None else value

    def clean_params(self):
        params = self.cleaned_data.get("params")
        params = {} if params is None else params
        # Params sent back without a secret keep the stored one; a secret typed anew replaces it.
        return processing.merge_secrets(self.instance, self.cleaned_data.get("hook"), params)

    def clean(self):
        cleaned = super().clean()
        # The inline's drag and drop posts a position for every row. It is applied after the
        # save by one atomic reorder, not row by row (which would collide with the unique
        # (stash, position)); without it in cleaned_data the instance keeps its position.
        self.wanted_position = cleaned.pop("position", None)
        hook = cleaned.get("hook")
        if "params" in cleaned and hook and registry.is_registered(hook):
            try:
                registry.get(hook).validate_params(cleaned["params"])
            except InvalidParams as exc:
                self.add_error("params", str(exc))
                self.fields["params"].widget.errors = error_map(exc.errors)
        return cleaned

    def add_error(self, field, error):
        if field is None and self.has_error("params") and hasattr(error, "error_dict"):
            # The model's check, after the form's: it checks the params it holds. When what was
            # typed was refused already, it holds the saved (or default) ones, and its complaint
            # about those would only mislead ("'fields' is a required property" for broken JSON).
            error = ValidationError({name: errors for name, errors in error.error_dict.items() if name != "params"})
            if not error.error_dict:
                return
        super().add_error(field, error)
        if self.has_error("params") and "params" in self.fields:
            self.fields["params"].widget.open = True  # the hooks table unfolds the params in error


class HookConfigInlineForm(HookConfigForm):
    """The picker in a row of the stash's hooks: the params folded behind a summary, a short condition."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "params" in self.fields:
            self.fields["params"].widget.folded = True
        if "hook" in self.fields:
            # The empty choice and the row's own: every row listing every hook, with its schema, made
            # the stash's page 3.6 MB at 100 hooks. The page holds them once (``HookSelect.shared``).
            widget = self.fields["hook"].widget
            widget.shared = True
            own = ("", self.chosen_hook(), self.instance.hook)
            widget.choices = [(key, label) for key, label in widget.choices if key in own]
        if "condition" in self.fields:
            self.fields["condition"].widget.attrs.update(rows=2, cols=22)


def name_inputs(form, row):
    """Name each visible input of ``form`` after its ``row`` and field: "Hook 2 (No spam): enabled".

    In a table the column header labels an input for the eye only; a screen reader needs a name on
    the input itself (WCAG 4.1.2).
    """
    for name, field in form.fields.items():
        if not field.widget.is_hidden:
            field.widget.attrs["aria-label"] = f"{row}: {field.label or name}"


def hook_row(config, index):
    """What a row of the stash's hooks is called: "Hook 2 (No spam)", or "New hook"."""
    if index is None or config.pk is None:
        return gettext("New hook")
    return gettext("Hook %(n)d (%(title)s)") % {"n": index + 1, "title": config.title}


class HookConfigPageForm(HookConfigForm):
    """A hook's own page. Its save is checked by the stash's golden examples (``admin_guard``); a
    change they refuse is shown as this form's error when the page is shown again."""

    def full_clean(self):
        super().full_clean()
        if self.is_bound and not self.errors and admin_guard.refused_lines():
            self.add_error(None, ValidationError(list(admin_guard.refused_lines())))

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None and cleaned.get("stash") is not None:
            limits.check_new_hooks(cleaned["stash"].pk)
        return cleaned


class HookConfigInlineFormSet(CustomInlineFormSet):
    """The hooks of a stash, with their statistics; see ``wanted_positions`` for their order.

    A save is checked by the stash's golden examples (``admin_guard``): a change they refuse is
    shown again with the formset invalid, its lines in ``examples_refused`` (the stash page shows
    them at its top). A draft that is only simulated turns ``guard_examples`` off.
    """

    guard_examples = True
    examples_refused: list[str] | tuple[()] = ()

    def hook_picker(self):
        """``hook_picker()``, which the stash's page puts after the table once for all its rows."""
        return hook_picker()

    def get_queryset(self):
        queryset = super().get_queryset()  # the same queryset on every call, evaluated once
        if getattr(self, "_with_stats", None) is not queryset:
            stats.attach(queryset)
            number_in_groups(queryset)
            self._with_stats = queryset
        return queryset

    def has_sinks(self):
        """Whether the page lists sinks, apart from the numbered filters and transforms."""
        return any(config.is_sink for config in self.get_queryset())

    def add_fields(self, form, index):
        super().add_fields(form, index)
        # Named by its number among the filters and transforms (as its caption shows it), or
        # among the sinks.
        config = form.instance
        if getattr(config, "is_sink", False):
            form.row_name = gettext("Sink %(n)d (%(title)s)") % {"n": config.sink_number, "title": config.title}
        else:
            number = getattr(config, "order_number", None)
            form.row_name = hook_row(config, index if number is None else number - 1)
        name_inputs(form, form.row_name)

    def get_max_order(self):
        # sortable2 gives a new hook this plus one: position 0, which makes the model append it
        # under the stash's row lock (the maximum, read here, would be read without it).
        return -1

    def clean(self):
        super().clean()
        added = [form for form in self.extra_forms if form.has_changed() and form not in self.deleted_forms]
        if added:  # a stash already past the limit can still be edited, and shrink
            limits.check_hooks(len(self.initial_forms) - len(self.deleted_forms) + len(added))
        if not self.guard_examples or any(self.errors) or not admin_guard.refused_lines():
            return
        self.examples_refused = list(admin_guard.refused_lines())
        raise ValidationError(gettext("These hooks break golden examples: see the list at the top of the page."))

    def wanted_positions(self):
        """{config id: position} as dragged, for the hooks that were on the page and stay."""
        deleted = self.deleted_forms
        return {
            form.instance.pk: form.wanted_position
            for form in self.initial_forms
            if getattr(form, "wanted_position", None) is not None and form not in deleted
        }

    def drafted(self):
        """The hooks as saving this (valid) formset would leave them, in run order, saving nothing:
        the rows that stay, as edited and dragged, then the new ones (see ``processing.drafted_hooks``)."""
        deleted = self.deleted_forms
        # Copies: ``drafted_hooks`` numbers the configs it is given, and these are the ones a save writes.
        kept = [
            (copy.copy(form.instance), getattr(form, "wanted_position", None))
            for form in self.initial_forms
            if form not in deleted
        ]
        added = [copy.copy(form.instance) for form in self.extra_forms if form.has_changed() and form not in deleted]
        return processing.drafted_hooks(kept, added)


class HookListFormSet(BaseModelFormSet):
    """The editable columns of the hooks list, each input named after its hook: "No spam in Audit: enabled"."""

    def add_fields(self, form, index):
        super().add_fields(form, index)
        config = form.instance
        if config.stash_id is None:  # the empty form, whose media a list with no rows reads: no row to name
            return
        name_inputs(form, gettext("%(hook)s in %(stash)s") % {"hook": config.title, "stash": config.stash})


class ReviewActionForm(ActionForm):
    """The action bar of the items list, with a note for review actions."""

    note = forms.CharField(
        label=_("Review note:"),
        required=False,
        max_length=1000,
        widget=forms.TextInput(attrs={"placeholder": _("why (optional)"), "size": 30}),
    )


class DecisionForm(forms.Form):
    """A person's decision on one item, as the review page and the item's page post it: the item,
    the status the person saw it in, the button pressed and an optional note."""

    item = forms.UUIDField(widget=forms.HiddenInput)
    status = forms.ChoiceField(choices=Content.Status.choices, widget=forms.HiddenInput)
    decision = forms.ChoiceField(choices=[(name, name) for name in processing.DECISIONS])
    note = forms.CharField(
        label=_("Note"),
        required=False,
        max_length=1000,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60, "placeholder": _("why (optional)")}),
    )


class SimulateForm(forms.Form):
    """A payload, or an item of the stash to run on, and whether to run every hook (verbose).

    ``stash`` and ``visible`` (the items the user may read) say which items may be named;
    ``cleaned_data["content"]`` is the item named, or None.
    """

    payload = PrettyJSONField(
        label=_("payload"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 12, "cols": 80, "class": "stash-json"}),
        help_text=_("A JSON object, as a submitter would send it. Nothing is saved."),
    )
    content_id = forms.UUIDField(
        label=_("or an item's id"),
        required=False,
        widget=forms.TextInput(attrs={"size": 40, "placeholder": _("an item of this stash")}),
        help_text=_("Run on the payload this item was submitted with (before any transform) instead of the one above."),
    )
    verbose = forms.BooleanField(
        label=_("verbose"),
        required=False,
        initial=True,
        help_text=_(
            "Run every enabled hook, even after the one that decides, and show "
            "the payload after each transform. The verdict is the same."
        ),
    )

    def __init__(self, *args, stash, visible, **kwargs):
        super().__init__(*args, **kwargs)
        self.stash, self.visible = stash, visible

    def clean(self):
        cleaned = super().clean()
        cleaned["content"] = None
        if cleaned.get("content_id") is not None:
            try:
                cleaned["content"] = processing.simulation_item(self.stash, cleaned["content_id"], self.visible)
            except ValidationError as exc:
                self.add_error(None, exc)
        elif cleaned.get("payload") is None and not self.has_error("payload") and not self.has_error("content_id"):
            self.add_error("payload", _("Give a payload, or the id of an item of this stash."))
        return cleaned


def parse_document(text):
    """The JSON in ``text`` (bytes or str) of a pipeline file; ``ValidationError`` saying why it is not JSON."""
    try:
        return json.loads(text)
    except UnicodeDecodeError:
        raise ValidationError(gettext("This file is not text in UTF-8.")) from None
    except ValueError as exc:
        raise ValidationError(gettext("This file is not JSON: %(error)s") % {"error": exc}) from None
    except RecursionError:
        raise ValidationError(gettext("This file nests its JSON too deeply to be a pipeline document.")) from None


def read_document_file(upload):
    """The JSON of an uploaded pipeline file, its size checked before it is read (``STASH_MAX_DOCUMENT_BYTES``);
    ``ValidationError`` saying why it cannot be one."""
    limits.check_document_bytes(upload.size)
    return parse_document(upload.read())


class ReplayForm(forms.Form):
    """How many of the latest items to replay, and optionally a pipeline file to replay instead of the
    current hooks. A file replayed once comes back as the text of its document (``document``, with its
    name in ``document_name``): the page keeps it, as the upload preview sends it."""

    last_n = forms.IntegerField(
        label=_("last items"),
        min_value=1,
        max_value=1000,
        initial=100,
        help_text=_("How many of the latest judged items to judge again (at most 1,000)."),
    )
    file = forms.FileField(
        label=_("pipeline file"),
        required=False,
        help_text=_(
            "Optional: a pipeline document (.json), as “Download pipeline” gives it, to replay instead of "
            "the current hooks. Nothing is saved."
        ),
    )

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        cleaned["document"], cleaned["document_name"] = None, ""
        try:
            if upload:
                cleaned["document"], cleaned["document_name"] = read_document_file(upload), upload.name
            elif self.data.get("document"):
                limits.check_document_bytes(len(self.data["document"].encode()))
                cleaned["document"] = parse_document(self.data["document"])
                cleaned["document_name"] = str(self.data.get("document_name", ""))[:255]
        except ValidationError as exc:
            self.add_error("file", exc)
        return cleaned


class ContentForm(forms.ModelForm):
    """An item as the admin adds or edits it: the payload as indented JSON, checked like any submission
    by ``user`` (the admin's ``get_form`` sets it)."""

    user = None
    payload = PrettyJSONField(
        label=_("payload"),
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 16, "cols": 80, "class": "stash-json"}),
        help_text=_("A JSON object. Saving a changed payload makes a new revision, judged again."),
    )

    class Meta:
        model = Content
        fields = ["stash", "payload", "idempotency_key"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.canonical = None  # the payload's canonical JSON, once checked

    def clean(self):
        cleaned = super().clean()
        if self.instance._state.adding and cleaned.get("idempotency_key"):
            try:
                processing.check_key(self.user, cleaned["idempotency_key"])
            except ValidationError as exc:
                self.add_error(None, exc)
        if self.instance._state.adding and cleaned.get("stash") is not None:
            try:
                processing.check_room(cleaned["stash"], take=False)  # its save asks again, and takes the room
            except StashFull as exc:
                self.add_error("stash", str(exc))
        if cleaned.get("stash") is not None and "payload" in cleaned:
            try:
                self.canonical = processing.check_payload(cleaned["stash"], cleaned["payload"])
            except PayloadTooLarge as exc:
                self.add_error("payload", str(exc))
            except ValidationError as exc:
                self.add_error(None, exc)
        return cleaned
