"""Health and readiness probes: ``/healthz`` and ``/readyz``.

``/healthz`` answers 200 when the database and the broker answer, 503 (saying which failed)
otherwise.

``/readyz`` checks the same two, then whether a Celery worker answers a ping (``control.ping``
over the configured broker: the first answer ends the wait; none within
``STASH_READY_PING_TIMEOUT`` seconds is a failure), and reports each stash's queue lag: the age
in seconds of its oldest item that is ``pending`` or ``processing`` (0 when none is). It answers
503 when the database or the broker is down or no worker answered, and, when
``STASH_READY_MAX_LAG`` is set (seconds; 0 or blank: not checked), when a stash lags more.
Anyone is told ``{"status": "ok"}`` or ``{"status": "unavailable"}``; the checks, the worker's
name and the stashes' lag go only to staff and to the callers ``/metrics`` is open to
(``metrics_views.allowed``: the metrics token, or an allowed network).

A probe that fails is logged and named in the answer, never raised.
"""

import logging

from celery import current_app
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from stash.models import Content, Stash
from stash.ops.metrics_views import allowed

logger = logging.getLogger(__name__)

OK = "ok"


@never_cache
@require_GET
def healthz(request):
    return _answer(health())


@never_cache
@require_GET
def readyz(request):
    body = readiness()
    if not (allowed(request) or _is_staff(request)):
        body = {"status": body["status"]}
    return _answer(body)


def health():
    """``{"status", "checks": {"database", "broker"}}``, each check ``"ok"`` or what failed."""
    checks = {}
    _check("database", _database, checks)
    _check("broker", _broker, checks)
    return {"status": _status(checks), "checks": checks}


def readiness():
    """What ``health`` says, with two more checks, ``workers`` and ``lag``; ``worker``, the name
    of the worker that answered (or None), and ``lag``, seconds by stash slug (None when the
    database is down)."""
    checks = health()["checks"]
    worker = lag = None
    if checks["broker"] == OK:
        worker = _check("workers", answering_worker, checks)
        if worker is None and checks["workers"] == OK:
            checks["workers"] = f"no worker answered within {settings.STASH_READY_PING_TIMEOUT:g} s"
    else:
        checks["workers"] = "not checked: the broker is unreachable"
    if checks["database"] == OK:
        lag = _check("lag", queue_lag, checks, failure="failed")
    else:
        checks["lag"] = "not checked: the database is unreachable"
    max_lag = settings.STASH_READY_MAX_LAG
    over = [f"{slug} ({seconds:.0f} s)" for slug, seconds in (lag or {}).items() if max_lag and seconds > max_lag]
    if over:
        checks["lag"] = f"over {max_lag} s: {', '.join(over)}"
    return {"status": _status(checks), "checks": checks, "worker": worker, "lag": lag}


def answering_worker():
    """The name of the first worker that answers a ping over the configured broker, or None
    after ``STASH_READY_PING_TIMEOUT`` seconds."""
    with current_app.connection_for_write(settings.CELERY_BROKER_URL) as broker:
        replies = current_app.control.ping(timeout=settings.STASH_READY_PING_TIMEOUT, limit=1, connection=broker)
    return min((name for reply in replies for name in reply), default=None)


def queue_lag(now=None):
    """Seconds since the oldest ``pending`` or ``processing`` item of each stash was saved (at its
    current revision), by stash slug; 0 for a stash with none waiting."""
    lag = Content.objects.lag_by_stash(now)
    return {slug: round(lag.get(pk, 0.0), 3) for pk, slug in Stash.objects.order_by("slug").values_list("pk", "slug")}


def _answer(body):
    return JsonResponse(body, status=200 if body["status"] == OK else 503)


def _is_staff(request):
    """True for a signed-in staff member; False if the session cannot be read (the database down)."""
    try:
        return request.user.is_active and request.user.is_staff
    except Exception:
        logger.warning("Could not read the session of a /readyz caller; answering without details.")
        return False


def _status(checks):
    return OK if all(result == OK for result in checks.values()) else "unavailable"


def _check(name, probe, checks, failure="unreachable"):
    """Return ``probe()``, setting ``checks[name]`` to ``"ok"``; if it raises, log it, set
    ``checks[name]`` to ``"<failure>: <exception type>"`` and return None."""
    try:
        value = probe()
    except Exception as exc:
        logger.warning("Health check %s failed: %s", name, exc)
        checks[name] = f"{failure}: {type(exc).__name__}"
        return None
    checks[name] = OK
    return value


def _database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _broker():
    # A connection of its own, from the configured URL: never one of the app's pooled ones.
    with current_app.connection_for_write(settings.CELERY_BROKER_URL) as broker:
        broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
