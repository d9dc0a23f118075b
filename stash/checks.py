"""System checks: hooks that failed to load are reported at start-up."""
from django.core.checks import Warning, register

from . import registry


@register()
def check_hook_modules(app_configs, **kwargs):
    return [
        Warning(f"Hooks from {source} could not be loaded: {message}",
                hint="Fix or uninstall that module; the other hooks are loaded.", id="stash.W001")
        for source, message in registry.load_errors
    ]
