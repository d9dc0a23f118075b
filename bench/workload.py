"""What the benchmark judges: the stash under test (five hooks), the payloads and the API user.

stash = make_stash()                 # slug "bench", the five filters below, in order
payloads(1000)                       # mixed payloads, one in ten dropped (two by each hook)
token = make_api_token()             # a non-superuser with stash.add_content
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token

from stash.models import HookConfig, Stash

from .baseline.checks import HOOKS

SLUG = "bench"
# Of every 50 payloads, one fails each hook (see ``payload``): 10% are dropped.
PERIOD = 50


def payload(n):
    """Payload number ``n``; ``n % 50`` of 7, 17, 27, 37 and 47 fail hooks one to five."""
    kind = n % PERIOD
    body = {
        "text": f"item {n}: " + "lorem ipsum dolor " * (n % 9),
        "score": 0.2 + (n % 80) / 100,
        "data": {"n": n, "tags": ["bench", f"t{n % 5}"]},
    }
    if kind == 7:
        del body["text"]
    elif kind == 17:
        body["data"]["note"] = "Spam, lovely spam"
    elif kind == 27:
        body["text"] += "x" * 2000
    elif kind == 37:
        body["score"] = 0.1
    elif kind == 47:
        body["text"] += " free money inside"
    return body


def payloads(count, start=0):
    return [payload(n) for n in range(start, start + count)]


def number(body):
    """The ``n`` a payload was made from (the API's payloads carry it too)."""
    return body["data"]["n"]


def make_stash(slug=SLUG):
    """The stash under test (or another with the same hooks), with its hooks checked as the admin checks them."""
    stash, _ = Stash.objects.get_or_create(slug=slug, defaults={"name": slug.title()})
    if not stash.hooks.exists():
        for hook, params in HOOKS:
            config = HookConfig(stash=stash, hook=hook, params=params, label=hook)
            config.full_clean()
            config.save()
    stash.refresh_from_db()
    return stash


def make_api_token():
    """The token of ``bench-api``: not a superuser, allowed only to add content."""
    user, _ = get_user_model().objects.get_or_create(username="bench-api")
    user.user_permissions.add(Permission.objects.get(content_type__app_label="stash", codename="add_content"))
    return Token.objects.get_or_create(user=user)[0].key
