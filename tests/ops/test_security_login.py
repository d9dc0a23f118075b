"""Abuse limits: throttles count the socket's address (not a header a client sends), and failed
logins lock out a user at an address, and an address, on every login path until the lockout time
has passed; guesses from elsewhere never lock the real user out."""

import ipaddress
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

TOKEN = "/api/auth/token/"
PASSWORD = "pass-word-123"


@pytest.fixture
def sam(django_user_model):
    return django_user_model.objects.create_user("sam", password=PASSWORD)


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("stella", password=PASSWORD, is_staff=True)


@pytest.fixture
def limit(settings):
    settings.AXES_FAILURE_LIMIT = 3
    return 3


def forged(n):
    """A different X-Forwarded-For on every request, as a client rotating it would send."""
    return {"HTTP_X_FORWARDED_FOR": f"203.0.113.{n % 250 + 1}"}


# --- throttles ------------------------------------------------------------------------------------


def test_a_rotating_x_forwarded_for_does_not_escape_the_token_throttle(sam, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "auth_token": "3/minute"}
    settings.AXES_FAILURE_LIMIT = 100  # the throttle alone here
    client = APIClient()
    statuses = [
        client.post(TOKEN, {"username": "sam", "password": "guess"}, format="json", **forged(n)).status_code
        for n in range(4)
    ]
    assert statuses == [400, 400, 400, 429]


def test_a_rotating_x_forwarded_for_does_not_escape_the_anonymous_submit_throttle(make_stash, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "anon_submit": "3/minute"}
    make_stash("open", allow_anonymous=True)
    client = APIClient()
    statuses = [
        client.post(
            "/api/contents/", {"stash": "open", "payload": {"text": f"hi {n}"}}, format="json", **forged(n)
        ).status_code
        for n in range(4)
    ]
    assert statuses == [201, 201, 201, 429]


def test_behind_a_declared_proxy_each_forwarded_client_is_counted_on_its_own(make_stash, settings):
    settings.STASH_THROTTLE_RATES = {**settings.STASH_THROTTLE_RATES, "anon_submit": "2/minute"}
    settings.STASH_TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.0/8")]
    make_stash("open", allow_anonymous=True)
    client = APIClient(REMOTE_ADDR="10.0.0.5")

    def submit(forwarded):
        return client.post(
            "/api/contents/",
            {"stash": "open", "payload": {"text": "hi"}},
            format="json",
            HTTP_X_FORWARDED_FOR=forwarded,
        ).status_code

    # The proxy appends the address it was called from; what the client put in front is ignored.
    assert [submit(f"9.9.9.{n}, 198.51.100.7") for n in range(3)] == [201, 201, 429]
    assert submit("198.51.100.8") == 201


@pytest.mark.parametrize(
    "meta, trusted, proxies, expected",
    [
        ({"REMOTE_ADDR": "198.51.100.7", "HTTP_X_FORWARDED_FOR": "1.2.3.4"}, [], 0, "198.51.100.7"),
        (
            {"REMOTE_ADDR": "10.0.0.5", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.7"},
            ["10.0.0.0/8"],
            0,
            "198.51.100.7",
        ),
        (
            {"REMOTE_ADDR": "10.0.0.5", "HTTP_X_FORWARDED_FOR": "198.51.100.7, 10.1.1.1"},
            ["10.0.0.0/8"],
            0,
            "198.51.100.7",
        ),
        ({"REMOTE_ADDR": "198.51.100.9", "HTTP_X_FORWARDED_FOR": "1.2.3.4"}, ["10.0.0.0/8"], 0, "198.51.100.9"),
        ({"REMOTE_ADDR": "10.0.0.5", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.7"}, [], 1, "198.51.100.7"),
        ({"REMOTE_ADDR": "10.0.0.5", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 198.51.100.7"}, [], 2, "1.2.3.4"),
        ({"REMOTE_ADDR": "10.0.0.5"}, [], 1, "10.0.0.5"),
        ({"REMOTE_ADDR": "10.0.0.5", "HTTP_X_FORWARDED_FOR": "not-an-address"}, [], 1, "10.0.0.5"),
    ],
)
def test_the_client_address_is_the_sockets_unless_a_proxy_is_declared(rf, settings, meta, trusted, proxies, expected):
    from stash.ops.access import client_address

    settings.STASH_TRUSTED_PROXIES = [ipaddress.ip_network(network) for network in trusted]
    settings.STASH_NUM_PROXIES = proxies
    request = rf.get("/")
    request.META.update(meta)
    assert client_address(request) == expected


# --- login lockouts -------------------------------------------------------------------------------


def form_login(path, username, password, **extra):
    return Client().post(path, {"username": username, "password": password}, **extra)


def token_login(username, password, **extra):
    return APIClient().post(TOKEN, {"username": username, "password": password}, format="json", **extra)


LOGINS = {
    "admin": lambda username, password, **extra: form_login("/admin/login/", username, password, **extra),
    "site": lambda username, password, **extra: form_login("/accounts/login/", username, password, **extra),
    "api": token_login,
}


def logged_in(path, response):
    if path == "api":
        return response.status_code == 200 and "token" in response.json()
    return response.status_code == 302 and "_auth_user_id" in response.client.session


def end_lockouts(settings):
    """As if the lockout time had passed since the last failure."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))


def assert_locked_out(path, response, settings):
    assert response.status_code == 429
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    reason = f"Too many failed logins from this address: try again in {minutes} minutes."
    if path == "api":
        assert response.json() == {"detail": reason}
    else:
        assert reason in response.content.decode()
    assert int(response["Retry-After"]) > 0


@pytest.mark.parametrize("path", LOGINS)
def test_wrong_passwords_lock_the_user_out_at_that_address_until_the_lockout_time_has_passed(
    path, staff, limit, settings
):
    login = LOGINS[path]
    for n in range(limit):
        # A forged header changes nothing: the socket's address is the one counted.
        response = login("stella", f"guess-{n}", REMOTE_ADDR="198.51.100.7", **forged(n))
        assert not logged_in(path, response)
        if n < limit - 1:
            assert response.status_code != 429

    refused = login("stella", PASSWORD, REMOTE_ADDR="198.51.100.7")
    assert not logged_in(path, refused)
    assert_locked_out(path, refused, settings)

    end_lockouts(settings)
    assert logged_in(path, login("stella", PASSWORD, REMOTE_ADDR="198.51.100.7"))


@pytest.mark.parametrize("path", LOGINS)
def test_guesses_from_other_addresses_do_not_lock_the_real_user_out(path, staff, limit, settings):
    login = LOGINS[path]
    for attacker in ("198.51.100.7", "203.0.113.9"):
        for n in range(limit + 2):
            login("stella", f"guess-{n}", REMOTE_ADDR=attacker)
        assert_locked_out(path, login("stella", PASSWORD, REMOTE_ADDR=attacker), settings)

    assert logged_in(path, login("stella", PASSWORD, REMOTE_ADDR="192.0.2.200"))


def test_attempts_during_a_lockout_do_not_restart_it(staff, limit, settings):
    login = LOGINS["site"]
    for n in range(limit):
        login("stella", f"guess-{n}", REMOTE_ADDR="198.51.100.7")
    almost = settings.AXES_COOLOFF_TIME - timedelta(minutes=1)
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - almost)
    # A minute before the lockout ends, a guess and the right password are both refused...
    assert_locked_out("site", login("stella", "guess-again", REMOTE_ADDR="198.51.100.7"), settings)
    assert_locked_out("site", login("stella", PASSWORD, REMOTE_ADDR="198.51.100.7"), settings)

    # ...and the lockout still ends when it was due.
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=1, seconds=1))
    assert logged_in("site", login("stella", PASSWORD, REMOTE_ADDR="198.51.100.7"))


@pytest.mark.parametrize("path", LOGINS)
def test_logging_in_to_an_account_of_ones_own_does_not_clear_the_guesses_at_another(path, staff, sam, limit, settings):
    login = LOGINS[path]
    for n in range(limit - 1):
        login("stella", f"guess-{n}", REMOTE_ADDR="198.51.100.7")
    own = "site" if path == "admin" else path  # sam is no staff member
    assert logged_in(own, LOGINS[own]("sam", PASSWORD, REMOTE_ADDR="198.51.100.7"))
    login("stella", "one-guess-more", REMOTE_ADDR="198.51.100.7")

    assert_locked_out(path, login("stella", PASSWORD, REMOTE_ADDR="198.51.100.7"), settings)


@pytest.mark.parametrize("path", LOGINS)
def test_wrong_passwords_from_one_address_lock_that_address_out_for_every_user(path, staff, sam, limit, settings):
    login = LOGINS[path]
    for n in range(limit):
        login(f"nobody-{n}", "guess", REMOTE_ADDR="198.51.100.7", **forged(n))

    assert_locked_out(path, login("stella", PASSWORD, REMOTE_ADDR="198.51.100.7"), settings)
    assert logged_in(path, login("stella", PASSWORD, REMOTE_ADDR="198.51.100.8"))


def test_a_lockout_counts_failures_on_every_path_together(staff, limit, settings):
    LOGINS["admin"]("stella", "guess-1")
    LOGINS["site"]("stella", "guess-2")
    LOGINS["api"]("stella", "guess-3")
    for path, login in LOGINS.items():
        assert_locked_out(path, login("stella", PASSWORD), settings)


def test_a_successful_login_clears_the_users_failures(staff, limit):
    for n in range(limit - 1):
        LOGINS["site"]("stella", f"guess-{n}")
    assert logged_in("site", LOGINS["site"]("stella", PASSWORD))
    for n in range(limit - 1):
        LOGINS["site"]("stella", f"guess-{n}")
    assert logged_in("site", LOGINS["site"]("stella", PASSWORD))


@pytest.mark.parametrize("path", LOGINS)
def test_a_username_longer_than_any_is_a_failed_login_and_counted(path, staff, limit, settings):
    # PostgreSQL refused to record the failure (its username column holds 255 characters): a 500.
    response = LOGINS[path]("s" * 300, PASSWORD)
    assert response.status_code == (400 if path == "api" else 200)
    assert not logged_in(path, response)
    assert AccessAttempt.objects.get().username == "s" * 255
    for _n in range(limit - 1):
        LOGINS[path]("s" * 300, PASSWORD)
    assert_locked_out(path, LOGINS[path]("s" * 300, PASSWORD), settings)
