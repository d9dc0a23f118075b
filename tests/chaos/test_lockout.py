"""A 3-party lockout attempt: attackers at two addresses guess ``admin``'s password, through the
token API and the admin's login page, while the real admin logs in from a third with the right
one. Each round is followed by a jump of almost a lockout's length, as an attacker who comes back
every 14 minutes would: the admin gets in every time (while they guess, once they are locked out,
and 14 minutes later), the attackers are limited every time."""

import functools
import threading
from collections import Counter
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F, Sum
from django.test import Client
from rest_framework.test import APIClient

from .ledger import scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

PASSWORD = "the-admins-own-pass-word"
ATTACKER_A, ATTACKER_B, ADMIN = "198.51.100.10", "203.0.113.20", "192.0.2.30"


def token(address, password):
    response = APIClient(raise_request_exception=False, REMOTE_ADDR=address).post(
        "/api/auth/token/", {"username": "admin", "password": password}, format="json"
    )
    return response.status_code


def page(path, address, password):
    response = Client(raise_request_exception=False, REMOTE_ADDR=address).post(
        path, {"username": "admin", "password": password}
    )
    return response.status_code


def in_parallel(*parties):
    """Run each party (a function returning a Counter) in a thread of its own; their counts, by party."""
    results = {}

    def run(party):
        try:
            results[party.__name__] = party()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(party,)) for party in parties]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def attacker(name, address, login, round_, guesses):
    """``guesses`` wrong passwords for admin from ``address``, one after the other."""

    def guess():
        return Counter(f"{name} {login(address, f'{name}-{round_}-{n}')}" for n in range(guesses))

    guess.__name__ = name
    return guess


def admin():
    """The real admin, from an address of their own, on every login path."""
    return Counter(
        [
            f"admin token {token(ADMIN, PASSWORD)}",
            f"admin page {page('/admin/login/', ADMIN, PASSWORD)}",
            f"admin site {page('/accounts/login/', ADMIN, PASSWORD)}",
        ]
    )


def failures(address):
    """The failed logins recorded for ``address`` (each a password checked), within the lockout time."""
    return AccessAttempt.objects.filter(ip_address=address).aggregate(n=Sum("failures_since_start"))["n"] or 0


def later(delta):
    """As if ``delta`` had passed since every failure recorded."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - delta)


def test_three_party_lockout_attempt(chaos, settings):
    get_user_model().objects.create_superuser("admin", password=PASSWORD)
    # The lockout alone: the minutes this scenario jumps over are the lockout's (in the database), not
    # the token throttle's (per minute, in the cache), which would otherwise refuse A and the admin.
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "auth_token": "10000/minute"}
    limit, guesses, rounds = settings.AXES_FAILURE_LIMIT, scaled(8, 20), scaled(3, 12)
    by_page = functools.partial(page, "/admin/login/")
    totals, checked = Counter(), 0
    for round_ in range(rounds):
        results = in_parallel(
            attacker("A", ATTACKER_A, token, round_, guesses),
            attacker("B", ATTACKER_B, by_page, round_, guesses),
            admin,
        )
        assert set(results) == {"A", "B", "admin"}, "a party did not finish"
        # The admin logs in while they guess, and again once both have run into their lockouts.
        counts = sum(results.values(), admin())
        # The admin got in on every path; each attacker had exactly `limit` guesses checked (the
        # failures recorded), the rest refused unchecked (429).
        assert counts["admin token 200"] == counts["admin page 302"] == counts["admin site 302"] == 2, counts
        assert counts["A 400"] + counts["A 429"] == counts["B 200"] + counts["B 429"] == guesses, counts
        assert failures(ATTACKER_A) == failures(ATTACKER_B) == limit, counts
        # 14 minutes later each attacker tries once more: refused, and the lockout is not restarted,
        # so it ends when due (the next round's guesses are checked again, `limit` of them).
        checked += failures(ATTACKER_A) + failures(ATTACKER_B)
        later(settings.AXES_COOLOFF_TIME - timedelta(minutes=1))
        refused = Counter([f"A {token(ATTACKER_A, 'again')}", f"B {by_page(ATTACKER_B, 'again')}"])
        assert refused == Counter({"A 429": 1, "B 429": 1}), refused
        assert admin() == Counter(["admin token 200", "admin page 302", "admin site 302"])
        later(timedelta(minutes=1, seconds=1))
        totals += counts + refused

    assert not [key for key in totals if key.split()[-1].startswith("5")], totals
    figures = chaos.settle()
    admin_logins = totals["admin token 200"] + totals["admin page 302"] + totals["admin site 302"]
    figures.measured.update(
        {
            "rounds": rounds,
            "admin logins": admin_logins + 3 * rounds,
            "admin logins refused": 0,
            "guesses": 2 * rounds * (guesses + 1),
            "guesses checked": checked,
        }
    )
