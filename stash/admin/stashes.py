"""The stash admin: a stash's page with its hooks in drag-and-drop order, its last 24 hours, its pipeline tools,
review and examples."""

from functools import partial

from adminsortable2.admin import SortableAdminBase, SortableTabularInline
from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _, ngettext

from stash import processing
from stash.admin import charts, examples as admin_examples, guard as admin_guard
from stash.admin.base import (
    HOOK_ORDERING,
    STASH_FILTER,
    OneChangePerPost,
    ShownParamsMixin,
    StyledAdmin,
    counters,
    without_secrets,
)
from stash.admin.forms import HookConfigInlineForm, HookConfigInlineFormSet
from stash.admin.views import (
    judging as admin_judging,
    pipelines as admin_pipelines,
    review as admin_review,
    shadows as admin_shadows,
    statements as admin_statements,
    tools as admin_views,
    versions as admin_versions,
)
from stash.models import HookConfig, Stash


class HookConfigInline(ShownParamsMixin, SortableTabularInline):
    model = HookConfig
    verbose_name = _("hook")
    verbose_name_plural = _("hooks, in the order they run")
    # sortable2's table, with the sinks apart and buttons that move a hook one step (hook_order.js).
    template = "admin/stash/stash/hooks_inline.html"
    form = HookConfigInlineForm
    formset = HookConfigInlineFormSet
    ordering = HOOK_ORDERING
    extra = 0
    show_change_link = True
    # Laid out in lines by admin.css: the short fields, then params, condition and counters.
    fields = ["hook", "label", "enabled", "mode", "on_error", "timeout_ms", "params", "condition", "hook_counters"]
    readonly_fields = ["hook_counters", "shown_params"]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return fields if self.has_change_permission(request, obj) else without_secrets(fields)

    @admin.display(description=_("counters"))
    def hook_counters(self, obj):
        return counters(obj)

    class Media:
        js = ["stash/hook_order.js"]


def activity_context(stash, configs):
    """The stash page's charts of the last hours (nothing where the database cannot compute them)."""
    try:
        activity = processing.hook_activity(stash, configs)
    except processing.ActivityUnsupported:
        return {}
    return {"activity": activity, "activity_rows": charts.activity_rows(activity), "metrics": charts.METRICS}


@admin.register(Stash)
class StashAdmin(admin_guard.GuardedStashChanges, OneChangePerPost, SortableAdminBase, StyledAdmin):
    list_display = ["name", "slug", "is_active", "hooks_summary", "held", "pipeline_version", "tools"]
    list_display_links = ["name"]
    list_filter = ["is_active"]
    search_fields = ["slug", "name"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["pipeline_version"]
    fields = [
        "name",
        "slug",
        "description",
        "is_active",
        "allow_anonymous",
        "on_error",
        "max_payload_bytes",
        "max_waiting",
        "queue",
        "examples_policy",
        "pipeline_version",
    ]
    inlines = [HookConfigInline]

    def get_fieldsets(self, request, obj=None):
        # On a stash's page they come after its hooks, under a heading of their own.
        fieldsets = super().get_fieldsets(request, obj)
        return fieldsets if obj is None else [(_("Settings"), options) for _name, options in fieldsets]

    @admin.display(description=_("pipeline version"), ordering="config_version")
    def pipeline_version(self, obj):
        """``config_version``, by the one name people read (the API and the design keep the field's)."""
        return obj.config_version

    def get_queryset(self, request):
        return processing.with_held_counts(super().get_queryset(request)).annotate(
            hook_count=Count("hooks", distinct=True),
            enabled_count=Count("hooks", filter=Q(hooks__enabled=True), distinct=True),
        )

    @admin.display(description=_("hooks"))
    def hooks_summary(self, obj):
        url = reverse("admin:stash_hookconfig_changelist") + "?" + urlencode({STASH_FILTER: obj.pk})
        return format_html(
            '<a href="{}">{}</a>',
            url,
            ngettext("%(n)d hook, %(on)d enabled", "%(n)d hooks, %(on)d enabled", obj.hook_count)
            % {"n": obj.hook_count, "on": obj.enabled_count},
        )

    @admin.display(description=_("held for review"), ordering="held_count")
    def held(self, obj):
        return format_html(
            '<a href="{}" title="{}">{}</a>',
            reverse("admin:stash_stash_review", args=[obj.pk]),
            _("Review the held items, oldest first"),
            obj.held_count,
        )

    @admin.display(description=_("try the hooks"))
    def tools(self, obj):
        return format_html(
            '<a href="{}">{}</a> · <a href="{}">{}</a> · <a href="{}?stash={}">{}</a>',
            reverse("admin:stash_stash_simulate", args=[obj.pk]),
            _("simulate"),
            reverse("admin:stash_stash_replay", args=[obj.pk]),
            _("replay"),
            reverse("admin:stash_content_failures"),
            obj.pk,
            _("failures"),
        )

    def get_urls(self):
        def view(function, route, name):
            return path(
                f"<path:object_id>/{route}",
                self.admin_site.admin_view(partial(function, self)),
                name=f"stash_stash_{name}",
            )

        return [
            view(admin_views.simulate, "simulate/", "simulate"),
            view(admin_views.replay, "replay/", "replay"),
            view(admin_judging.judging, "judging/", "judging"),
            view(admin_judging.judging_counts, "judging/counts/", "judging_counts"),
            view(admin_review.review, "review/", "review"),
            view(admin_pipelines.download, "pipeline/download/", "download"),
            view(admin_pipelines.upload, "pipeline/upload/", "upload"),
            view(admin_versions.versions, "versions/", "versions"),
            view(admin_versions.compare, "versions/compare/", "compare"),
            view(admin_versions.version, "versions/<int:number>/", "version"),
            view(admin_versions.restore, "versions/<int:number>/restore/", "restore"),
            view(admin_examples.examples, "examples/", "examples"),
            view(admin_shadows.shadows, "shadows/", "shadows"),
            view(admin_shadows.shadow, "shadows/<int:shadow_id>/", "shadow"),
            view(admin_shadows.stop, "shadows/<int:shadow_id>/stop/", "shadow_stop"),
            view(admin_shadows.promote, "shadows/<int:shadow_id>/promote/", "shadow_promote"),
            view(admin_statements.statement_policy, "statements/", "statements"),
        ] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        stash = self.get_object(request, object_id)
        if request.method == "GET" and stash is not None:
            configs = list(stash.hooks.in_order())
            for config in configs:
                if config.is_missing:
                    self.message_user(
                        request,
                        _(
                            "Hook %(title)s uses %(hook)r, which is not registered: it fails by "
                            "its on-error policy. Disable or delete it."
                        )
                        % {"title": config.title, "hook": config.hook},
                        messages.WARNING,
                    )
                if processing.auto_observed_notice(config):
                    self.message_user(request, processing.auto_observed_notice(config), messages.WARNING)
            extra_context = {**activity_context(stash, configs), **(extra_context or {})}
        if stash is not None:
            extra_context = {"pipeline_tools": admin_pipelines.tools(self, request, stash), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context)

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # Golden examples that refused the hooks as edited are listed at the top of the page, with
        # the stash's own errors (the hooks table only points there).
        refused = [
            line
            for formset in context.get("inline_admin_formsets", [])
            for line in getattr(formset.formset, "examples_refused", ())
        ]
        if refused:
            context["adminform"].form.add_error(None, refused)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_related(self, request, form, formsets, change):
        # Rows are saved in place; then the dragged order, and no gaps from deleted rows.
        hooks = next((formset for formset in formsets if isinstance(formset, HookConfigInlineFormSet)), None)
        dragged = None
        if hooks is not None and request.user.has_perm("stash.change_hookconfig"):
            dragged = hooks.wanted_positions()
        with processing.saving_hooks(form.instance, dragged):
            super().save_related(request, form, formsets, change)
