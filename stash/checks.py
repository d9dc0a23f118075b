"""System checks: hooks that failed to load, and hook settings that cannot work, reported at start-up."""

from django.conf import settings
from django.core.checks import Error, Warning, register

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
