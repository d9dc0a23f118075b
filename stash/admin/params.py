"""The params editor of a hook config: a form generated from the hook's JSON Schema, with raw JSON beside it.

The form is django-jsonform's widget, fed a schema derived from the hook's ``params_schema``
(``form_schema``); a hook whose schema it cannot render faithfully (a free-form object, a union
of types) gets raw JSON only. Either way the field posts one JSON text, so the form that holds the
widget checks it like any other: see ``HookConfigForm``.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.template.loader import render_to_string
from django.utils.translation import gettext
from django_jsonform.constants import JOIN_SYMBOL
from django_jsonform.widgets import JSONFormWidget

from stash.core import registry, schema_fields


def form_schema(params_schema: Any) -> dict[str, Any] | None:
    """The schema django-jsonform renders for a hook's ``params_schema``, or None for raw JSON only.

    Only an object of named params is rendered, each a field of ``schema_fields`` (the rule the
    public submit form follows too); a secret (``writeOnly``) becomes a password input left empty.
    """
    found = schema_fields.fields(params_schema)
    if found is None:
        return None
    properties = params_schema["properties"]
    keys = {name: {**_widget(field), "title": name, **_help(properties[name])} for name, field in found.items()}
    return {"type": "object", "keys": keys, "required": list(params_schema.get("required", []))}


def _widget(field: dict[str, Any]) -> dict[str, Any]:
    """A list of distinct choices as one multiple select, in django-jsonform's words."""
    unique = field.pop("uniqueItems", False)
    if field["type"] == "array" and unique and "enum" in field["items"]:
        field["items"]["widget"] = "multiselect"
    return field


def _help(spec: dict) -> dict[str, Any]:
    texts = [spec["description"]] if spec.get("description") else []
    if spec.get("writeOnly"):
        texts.append(gettext("Secret: never shown once saved; leave it empty to keep it."))
        return {"format": "password", "help_text": " ".join(texts)}
    return {"help_text": " ".join(texts)} if texts else {}


def is_blank(value: Any) -> bool:
    """A value the generated form leaves where nobody filled anything in."""
    return value is None or value == "" or value == [] or value == {}


def filled_in(params: dict[str, Any]) -> dict[str, Any]:
    """The params as the generated form posts them, without what nobody filled in: blank list items
    (the form shows one empty input in an empty list), then blank params (left out)."""
    params = {
        key: [item for item in value if not is_blank(item)] if isinstance(value, list) else value
        for key, value in params.items()
    }
    return {key: value for key, value in params.items() if not is_blank(value)}


def without_defaults(params: dict[str, Any], defaults: dict[str, Any], stored: frozenset[str]) -> dict[str, Any]:
    """``params`` without those at the hook's default that the saved config did not have (the form
    fills defaults in; a config that stored one keeps it). An unchanged save then changes nothing."""
    return {
        key: value
        for key, value in params.items()
        if key in stored or key not in defaults or _json(value) != _json(defaults[key])
    }


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # tells false from 0, as JSON does


def error_map(errors: dict[str, str]) -> dict[str, list[str]]:
    """``InvalidParams.errors`` (by dotted path) as the form's error map (by its coordinates)."""
    return {path.replace(".", JOIN_SYMBOL): [message] for path, message in errors.items() if path != "params"}


def summary(params: Any) -> str:
    """Params on one line, as the hooks table shows them folded: ``fields: ["text"] · allow_empty: true``."""
    if not isinstance(params, dict):
        return gettext("(not a JSON object)")
    if not params:
        return gettext("no params")
    return " · ".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in params.items())


def indented(value: Any) -> str:
    """``value`` as indented JSON for a textarea; a lone surrogate as its escape (``\\ud800``), as typed."""
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8", "backslashreplace").decode("utf-8")


def _may_hold_secrets(hook: str) -> bool:
    return not registry.is_registered(hook) or bool(registry.get(hook).secret_params())


def _object(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ParamsWidget(forms.Widget):
    """Params in a form generated from the hook's schema, with a "raw JSON" switch beside it.

    It posts ``<name>`` (the raw JSON), ``<name>_form`` (the form's JSON) and ``<name>_raw`` (the
    switch, on while the raw JSON is edited); the form's JSON is read only while the switch is
    off, with the params nobody filled in left out (so a secret left empty keeps the saved one).
    Either way a param the saved config lacks (``stored``) posted at the hook's default is left
    out: the form shows defaults, a save stores them only once changed (``without_defaults``).
    ``schema`` (from ``form_schema``) None: raw JSON only. ``folded``: behind a one-line summary
    that opens, as in the stash's table of hooks.
    """

    template_name = "admin/stash/params_editor.html"

    def __init__(
        self,
        attrs: dict[str, Any] | None = None,
        schema: dict[str, Any] | None = None,
        hook: str = "",
        folded: bool = False,
    ) -> None:
        super().__init__(attrs)
        self.schema = schema
        self.hook = hook
        self.folded = folded
        self.open = False
        self.errors: dict[str, list[str]] = {}
        self.posted_raw: bool | None = None  # how the params were posted: raw JSON or the form
        self.stored: frozenset[str] = frozenset()  # the params the saved config has, of this hook

    @property
    def media(self) -> forms.Media:
        # The same on every row (a row without a form may come first): the formset takes one row's.
        return JSONFormWidget(schema={}).media + forms.Media(js=["stash/params_editor.js"])

    def value_from_datadict(self, data, files, name):
        form_text = data.get(f"{name}_form")
        self.posted_raw = form_text is None or f"{name}_raw" in data
        defaults = registry.get(self.hook).default_params() if registry.is_registered(self.hook) else {}
        if self.posted_raw:
            text = data.get(name)
            params = _object(text)
            kept = None if params is None else without_defaults(params, defaults, self.stored)
            return text if kept == params or kept is None else json.dumps(kept, ensure_ascii=False)
        params = _object(form_text)
        if params is None:
            return form_text  # not from the form's script: refused as not valid JSON
        return json.dumps(without_defaults(filled_in(params), defaults, self.stored), ensure_ascii=False)

    def value_omitted_from_data(self, data, files, name):
        return name not in data and f"{name}_form" not in data

    def render(self, name, value, attrs=None, renderer=None):
        attrs = self.build_attrs(self.attrs, attrs)
        # A refused save comes back as typed, but for its secrets: those are never shown, and
        # text that is not a JSON object is shown back only for a hook known to have none.
        params = registry.shown_params(self.hook, _object(value))
        withheld = params is None and bool(value) and _may_hold_secrets(self.hook)
        if params is not None:
            value = indented(params)
        elif withheld:
            value = ""
        raw = forms.Textarea(attrs=attrs).render(name, value, renderer=renderer)
        form_html, raw_mode = "", True
        if self.schema is not None:
            # Keys the form has no input for would be lost in it: such params open as raw JSON.
            unknown = params is not None and bool(set(params) - set(self.schema["keys"]))
            raw_mode = self.posted_raw if self.posted_raw is not None else (params is None or unknown)
            widget = JSONFormWidget(schema=self.schema)
            widget.add_error(self.errors)
            form_html = widget.render(
                f"{name}_form", json.dumps(params or {}), attrs={"id": f"{attrs.get('id', name)}_form"}
            )
        return render_to_string(
            self.template_name,
            {
                "name": name,
                "raw": raw,
                "form": form_html,
                "raw_mode": raw_mode,
                "hook": self.hook,
                "folded": self.folded,
                "open": self.open or params is None,
                "summary": summary(params),
                "withheld": withheld,
            },
        )
