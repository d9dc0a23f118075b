"""The hook config admin: the list that drags into order for one stash, the page with the params form, the
actions."""

from functools import partial

from adminsortable2.admin import SortableAdminMixin
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.utils.translation import gettext_lazy as _, ngettext

from stash import processing
from stash.admin import guard as admin_guard
from stash.admin.base import (
    HOOK_ORDERING,
    OneChangePerPost,
    ShownParamsMixin,
    StyledAdmin,
    counters,
    hook_title,
    single_stash,
    without_secrets,
)
from stash.admin.forms import HookConfigPageForm, HookListFormSet
from stash.admin.views import tools as admin_views
from stash.models import HookConfig
from stash.processing import stats


@admin.register(HookConfig)
class HookConfigAdmin(
    admin_guard.GuardedHookChanges, OneChangePerPost, ShownParamsMixin, SortableAdminMixin, StyledAdmin
):
    form = HookConfigPageForm
    ordering = HOOK_ORDERING
    list_display = ["order", "title", "stash", "kind", "enabled", "mode", "on_error", "statistics"]
    list_display_links = ["title"]
    list_editable = ["enabled"]
    list_filter = ["stash", "enabled", "mode", "hook"]
    list_select_related = ["stash"]
    search_fields = ["label", "hook"]
    actions = ["enable", "disable", "duplicate", "move_to_top", "move_to_bottom"]
    fieldsets = [
        (None, {"fields": ["stash", "hook", "label", "enabled", "mode"]}),
        (_("Settings"), {"fields": ["params", "condition", "on_error", "timeout_ms", "cache_seconds"]}),
        (_("Precision"), {"fields": ["min_precision", "min_precision_count"]}),
        (_("Statistics"), {"fields": ["position", "statistics"]}),
    ]

    @property
    def change_list_template(self):
        # Adds the hint on reordering; extends sortable2's list, which extends the admin's.
        return "admin/stash/hookconfig/change_list.html"

    def get_ordering(self, request):
        if single_stash(request) is None:
            return ["stash__slug", *HOOK_ORDERING]
        return HOOK_ORDERING

    def get_readonly_fields(self, request, obj=None):
        # A hook stays in its stash: moving it would need a free position in the other one.
        return ["position", "statistics", "shown_params"] + (["stash"] if obj is not None else [])

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return self.fieldsets[:3]
        return self.fieldsets if self.has_change_permission(request, obj) else without_secrets(self.fieldsets)

    def get_actions(self, request):
        actions = super().get_actions(request)
        # sortable2's moves between pages shift positions one by one, which the unique
        # (stash, position) forbids; move to top / bottom go through one reorder instead.
        for name in [name for name in actions if name.startswith("move_to_") and name.endswith("_page")]:
            del actions[name]
        return actions

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        stats.attach(changelist.result_list)
        return changelist

    def get_changelist_formset(self, request, **kwargs):
        return super().get_changelist_formset(request, formset=HookListFormSet, **kwargs)

    def changelist_view(self, request, extra_context=None):
        extra_context = {"single_stash": single_stash(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        config = self.get_object(request, object_id)
        if request.method == "GET" and config is not None and config.is_missing:
            self.message_user(
                request,
                _(
                    "The hook %(hook)r is not registered: this config fails by its on-error "
                    "policy. You can still disable it."
                )
                % {"hook": config.hook},
                messages.WARNING,
            )
        if request.method == "GET" and config is not None and processing.auto_observed_notice(config):
            self.message_user(request, processing.auto_observed_notice(config), messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        # A new hook keeps position 0: the model appends it under the stash's lock (sortable2's
        # save_model would read max + 1 without one).
        processing.save_hook(obj)

    def delete_model(self, request, obj):
        processing.delete_hooks(HookConfig.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        processing.delete_hooks(queryset)

    def update_order(self, request):
        # A drag the golden examples refuse answers 409: hook_order.js reloads the list, which says why.
        return admin_guard.guarded(
            request,
            partial(admin_views.update_order, self, request),
            lambda why: HttpResponse(why, status=409, content_type="text/plain"),
        )

    @admin.display(description="#", ordering="position")
    def order(self, obj):
        return obj.position

    @admin.display(description=_("hook"), ordering="label")
    def title(self, obj):
        return hook_title(obj)

    @admin.display(description=_("kind"))
    def kind(self, obj):
        hook_class = obj.hook_class
        return hook_class.kind if hook_class else "–"

    @admin.display(description=_("statistics"), ordering="runs_count")
    def statistics(self, obj):
        if obj.pk is not None and not hasattr(obj, "stats"):  # its own page; the list attaches them all
            stats.attach([obj])
        return counters(obj)

    @admin.action(description=_("Enable selected hooks"), permissions=["change"])
    def enable(self, request, queryset):
        self._set_enabled(request, queryset, True)

    @admin.action(description=_("Disable selected hooks"), permissions=["change"])
    def disable(self, request, queryset):
        self._set_enabled(request, queryset, False)

    def _set_enabled(self, request, queryset, enabled):
        count = processing.set_enabled(queryset, enabled)
        message = (
            ngettext("%d hook enabled.", "%d hooks enabled.", count)
            if enabled
            else ngettext("%d hook disabled.", "%d hooks disabled.", count)
        )
        self.message_user(request, message % count, messages.SUCCESS)

    @admin.action(description=_("Duplicate selected hooks (the copies start disabled)"), permissions=["add"])
    def duplicate(self, request, queryset):
        try:
            copied, skipped = processing.duplicate_hooks(queryset)
        except ValidationError as exc:
            self.message_user(
                request, _("Nothing was copied: %(error)s") % {"error": " ".join(exc.messages)}, messages.ERROR
            )
            return
        if copied:
            self.message_user(
                request,
                ngettext(
                    "%d hook copied, disabled, right after its original.",
                    "%d hooks copied, disabled, each right after its original.",
                    copied,
                )
                % copied,
                messages.SUCCESS,
            )
        if skipped:
            self.message_user(
                request,
                ngettext(
                    "%d hook was not copied: its hook is not registered.",
                    "%d hooks were not copied: their hooks are not registered.",
                    skipped,
                )
                % skipped,
                messages.WARNING,
            )

    @admin.action(description=_("Move selected hooks to the top of their stash"), permissions=["change"])
    def move_to_top(self, request, queryset):
        self._move(request, queryset, top=True)

    @admin.action(description=_("Move selected hooks to the bottom of their stash"), permissions=["change"])
    def move_to_bottom(self, request, queryset):
        self._move(request, queryset, top=False)

    def _move(self, request, queryset, top):
        count = processing.move_hooks(queryset, top)
        message = (
            ngettext("%d hook moved to the top.", "%d hooks moved to the top.", count)
            if top
            else ngettext("%d hook moved to the bottom.", "%d hooks moved to the bottom.", count)
        )
        self.message_user(request, message % count, messages.SUCCESS)
