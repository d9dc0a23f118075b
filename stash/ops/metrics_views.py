"""``/metrics``: django-prometheus's series of this process and stash's ``stash_*`` series.

Open to a caller that sends ``Authorization: Bearer <STASH_METRICS_TOKEN>`` (when that setting is
set) or whose address (``access.client_address``) is in ``STASH_METRICS_ALLOWED_NETWORKS``
(loopback by default); anyone else gets 403 and nothing is read.
"""

import secrets

from django.conf import settings
from django.http import HttpResponseForbidden
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_prometheus.exports import ExportToDjangoView

from stash.ops import metrics as stash_metrics
from stash.ops.access import client_address, within

FORBIDDEN = (
    "Metrics are not open to this client: send the bearer token set in STASH_METRICS_TOKEN, or scrape "
    "from a network in STASH_METRICS_ALLOWED_NETWORKS.\n"
)


def allowed(request) -> bool:
    """True if ``request`` carries the metrics token, or comes from an allowed network."""
    token = settings.STASH_METRICS_TOKEN
    if token:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode()):
            return True
    return within(client_address(request), settings.STASH_METRICS_ALLOWED_NETWORKS)


@never_cache
@require_GET
def metrics(request):
    if not allowed(request):
        return HttpResponseForbidden(FORBIDDEN, content_type="text/plain; charset=utf-8")
    # django-prometheus answers for this process (or, with PROMETHEUS_MULTIPROC_DIR, for every
    # process of this server); the stash_ series come from the database, the same on any process.
    response = ExportToDjangoView(request)
    response.content += stash_metrics.exposition()
    return response
