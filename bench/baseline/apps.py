"""The bench app: a plain model, Celery tasks and one API view, written the way a good engineer would."""

from django.apps import AppConfig


class BenchConfig(AppConfig):
    name = "bench.baseline"
    label = "bench"  # its label as the app `bench`: its tables (bench_item) and migrations stay as they were
    verbose_name = "Benchmark baseline"
    default_auto_field = "django.db.models.BigAutoField"
