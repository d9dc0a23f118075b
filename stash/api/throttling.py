"""Throttles for anonymous callers, with rates from ``settings.STASH_THROTTLE_RATES``."""
from django.conf import settings
from rest_framework.throttling import AnonRateThrottle


class SettingsRateThrottle(AnonRateThrottle):
    """Counts anonymous requests per client address; the rate is read per request, by ``scope``."""

    def get_rate(self):
        return settings.STASH_THROTTLE_RATES[self.scope]


class AnonymousSubmitThrottle(SettingsRateThrottle):
    """Anonymous submissions (to stashes that take them)."""

    scope = "anon_submit"


class TokenThrottle(SettingsRateThrottle):
    """Requests for a token: password guessing is slow."""

    scope = "auth_token"
