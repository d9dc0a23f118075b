"""The Celery app `hooksite`: `celery -A hooksite worker` and `celery -A hooksite beat`."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hooksite.settings")

app = Celery("hooksite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
