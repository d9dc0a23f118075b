"""A plain admin registration of the stash models (the full hook-management admin builds on it)."""
from django.contrib import admin

from .models import Content, HookConfig, PipelineRun, Stash


class HookConfigInline(admin.TabularInline):
    model = HookConfig
    extra = 0
    fields = ["position", "hook", "label", "params", "enabled", "mode", "on_error", "condition", "timeout_ms"]


@admin.register(Stash)
class StashAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "is_active", "on_error", "config_version"]
    search_fields = ["slug", "name"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [HookConfigInline]


@admin.register(HookConfig)
class HookConfigAdmin(admin.ModelAdmin):
    list_display = ["__str__", "stash", "hook", "position", "enabled", "mode", "runs_count", "dropped_count",
                    "errors_count"]
    list_filter = ["stash", "enabled", "mode"]
    list_select_related = ["stash"]


@admin.register(Content)
class ContentAdmin(admin.ModelAdmin):
    list_display = ["id", "stash", "status", "reason", "revision", "source", "created_at"]
    list_filter = ["stash", "status", "source"]
    list_select_related = ["stash"]
    readonly_fields = ["status", "reason", "rejected_by", "revision", "processed_revision", "attempts",
                       "original_payload", "processed_at", "created_at", "updated_at"]


@admin.register(PipelineRun)
class PipelineRunAdmin(admin.ModelAdmin):
    list_display = ["content", "revision", "config_version", "outcome", "reason", "finished_at"]
    list_filter = ["outcome"]
    readonly_fields = [f.name for f in PipelineRun._meta.fields]
