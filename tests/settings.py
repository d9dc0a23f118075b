"""Test settings: the project's own, plus an app whose hooks misbehave on purpose."""
from hooksite.settings import *  # noqa: F401,F403
from hooksite.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.testapp", "bench"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
