"""Production settings pass `manage.py check --deploy`: HTTPS on by default outside DEBUG, each
switch overridable from the environment, the proxy's HTTPS header believed only behind a proxy."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = [
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_PROXY_SSL_HEADER",
]


def production(tmp_path, **overrides):
    """The environment of a production start: DEBUG off, a real secret key, a host name."""
    cleared = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in cleared and not key.startswith(("STASH_", "DJANGO_"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "hooksite.settings",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "stash.example.com",
            "STASH_VAR_DIR": str(tmp_path),
        },
        **overrides,
    )
    return env


def manage(env, *args):
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def settings_of(env, names=SETTINGS):
    code = (
        "import django, json; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{name: getattr(settings, name, None) for name in {list(names)!r}}}))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_production_settings_pass_the_deploy_check(tmp_path):
    done = manage(production(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout


def test_production_defaults_are_https_only_and_each_switch_can_be_turned_off(tmp_path):
    assert settings_of(production(tmp_path)) == {
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_PROXY_SSL_HEADER": None,
    }
    plain_http = production(tmp_path, STASH_SECURE_SSL_REDIRECT="0", STASH_HSTS_SECONDS="0", STASH_SECURE_COOKIES="0")
    assert settings_of(plain_http) == {
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_PROXY_SSL_HEADER": None,
    }
    done = manage(plain_http, "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode != 0 and "security.W008" in done.stderr  # the check still tells


def test_the_proxys_https_header_is_believed_only_behind_a_declared_proxy(tmp_path):
    behind = settings_of(production(tmp_path, STASH_TRUSTED_PROXIES="10.0.0.0/8"))
    assert behind["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert settings_of(production(tmp_path, STASH_NUM_PROXIES="1"))["SECURE_PROXY_SSL_HEADER"] == [
        "HTTP_X_FORWARDED_PROTO",
        "https",
    ]


def test_development_keeps_plain_http(tmp_path):
    assert settings_of(production(tmp_path, DEBUG="1")) == {
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_PROXY_SSL_HEADER": None,
    }


def test_csrf_trusted_origins_come_from_the_environment(tmp_path):
    env = production(tmp_path, CSRF_TRUSTED_ORIGINS="https://stash.example.com, https://*.example.org")
    assert settings_of(env, ["CSRF_TRUSTED_ORIGINS"]) == {
        "CSRF_TRUSTED_ORIGINS": ["https://stash.example.com", "https://*.example.org"]
    }
    assert settings_of(production(tmp_path), ["CSRF_TRUSTED_ORIGINS"]) == {"CSRF_TRUSTED_ORIGINS": []}


def test_a_bad_trusted_proxy_stops_the_start_naming_it(tmp_path):
    done = manage(production(tmp_path, STASH_TRUSTED_PROXIES="10.0.0.0/8,proxy.local"), "check")
    assert done.returncode != 0
    assert "STASH_TRUSTED_PROXIES" in done.stderr and "proxy.local" in done.stderr


def test_a_number_that_is_not_one_stops_the_start_naming_it(tmp_path):
    done = manage(production(tmp_path, STASH_BATCH_SIZE="lots"), "check")
    assert done.returncode != 0
    assert "ImproperlyConfigured: STASH_BATCH_SIZE: invalid literal for int() with base 10: 'lots'" in done.stderr


@pytest.mark.django_db
def test_with_the_redirect_on_plain_http_goes_to_https_but_health_probes_do_not(settings):
    settings.SECURE_SSL_REDIRECT = True
    client = Client()
    response = client.get("/", HTTP_HOST="testserver")
    assert (response.status_code, response["Location"]) == (301, "https://testserver/")
    assert client.get("/healthz").status_code in (200, 503)
    assert client.get("/", secure=True).status_code == 200
