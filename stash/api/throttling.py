"""Throttles for anonymous callers, with rates from ``settings.STASH_THROTTLE_RATES``.

They count per client address as ``stash.access.client_address`` gives it: the socket's, unless
the settings declare proxies, so a client cannot reset its count by sending X-Forwarded-For.
"""
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_credentials
from django.conf import settings
from rest_framework.exceptions import Throttled
from rest_framework.throttling import AnonRateThrottle

from .. import access
from ..models import unstorable


class SettingsRateThrottle(AnonRateThrottle):
    """Counts anonymous requests per client address; the rate is read per request, by ``scope``."""

    def get_rate(self):
        return settings.STASH_THROTTLE_RATES[self.scope]

    def get_ident(self, request):
        return access.client_address(request)


class AnonymousSubmitThrottle(SettingsRateThrottle):
    """Anonymous submissions (to stashes that take them)."""

    scope = "anon_submit"


class TokenThrottle(SettingsRateThrottle):
    """Requests for a token: refused while the user or the address is locked out, and per address."""

    scope = "auth_token"

    def allow_request(self, request, view):
        data = request.data if isinstance(request.data, dict) else {}
        username = data.get("username") if isinstance(data.get("username"), str) else None
        if username is not None and unstorable(username, "username"):
            username = None  # names no user (and no database takes it): the address alone counts
        if not AxesProxyHandler.is_allowed(request, get_credentials(username)):
            locked = Throttled(detail=access.lockout_message(request))
            locked.wait = access.lockout_seconds(request)  # Retry-After, without DRF's "Expected available in"
            raise locked
        return super().allow_request(request, view)
