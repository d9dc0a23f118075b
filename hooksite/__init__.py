"""The stash Django project; the Celery app is loaded with it so shared tasks bind to it."""

from .celery import app as celery_app

__all__ = ("celery_app",)
