"""The submit forms: a text, an optional file and optional JSON data; or, for a stash whose
payload has a schema, one field per property. Either payload is checked like any other."""

import base64
import json

from django import forms
from django.core.exceptions import ValidationError
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _

from stash import processing
from stash.core.exceptions import PayloadTooLarge


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


class PayloadForm(forms.Form):
    """A form that builds a payload for ``stash``: ``payload`` and its ``canonical`` JSON once valid."""

    def __init__(self, stash, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stash = stash
        self.payload = None
        self.canonical = None  # the payload's canonical JSON, once checked

    def check(self, payload):
        """Keep ``payload`` if the stash takes it (``processing.check_payload``), else raise its error."""
        try:
            self.canonical = processing.check_payload(self.stash, payload)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from exc
        except PayloadTooLarge as exc:
            hint = _("A file counts a third more: it is stored base64-encoded.") if "b64_file" in payload else ""
            raise ValidationError(f"{exc} {hint}".strip()) from exc
        self.payload = payload


class SubmitForm(PayloadForm):
    """Builds the payload ``{"text", "filename", "b64_file", "data"}`` from what was given."""

    text = forms.CharField(label=_("Text"), required=False, widget=forms.Textarea(attrs={"rows": 6}))
    file = forms.FileField(label=_("File"), required=False, help_text=_("Optional; stored base64-encoded."))
    data = forms.CharField(
        label=_("Data"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text=_('Optional JSON object, e.g. {"source": "phone", "probability": 0.7}'),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload and upload.size > self.stash.max_payload_bytes:
            # Refused before it is read: it could never fit once encoded.
            sizes = {"size": filesizeformat(upload.size), "max": filesizeformat(self.stash.max_payload_bytes)}
            raise ValidationError(_("The file is %(size)s; this stash takes at most %(max)s in all.") % sizes)
        return upload

    def clean_data(self):
        raw = self.cleaned_data["data"].strip()
        if not raw:
            return None
        try:
            data = json.loads(raw, parse_constant=_no_constants)
        except ValueError as exc:
            raise ValidationError(_("This is not valid JSON: %(error)s") % {"error": exc}) from exc
        if not isinstance(data, dict):
            raise ValidationError(_('Data must be a JSON object, like {"key": "value"}.'))
        return data

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        payload = {}
        if cleaned.get("text"):
            payload["text"] = cleaned["text"]
        if cleaned.get("file"):
            payload["filename"] = cleaned["file"].name
            payload["b64_file"] = base64.b64encode(cleaned["file"].read()).decode("ascii")
        if cleaned.get("data") is not None:
            payload["data"] = cleaned["data"]
        if not payload:
            raise ValidationError(_("Give a text, a file or some data."))
        self.check(payload)
        return cleaned
