"""Throttles for anonymous callers, with rates from ``settings.STASH_THROTTLE_RATES``.

They count as ``stash.ops.access.AddressRateThrottle`` does (the submit form too): per client address
as ``stash.ops.access.client_address`` gives it, so a client cannot reset its count by sending
X-Forwarded-For; a failing cache lets requests through with a warning.
"""

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_credentials
from rest_framework.exceptions import Throttled

from stash.models import unstorable
from stash.ops import access


class AnonymousSubmitThrottle(access.AddressRateThrottle):
    """Anonymous submissions (to stashes that take them)."""

    scope = "anon_submit"


class CallbackThrottle(access.AddressRateThrottle):
    """Outside services' answers at callback URLs (``STASH_CALLBACK_RATE``)."""

    scope = "callback"


class TokenThrottle(access.AddressRateThrottle):
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
