"""Who is asking: the client's address (for throttles and login lockouts) and the login lockout.

``client_address`` is the one rule every counter uses (the API's throttles, django-axes): the
socket's address, unless the socket is a proxy the settings declare, for ``X-Forwarded-For`` is
anyone's to send. ``LockoutBackend`` and ``lockout_response`` are django-axes' backend and answer:
a user or an address with too many failed logins is refused, with the reason, until the lockout
time has passed.
"""
import ipaddress
import math

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _, ngettext

from .api.exceptions import API_PREFIX


def client_address(request) -> str:
    """The client's IP address: ``REMOTE_ADDR``, or the address that declared proxies forward.

    With ``STASH_TRUSTED_PROXIES``, ``X-Forwarded-For`` is read from the right past every trusted
    proxy: the first address that is not one is the client's. With ``STASH_NUM_PROXIES`` = n,
    it is the n-th address from the right. A forwarded value that is not an address is not
    believed: the socket's address is used.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
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


class LockoutBackend(AxesStandaloneBackend):
    """Refuses every login of a locked-out user or address, before the password is checked.

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
    return ngettext("Too many failed logins for this account or from this address: try again in %(n)d minute.",
                    "Too many failed logins for this account or from this address: try again in %(n)d minutes.",
                    minutes) % {"n": minutes}


def lockout_response(request, original_response=None, credentials=None):
    """django-axes' answer to a locked-out login: 429 with the reason, JSON under /api/, a page elsewhere."""
    message = lockout_message(request)
    if request.path.startswith(API_PREFIX):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "registration/locked_out.html",
                          {"message": message, "title": _("Login locked")}, status=429)
    response["Retry-After"] = str(lockout_seconds(request))
    return response
