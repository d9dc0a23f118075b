"""Test settings: the project's own, plus an app whose hooks misbehave on purpose."""
from hooksite.settings import *  # noqa: F401,F403
from hooksite.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.testapp", "bench"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The test client and live_server speak plain HTTP: no redirect to HTTPS (production's default
# outside DEBUG). tests/test_security_deploy.py checks the production settings themselves.
SECURE_SSL_REDIRECT = False
