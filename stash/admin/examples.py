"""Golden examples in the admin: their own admin (registered when ``stash.admin`` imports this), a
stash's examples and "Run examples" (each one passed, or what went wrong), and "Make an example"
from an item (its page, a replay's rows)."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _, gettext_lazy

from stash import processing
from stash.admin import formatting
from stash.admin.forms import PrettyJSONField
from stash.admin.views.tools import stash_context, stash_or_404
from stash.models import Example
from stash.processing import limits

#: The button of the examples page that runs them.
RUN = "_run"


class ExampleForm(forms.ModelForm):
    """A golden example: its payload as indented JSON, checked as the stash checks a submission."""

    payload = PrettyJSONField(
        label=gettext_lazy("payload"),
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 12, "cols": 80, "class": "stash-json"}),
        help_text=gettext_lazy("A JSON object, as a submitter would send it."),
    )

    service_answers = PrettyJSONField(
        label=gettext_lazy("service answers"),
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80, "class": "stash-json"}),
        help_text=gettext_lazy(
            "Optional: the answer of an asynchronous hook's outside service, by the hook's label, e.g. "
            '{"Vendor": {"outcome": "drop", "reason": "toxic"}} (outcome keep, drop or hold). The example\'s '
            "run goes on with it; without one it stops where the item would wait (expect “waiting”)."
        ),
    )

    class Meta:
        model = Example
        fields = ["stash", "name", "payload", "verdict", "reason_code", "hook", "service_answers"]

    def clean_service_answers(self):
        value = self.cleaned_data.get("service_answers")
        return {} if value in (None, "") else value

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None and cleaned.get("stash") is not None:
            limits.check_new_examples(cleaned["stash"].pk)
        return cleaned


def examples(model_admin, request, object_id):
    """The stash's golden examples; "Run examples" (a POST of ``RUN``) runs them against its current
    hooks and shows each result. Nothing is saved."""
    stash = stash_or_404(model_admin, request, object_id)
    if not request.user.has_perm("stash.view_example"):
        raise PermissionDenied
    listed, results = list(stash.examples.order_by("name")), None
    if request.method == "POST" and RUN in request.POST:
        try:
            results = processing.run_examples(stash, examples=listed)
        except processing.Unanswered as exc:
            messages.error(request, _("The examples could not be run: %(error)s") % {"error": exc})
    context = {
        **stash_context(model_admin, request, stash, _("Golden examples of %(stash)s") % {"stash": stash}),
        "examples": listed,
        "run": RUN,
        "may_add": request.user.has_perm("stash.add_example"),
        "results": None if results is None else list(zip(listed, results, strict=True)),
        "failed": sum(1 for result in results or [] if not result.passed),
    }
    return TemplateResponse(request, "admin/stash/stash/examples.html", context)


def make_example(model_admin, request, object_id):
    """ "Make an example" of an item (``model_admin`` is the items' admin): a golden example of its
    stash expecting the item's verdict, then that example's page to edit it."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    content = model_admin.get_object(request, unquote(object_id))
    if content is None:
        raise Http404(_("No item with id %(id)s.") % {"id": object_id})
    if not (model_admin.has_view_permission(request, content) and request.user.has_perm("stash.add_example")):
        raise PermissionDenied
    try:
        example = processing.example_from(content, request.user)
    except ValueError as exc:
        messages.error(request, _("No example was made: %(error)s") % {"error": exc})
        return redirect(reverse("admin:stash_content_change", args=[content.pk]))
    messages.success(
        request,
        _("Example “%(name)s” made: %(stash)s must give this payload the verdict %(verdict)s. Edit it below.")
        % {"name": example.name, "stash": content.stash.slug, "verdict": example.get_verdict_display()},
    )
    return redirect(reverse("admin:stash_example_change", args=[example.pk]))


@admin.register(Example)
class ExampleAdmin(admin.ModelAdmin):
    """Golden examples: a payload and the verdict (reason code, deciding hook) its stash must give it."""

    form = ExampleForm
    list_display = ["name", "stash", "expected", "reason_code", "hook", "made_from", "created_by", "created_at"]
    list_filter = ["stash", "verdict"]
    list_select_related = ["stash", "created_by"]
    search_fields = ["name", "reason_code", "hook"]
    readonly_fields = ["made_from", "created_by", "created_at"]
    fieldsets = [
        (None, {"fields": ["stash", "name", "payload"]}),
        (gettext_lazy("Expected"), {"fields": ["verdict", "reason_code", "hook", "service_answers"]}),
        (gettext_lazy("History"), {"fields": ["made_from", "created_by", "created_at"]}),
    ]

    class Media:
        css = {"all": ["stash/admin.css"]}

    def get_fieldsets(self, request, obj=None):
        return self.fieldsets[:2] if obj is None else self.fieldsets

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    @admin.display(description=gettext_lazy("expected verdict"), ordering="verdict")
    def expected(self, obj):
        return formatting.badge(obj.verdict, obj.get_verdict_display())

    @admin.display(description=gettext_lazy("made from item"))
    def made_from(self, obj):
        if obj.content_id is None:
            return "–"
        return format_html(
            '<a href="{}">{}</a>', reverse("admin:stash_content_change", args=[obj.content_id]), str(obj.content_id)[:8]
        )
