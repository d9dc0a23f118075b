"""System checks: hooks that failed to load, and hook settings that cannot work, reported at start-up."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError

from stash.core import registry
from stash.hooks.netguard import parse_networks


@register()
def check_hook_modules(app_configs, **kwargs):
    return [
        Warning(
            f"Hooks from {source} could not be loaded: {message}",
            hint="Fix or uninstall that module; the other hooks are loaded.",
            id="stash.W001",
        )
        for source, message in registry.load_errors
    ]


@register()
def check_hook_settings(app_configs, **kwargs):
    problems = []
    try:
        parse_networks(getattr(settings, "STASH_WEBHOOK_ALLOWED_NETWORKS", None) or ())
    except ValueError as exc:
        problems.append(
            Error(
                f"STASH_WEBHOOK_ALLOWED_NETWORKS: {exc}.",
                hint="List addresses or CIDR networks, comma-separated.",
                id="stash.E001",
            )
        )
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    if backend.endswith(("locmem.LocMemCache", "dummy.DummyCache")):
        problems.append(
            Warning(
                f"The default cache ({backend.rsplit('.', 1)[-1]}) is not shared between processes: "
                "rate_limit hooks count each worker's submissions apart.",
                hint="Set CACHE_URL to a Redis, or use the file cache of the default settings.",
                id="stash.W002",
            )
        )
    return problems


@register(Tags.database)
def check_public_url(app_configs, databases=None, **kwargs):
    """An asynchronous hook's service calls back at ``STASH_PUBLIC_URL``: warn when it is unset (outside
    DEBUG) while such a hook is enabled. Run with the database checks (``migrate``, ``check --database``)."""
    public = getattr(settings, "STASH_PUBLIC_URL", "")
    if public and not public.startswith(("http://", "https://")):
        return [
            Error(
                f"STASH_PUBLIC_URL must be an http:// or https:// URL, not {public!r}.",
                hint="The address outside services reach this site at, e.g. https://stash.example.com.",
                id="stash.E002",
            )
        ]
    if public or not databases:
        return []
    from stash.models import HookConfig

    try:
        waiting = HookConfig.objects.filter(hook="moderation_api", params__mode="async", enabled=True).exists()
    except DatabaseError:  # not migrated yet
        return []
    if not waiting:
        return []
    return [
        Warning(
            "An enabled moderation_api hook is in async mode but STASH_PUBLIC_URL is not set: its service "
            "has no callback URL to answer at, and the hook fails (its on_error decides).",
            hint="Set STASH_PUBLIC_URL to the address outside services reach this site at.",
            id="stash.W003",
        )
    ]
