"""Who is asking: the client's address, the rates anonymous callers are held to, and the login lockout.

``client_address`` is the one rule every counter uses (the throttles, django-axes): the socket's
address, unless the socket is a proxy the settings declare, for ``X-Forwarded-For`` is anyone's
to send. ``AddressRateThrottle`` and ``over_rate`` count anonymous requests per address, for the
API and the submit form alike. ``LockoutBackend`` and ``lockout_response`` are django-axes'
backend and answer: too many failed logins for a user from one address, or from one address for
any users, are refused, with the reason, until the lockout time has passed.
"""

import ipaddress
import logging
import math

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _, ngettext
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)

#: Where the API answers (hooksite/urls.py mounts it there): JSON errors and lockouts under it.
API_PREFIX = "/api/"

_USERNAME_LENGTH = AccessAttempt._meta.get_field("username").max_length


def client_address(request) -> str:
    """The client's IP address: ``REMOTE_ADDR``, or the address that declared proxies forward.

    With ``STASH_TRUSTED_PROXIES``, ``X-Forwarded-For`` is read from the right past every trusted
    proxy: the first address that is not one is the client's. With ``STASH_NUM_PROXIES`` = n,
    it is the n-th address from the right. A forwarded value that is not an address is not
    believed: the socket's address is used.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    hops = [hop.strip() for hop in request.headers.get("x-forwarded-for", "").split(",") if hop.strip()]
    hops.append(remote)
    trusted = settings.STASH_TRUSTED_PROXIES
    if trusted:
        index = len(hops) - 1
        while index > 0 and within(hops[index], trusted):
            index -= 1
    else:
        index = max(len(hops) - 1 - settings.STASH_NUM_PROXIES, 0)
    try:
        return str(ipaddress.ip_address(hops[index]))
    except ValueError:
        return remote


def within(address, networks) -> bool:
    """True if ``address`` (text) is an IP address in one of ``networks``; an IPv4 address mapped
    into IPv6 (``::ffff:127.0.0.1``, from a server listening on both) counts as the IPv4 one."""
    try:
        address = ipaddress.ip_address(address)
    except ValueError:
        return False
    address = getattr(address, "ipv4_mapped", None) or address
    return any(address in network for network in networks)


class AddressRateThrottle(SimpleRateThrottle):
    """Counts anonymous requests per client address, at ``settings.STASH_THROTTLE_RATES[scope]``.

    The counts live in the cache. A cache that fails (down, or full under ``noeviction``) lets the
    request through and logs a warning: a submission is kept rather than refused for a counter,
    and password guessing stays limited by the login lockouts, which are kept in the database.
    """

    def __init__(self, scope=None):
        self.scope = scope or self.scope
        super().__init__()

    def get_rate(self):
        return settings.STASH_THROTTLE_RATES[self.scope]

    def get_cache_key(self, request, view):
        if request.user.is_authenticated:
            return None  # people who logged in are not counted here
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except Exception as exc:
            logger.warning(
                "The %s limit let a request from %s through uncounted: the cache failed (%s: %s).",
                self.scope,
                client_address(request),
                type(exc).__name__,
                exc,
            )
            return True


def over_rate(request, scope):
    """Count this request against ``scope``'s rate: None if it may go on, else the seconds to wait."""
    throttle = AddressRateThrottle(scope)
    if throttle.allow_request(request, None):
        return None
    return math.ceil(throttle.wait() or 1)


def attempted_username(request, credentials=None):
    """django-axes' ``AXES_USERNAME_CALLABLE``: the username a login gave (its credentials', else the
    posted one, as axes reads it), cut to the length axes' records hold. A longer one names no user,
    and PostgreSQL would refuse to store it: every login page answered 500."""
    field = settings.AXES_USERNAME_FORM_FIELD
    username = credentials.get(field) if credentials else getattr(request, "data", request.POST).get(field)
    return username[:_USERNAME_LENGTH] if isinstance(username, str) else username


class LoginAttemptHandler(AxesDatabaseHandler):
    """django-axes' database handler, but a successful login clears only that user's failures from
    that address: not the address's failures for other users (else logging in to an account of
    one's own would wipe the count of one's guesses at others')."""

    def reset_user_attempts(self, request, credentials=None):
        username = get_client_username(request, credentials)
        count, _deleted = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return count


class LockoutBackend(AxesStandaloneBackend):
    """Refuses every login of a user locked out at this address, or from a locked-out address,
    before the password is checked.

    A call without a request (the test client's ``login()``, a shell) has no client to count and
    goes on to the next backend; every login path of the site passes its request.
    """

    def authenticate(self, request=None, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def lockout_seconds(request=None) -> int:
    """How long a lockout lasts after the last failed login, in seconds."""
    return math.ceil(get_cool_off(request).total_seconds())


def lockout_message(request=None) -> str:
    minutes = math.ceil(lockout_seconds(request) / 60)
    return ngettext(
        "Too many failed logins from this address: try again in %(n)d minute.",
        "Too many failed logins from this address: try again in %(n)d minutes.",
        minutes,
    ) % {"n": minutes}


def lockout_response(request, original_response=None, credentials=None):
    """django-axes' answer to a locked-out login: 429 with the reason, JSON under /api/, a page elsewhere."""
    message = lockout_message(request)
    if request.path.startswith(API_PREFIX):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = render(
            request, "registration/locked_out.html", {"message": message, "title": _("Login locked")}, status=429
        )
    response["Retry-After"] = str(lockout_seconds(request))
    return response
