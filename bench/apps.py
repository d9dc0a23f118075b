"""The bench app: a plain model, Celery tasks and one API view, written the way a good engineer would."""
from django.apps import AppConfig


class BenchConfig(AppConfig):
    name = "bench"
    verbose_name = "Benchmark baseline"
    default_auto_field = "django.db.models.BigAutoField"
