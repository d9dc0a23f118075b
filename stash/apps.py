"""App config: connects the signals, wires the version recorder and discovers hooks, once, at start-up."""

import importlib
import logging
from functools import partial
from importlib.metadata import entry_points

from django.apps import AppConfig, apps
from django.utils.module_loading import module_has_submodule

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "stash.hooks"


class StashConfig(AppConfig):
    name = "stash"
    verbose_name = "Stash"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from stash import checks, signals  # noqa: F401 - connect receivers, register checks
        from stash.db import versioning
        from stash.models import PipelineVersion
        from stash.ops import task_signals  # noqa: F401 - connect the Celery signals' receivers

        # One change, one version: db.versioning records each change through the model's own method.
        versioning.recorder = PipelineVersion.record
        discover_hooks()


def discover_hooks():
    """Import every installed app's ``stash_hooks`` module and the ``stash.hooks`` entry points.

    A module that fails to import is logged and recorded in ``registry.load_errors`` (a system
    check reports it); the other hooks still load.
    """
    from stash.core import registry

    for app_config in apps.get_app_configs():
        if module_has_submodule(app_config.module, "stash_hooks"):
            # The module name comes from INSTALLED_APPS, never from user input.
            name = f"{app_config.name}.stash_hooks"
            _load(name, partial(importlib.import_module, name), registry)
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        _load(f"entry point {entry_point.name} ({entry_point.value})", entry_point.load, registry)


def _load(source, load, registry):
    try:
        load()
    except Exception as exc:
        logger.exception("Could not load hooks from %s", source)
        registry.load_errors.append((source, f"{type(exc).__name__}: {exc}"))
