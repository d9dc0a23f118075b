"""The Celery app `hooksite`: `celery -A hooksite worker` and `celery -A hooksite beat`."""
import os

from celery import Celery, signals

from . import broker  # noqa: F401 - filesystem:// (the embedded default) writes messages atomically

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hooksite.settings")

app = Celery("hooksite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.task_prerun.connect(dispatch_uid="hooksite.close_old_connections")
def close_old_connections(sender=None, **kwargs):
    """Before each task, as Django does before each request: drop a broken or expired connection.
    (Not for a task run eagerly: it runs inside its caller's transaction.)"""
    from django.db import close_old_connections

    if not getattr(sender.request, "is_eager", False):
        close_old_connections()
