"""Shadow test helpers: live saves judged as a worker would, and the shadow messages they sent run as the task would."""

from stash import processing, tasks
from stash.db import publishing
from stash.models import Content


def save_and_judge(stash, payloads, captured):
    """Save ``payloads`` live in ``stash`` and judge them, running what each sends after commit (``captured``:
    pytest-django's ``django_capture_on_commit_callbacks``); returns the items."""
    with captured(execute=True):
        items = [Content.objects.create(stash=stash, payload=payload) for payload in payloads]
    with captured(execute=True):
        processing.judge([item.pk for item in items])
    return items


def rows_of(items):
    """The rows a shadow's message carries for ``items`` (judged live; the live decider left blank)."""
    statuses = dict(Content.objects.filter(pk__in=[item.pk for item in items]).values_list("pk", "status"))
    return [[str(item.pk), item.revision, statuses[item.pk], ""] for item in items]


def run_shadow_messages(broker):
    """Run the shadow messages ``broker`` holds through the task, and take them off it; returns how many
    items they carried to judge (a message with none writes what was gathered, on Redis)."""
    sent = [message for message in broker.messages if message["name"] == publishing.SHADOW_TASK]
    carried = 0
    for message in sent:
        args = list(message["args"])
        tasks.run_shadow.apply(args=args)
        carried += len(args[1])
    broker.messages = [message for message in broker.messages if message["name"] != publishing.SHADOW_TASK]
    return carried
