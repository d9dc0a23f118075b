"""``/healthz``: 200 when the database and the broker answer, 503 (saying which failed) otherwise."""
import logging

from celery import current_app
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request):
    checks = {"database": _check(_database), "broker": _check(_broker)}
    healthy = all(result == "ok" for result in checks.values())
    return JsonResponse({"status": "ok" if healthy else "unavailable", "checks": checks},
                        status=200 if healthy else 503)


def _check(probe):
    try:
        probe()
    except Exception as exc:
        logger.warning("Health check %s failed: %s", probe.__name__, exc)
        return f"unreachable: {type(exc).__name__}"
    return "ok"


def _database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _broker():
    # A connection of its own, from the configured URL: never one of the app's pooled ones.
    with current_app.connection_for_write(settings.CELERY_BROKER_URL) as broker:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
