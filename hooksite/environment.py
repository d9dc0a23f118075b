"""How the settings read the environment: django-environ's ``Env``, reading values as stash documents them.

env = Environment()
STASH_BATCH_SIZE = env.int("STASH_BATCH_SIZE", 200)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
STASH_TRUSTED_PROXIES = env.list("STASH_TRUSTED_PROXIES", cast=network, default=[])
"""

import ipaddress

import environ
from django.core.exceptions import ImproperlyConfigured


class Environment(environ.Env):
    """``environ.Env`` with stash's reading of a value.

    - A value is taken as written: a leading ``$`` names no other variable (django-environ's
      proxies), so a secret key or password may start with one.
    - A number or a switch set empty counts as unset (its default).
    - A switch is on for 1, true, yes or on (in any case), off for anything else.
    - A list is comma-separated, its items stripped and blank ones dropped; set empty, it is empty.
    - A number is read as Python reads it (django-environ's float drops the characters it does
      not expect, and would read 1e3 as 13).
    - A value that cannot be read stops start-up with ``ImproperlyConfigured`` naming the variable.
    """

    BOOLEAN_TRUE_STRINGS = ("1", "true", "yes", "on")

    def get_value(self, var, cast=None, default=environ.Env.NOTSET, parse_default=False):
        value = self.ENVIRON.get(var)
        if value is None or (value == "" and cast in (bool, int, float)):
            if default is self.NOTSET:
                raise ImproperlyConfigured(f"Set the {var} environment variable.")
            return default
        try:
            return self.parse_value(value, cast)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{var}: {exc}") from None

    @classmethod
    def parse_value(cls, value, cast):
        if cast is bool:
            return value.strip().lower() in cls.BOOLEAN_TRUE_STRINGS
        if cast is float:
            return float(value)
        if cast is list or isinstance(cast, list):
            items = [item.strip() for item in value.split(",") if item.strip()]
            return items if cast is list else [cast[0](item) for item in items]
        return super().parse_value(value, cast)


def network(text):
    """An address or a CIDR network (``env.list``'s ``cast``); ``ValueError`` saying what to give."""
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        raise ValueError(f"{exc} (give addresses or networks such as 10.0.0.0/8)") from None
