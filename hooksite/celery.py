"""The Celery app `hooksite`: `celery -A hooksite worker` and `celery -A hooksite beat`."""

import logging
import os
import time

from celery import Celery, signals
from structlog.contextvars import bind_contextvars, unbind_contextvars

from . import broker  # noqa: F401 - filesystem:// (the embedded default) writes messages atomically

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hooksite.settings")

logger = logging.getLogger(__name__)

app = Celery("hooksite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.setup_logging.connect(dispatch_uid="hooksite.setup_logging")
def setup_logging(loglevel=None, **kwargs):
    """Workers and beat log as the site does (``LOGGING``: ``LOG_FORMAT``, one handler), at the
    level of ``--loglevel`` when given, instead of Celery's own format."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)


@signals.worker_process_init.connect(dispatch_uid="hooksite.start_tracing")
def start_tracing(**kwargs):
    """Each pool process traces with an exporter of its own (with ``OTEL_EXPORTER_OTLP_ENDPOINT``;
    see ``stash.db.tracing``): an exporter's thread does not survive the fork."""
    from stash.db import tracing

    tracing.configure()


@signals.worker_process_init.connect(dispatch_uid="hooksite.load_classifier_models")
def load_classifier_models(**kwargs):
    """Each pool process loads the models of the bundled classifiers that an enabled hook config uses
    (``stash.hooks.classifiers.warm_up``; lingua's high accuracy models take about 15 s) before it
    takes a message, so that no judging message waits for them. A hook enabled later loads its model
    when a process first builds its pipeline. Celery waits ``CELERY_WORKER_PROC_ALIVE_TIMEOUT`` for
    a new pool process to be up. If the configs cannot be read, the models load on first use."""
    from stash.hooks import classifiers
    from stash.models import HookConfig

    try:
        configs = list(
            HookConfig.objects.enabled().filter(hook__in=classifiers.PRELOADED).values_list("hook", "params")
        )
    except Exception:
        logger.warning("Could not read the hook configs: the classifiers' models load on first use", exc_info=True)
        return
    started = time.monotonic()
    loaded = classifiers.warm_up(configs)
    if loaded:
        logger.info("Loaded the models of %s in %.1f s", ", ".join(loaded), time.monotonic() - started)


@signals.worker_init.connect(dispatch_uid="hooksite.start_tracing_in_worker")
def start_tracing_in_worker(sender=None, **kwargs):
    """A worker whose tasks run in its own process (the sinks worker's threads pool, or solo) traces
    there; a prefork worker's pool processes start their own (above)."""
    pool = getattr(sender, "pool_cls", "prefork")
    if "prefork" not in (pool if isinstance(pool, str) else pool.__module__):
        from stash.db import tracing

        tracing.configure()


@signals.task_prerun.connect(dispatch_uid="hooksite.bind_task")
def bind_task(sender=None, task_id=None, **kwargs):
    """A task's lines carry its name and id."""
    bind_contextvars(task=sender.name, task_id=task_id)


@signals.task_postrun.connect(dispatch_uid="hooksite.unbind_task")
def unbind_task(**kwargs):
    unbind_contextvars("task", "task_id")


@signals.task_prerun.connect(dispatch_uid="hooksite.close_old_connections")
def close_old_connections(sender=None, **kwargs):
    """Before each task, as Django does before each request: drop a broken or expired connection.
    (Not for a task run eagerly: it runs inside its caller's transaction.)"""
    from django.db import close_old_connections

    if not getattr(sender.request, "is_eager", False):
        close_old_connections()
