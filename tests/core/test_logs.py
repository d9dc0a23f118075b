"""Log lines as JSON (LOG_FORMAT=json) or text, with the item, stash, revision and hook they were
written for; a worker's lines too (tests/integration/test_logs.py)."""

import io
import json
import logging
import subprocess
import sys

import pytest

from stash import processing, tasks
from stash.core import logs
from stash.hooks.base import EventSink, Filter
from stash.models import Content

from ..support.worker import ROOT


@pytest.fixture
def lines():
    """The lines the root logger writes through ``logs.formatter(output)``: ``lines("json")``
    starts capturing and returns a function reading what was written so far."""
    root = logging.getLogger()
    handlers, level = [], root.level

    def capture(output):
        stream = io.StringIO()
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logs.formatter(output))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        handlers.append(handler)
        return lambda: stream.getvalue().splitlines()

    yield capture
    for handler in handlers:
        root.removeHandler(handler)
    root.setLevel(level)


class Breaks(Filter):
    def filter(self, item):
        raise RuntimeError("the spam service is down")


def test_every_line_written_for_an_item_names_it_its_stash_revision_and_hook(make_stash, register_temporarily, lines):
    register_temporarily("breaks", Breaks)
    stash = make_stash("news", hooks=[{"hook": "breaks", "params": {}, "on_error": "skip"}, ("log", {})])
    breaks, log = stash.hooks.in_order()
    read = lines("json")
    content = Content.objects.create(stash=stash, payload={"text": "hi"})
    content.payload = {"text": "hello"}
    content.save()

    processing.judge([content.pk])
    logging.getLogger("elsewhere").info("after the item")

    written = [json.loads(line) for line in read()]
    by_event = {line["event"]: line for line in written}
    failed = by_event["Hook breaks: error: RuntimeError: the spam service is down"]
    assert {key: failed[key] for key in ("item", "stash", "revision", "hook", "hook_config", "level", "logger")} == {
        "item": str(content.pk),
        "stash": "news",
        "revision": 2,
        "hook": "breaks",
        "hook_config": breaks.pk,
        "level": "warning",
        "logger": "stash.processing.judging",
    }
    sink = by_event[f"news: item {content.pk} r2 accepted"]
    assert (sink["item"], sink["stash"], sink["revision"], sink["hook"], sink["hook_config"], sink["logger"]) == (
        str(content.pk),
        "news",
        2,
        "log",
        log.pk,
        "stash.hooks.sinks",
    )
    assert "timestamp" in sink
    after = by_event["after the item"]
    assert not {"item", "stash", "revision", "hook", "hook_config"} & after.keys()


class Announces(EventSink):
    deliver_async = True

    def handle(self, event, item, result):
        logging.getLogger("tests.announce").info("announced %s", event)


def test_a_sink_delivered_by_its_own_task_logs_with_its_item_and_hook(make_stash, register_temporarily, lines):
    register_temporarily("announces", Announces)
    stash = make_stash("news", hooks=[("announces", {})])
    read = lines("json")
    content = Content.objects.create(stash=stash, payload={"text": "hi"})
    (delivery,) = processing.judge([content.pk]).deliveries
    assert not [line for line in read() if "announced" in line]  # not in process: by its own task

    tasks.deliver_sink.apply(args=delivery.args)

    (line,) = [json.loads(line) for line in read() if "announced" in line]
    assert (line["event"], line["item"], line["stash"], line["revision"], line["hook"], line["hook_config"]) == (
        "announced accept",
        str(content.pk),
        "news",
        1,
        "announces",
        stash.hooks.get().pk,
    )
    assert line["task"] == "stash.tasks.deliver_sink"


def test_text_lines_carry_the_same_values(make_stash, lines):
    stash = make_stash("news", hooks=[("log", {})])
    read = lines("text")
    content = Content.objects.create(stash=stash, payload={"text": "hi"})

    processing.judge([content.pk])

    (line,) = [line for line in read() if f"item {content.pk} r1 accepted" in line]
    assert f"item={content.pk}" in line and "stash=news" in line and "revision=1" in line and "hook=log" in line
    assert "[info" in line and "[stash.hooks.sinks]" in line


# What a forged line would look like, were a newline before it written as it is.
FORGED = "2026-12-03T14:02:11.503000Z [critical ] forged [stash.audit]"


def test_a_newline_in_a_payload_key_or_a_regex_excerpt_starts_no_line_of_a_text_log(make_stash, lines):
    stash = make_stash(
        "news",
        hooks=[
            ("regex", {"field": "text", "pattern": "spam[\\s\\S]*", "mode": "must_not_match"}),
            ("keyword_blocklist", {"words": ["forbidden"]}),
            ("log", {}),
        ],
    )
    read = lines("text")
    excerpt = Content.objects.create(stash=stash, payload={"text": f"spam\n{FORGED}"})
    key = Content.objects.create(stash=stash, payload={"text": "fine", f"note\r\n{FORGED}": "forbidden"})

    processing.judge([excerpt.pk, key.pk])

    written = read()
    assert not [line for line in written if line.startswith(FORGED)]
    (rejected,) = [line for line in written if f"item {excerpt.pk} r1 rejected" in line]
    assert f"('spam\\n{FORGED[:50]}" in rejected  # the excerpt: 60 characters
    (rejected,) = [line for line in written if f"item {key.pk} r1 rejected" in line]
    assert f"in note\\r\\n{FORGED}" in rejected


def test_text_lines_escape_every_control_character_and_keep_an_exception_on_its_line(lines):
    read = lines("text")
    logger = logging.getLogger("stash")

    logger.warning("clear \x1b[2J screen, bell \x07, tab \t, C1 \x85 and a separator \u2028 here")
    try:
        raise ValueError(f"bad\n{FORGED}")
    except ValueError:
        logger.exception("Could not do it")

    warning, error = read()
    assert warning.endswith("clear \\x1b[2J screen, bell \\x07, tab \\t, C1 \\x85 and a separator \\u2028 here [stash]")
    assert "Could not do it [stash]\\nTraceback (most recent call last):\\n" in error
    assert error.endswith(f"ValueError: bad\\n{FORGED}")
    assert "logger = " not in error  # a plain traceback: no local values


def test_an_exception_is_one_json_line_with_its_traceback_and_no_local_values(lines):
    read = lines("json")
    secret = "s3cret-payload"  # noqa: F841 - a local a traceback with locals would show

    try:
        raise ValueError("bad")
    except ValueError:
        logging.getLogger("stash").exception("Could not do it")

    (line,) = read()
    written = json.loads(line)
    assert written["event"] == "Could not do it" and written["level"] == "error"
    assert "ValueError: bad" in written["exception"] and "Traceback" in written["exception"]
    assert "s3cret-payload" not in line


def test_an_unknown_log_format_stops_the_process_with_the_reason():
    env = {"LOG_FORMAT": "xml", "SECRET_KEY": "x", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )

    assert done.returncode != 0
    assert "LOG_FORMAT must be json or text, not 'xml'." in done.stderr
