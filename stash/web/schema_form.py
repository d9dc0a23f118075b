"""The submit form of a stash whose payload has a schema: one field per property, and the payload
is the object those fields make.

The fields follow ``stash.core.schema_fields``, the rule the admin's params form follows too: a
string, a number, a whole number, a yes/no box, a choice, or a list (one per line; a list of
choices as boxes to tick). The form checks what each field can (its type, a required value, a
choice, limits of size and length); the stash's hooks, the schema's among them, judge the rest as
they judge a payload from the API.
"""

import json
import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from stash.core import schema_fields
from stash.web.forms import PayloadForm

# A property's name as the form field's, when it can be (else "_<n>", which no such name is: names
# are free in JSON).
_PLAIN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
# A string longer than this may be typed on several lines.
_LONG_TEXT = 200


class SchemaSubmitForm(PayloadForm):
    """One field per property of ``schema`` (which ``schema_fields.fields`` must accept)."""

    prefix = "payload"
    mark_required = True

    def __init__(self, stash, schema, *args, **kwargs):
        super().__init__(stash, *args, **kwargs)
        needed = schema_fields.required(schema)
        self.keys = {}  # form field -> payload key
        for index, (key, field) in enumerate(schema_fields.fields(schema).items()):
            spec = schema["properties"][key]
            name = key if _PLAIN_NAME.match(key) else f"_{index}"
            self.fields[name] = form_field(field, key in needed)
            self.fields[name].label = spec.get("title") if isinstance(spec.get("title"), str) else key
            help_texts = [spec["description"]] if isinstance(spec.get("description"), str) else []
            if isinstance(self.fields[name], ListField):
                help_texts.append(_("One per line."))
            self.fields[name].help_text = " ".join(help_texts)
            self.keys[name] = key

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        payload = {
            self.keys[name]: value
            for name, value in cleaned.items()
            if isinstance(value, bool) or value not in (None, "", [])
        }
        self.check(payload)
        return cleaned


def form_field(field, required):
    """The Django form field of one ``schema_fields`` field; ``required``: the schema requires it."""
    kind, default = field["type"], field.get("default")
    if "enum" in field:
        values = field["enum"]
        choices = [(json.dumps(value), _shown(value)) for value in values]
        return forms.TypedChoiceField(
            choices=[("", "—"), *choices],  # chosen on purpose, never by leaving the first
            coerce=json.loads,
            empty_value=None,
            required=required,
            initial=json.dumps(default) if default in values else None,
        )
    if kind == "boolean":
        # Unticked is an answer (false), so a required yes/no is always given.
        return forms.BooleanField(required=False, initial=default is True)
    if kind == "integer":
        return forms.IntegerField(
            required=required, min_value=field.get("minimum"), max_value=field.get("maximum"), initial=default
        )
    if kind == "number":
        return NumberField(
            required=required, min_value=field.get("minimum"), max_value=field.get("maximum"), initial=default
        )
    if kind == "array":
        return ListField(field, required=required)
    long_text = field.get("maxLength") is None or field["maxLength"] > _LONG_TEXT
    return forms.CharField(
        required=required,
        min_length=field.get("minLength"),
        max_length=field.get("maxLength"),
        initial=default if isinstance(default, str) else None,
        widget=forms.Textarea(attrs={"rows": 3}) if long_text else forms.TextInput,
    )


def _shown(value):
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    return str(value)


class NumberField(forms.FloatField):
    """A number as JSON has it: 3 stays 3, 2.5 is 2.5."""

    def to_python(self, value):
        number = super().to_python(value)
        return int(number) if number is not None and number.is_integer() and abs(number) < 2**53 else number


class ListField(forms.Field):
    """A list: ticked boxes for a list of choices, else one item per line, each checked as its own
    field would be (an error names its line); ``minItems`` and ``maxItems`` hold."""

    def __init__(self, field, **kwargs):
        self.item = form_field(field["items"], required=True)
        self.min_items, self.max_items = field.get("minItems"), field.get("maxItems")
        default = field.get("default") if isinstance(field.get("default"), list) else None
        if isinstance(self.item, forms.TypedChoiceField):
            kwargs["widget"] = forms.CheckboxSelectMultiple(choices=self.item.choices)
            kwargs["initial"] = [json.dumps(value) for value in default or []]
        else:
            kwargs["widget"] = forms.Textarea(attrs={"rows": 4})
            kwargs["initial"] = "\n".join(str(value) for value in default or []) or None
        super().__init__(**kwargs)

    def to_python(self, value):
        if isinstance(self.widget, forms.CheckboxSelectMultiple):
            texts = value or []
            return [self.item.clean(text) for text in texts]
        items, errors = [], []
        for number, line in enumerate((value or "").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(self.item.clean(line.strip()))
            except ValidationError as exc:
                errors += [_("Line %(n)d: %(error)s") % {"n": number, "error": message} for message in exc.messages]
        if errors:
            raise ValidationError(errors)
        return items

    def validate(self, value):
        if self.required and not value:
            raise ValidationError(self.error_messages["required"], code="required")
        if value and self.min_items is not None and len(value) < self.min_items:
            raise ValidationError(_("Give at least %(n)d.") % {"n": self.min_items})
        if self.max_items is not None and len(value) > self.max_items:
            raise ValidationError(_("Give at most %(n)d.") % {"n": self.max_items})
