"""The example in docs/hooks.md ("An asynchronous hook of your own"): a hook that hands each item to an
outside desk with its callback URL, and the run that waits for the desk's answer and goes on."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from stash import hooks
from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step
from stash.core.testing import build_hook, register_temporarily

# --- the example in docs/hooks.md -----------------------------------------------------------------

#: Stands for the outside service: what it was asked to look at, with where to answer.
DESK: list[dict] = []


class AskTheDesk(hooks.Filter):
    """Have a person at a desk of your own look at each item; they answer on its callback URL."""

    asynchronous = True  # the worker gives each item a callback URL for this hook
    params_schema = {
        "type": "object",
        # The desk signs its answer with this secret, as a webhook signs (X-Stash-Signature).
        "properties": {"secret": {"type": "string", "minLength": 16}},
        "required": ["secret"],
        "additionalProperties": False,
    }

    def filter(self, item):
        callback_url = item.callbacks[self.config_id]
        DESK.append({"id": item.id, "text": item.payload.get("text", ""), "callback_url": callback_url})
        return pipeline.pending("a person at the desk looks at it")


# ----------------------------------------------------------------------------------------------------

SECRET = "a-secret-of-16-characters-or-more"


def test_the_docs_show_the_tested_example() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "hooks.md").read_text()
    section = doc[doc.index("## An asynchronous hook of your own") :]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None
    assert block.group(1) == "from stash import hooks\nfrom stash.core import pipeline\n\n\n" + inspect.getsource(
        AskTheDesk
    )


def test_the_run_waits_for_the_desk_and_goes_on_with_its_answer() -> None:
    DESK.clear()
    with register_temporarily("ask_the_desk", AskTheDesk):
        desk = build_hook("ask_the_desk", {"secret": SECRET})
    desk.config_id = 3  # the worker sets it when it builds the stash's pipeline
    steps = [
        Step(hook=desk, name="ask_the_desk", config_id=3, position=1),
        Step(hook=build_hook("keyword_blocklist", {"words": ["spam"]}), name="keyword_blocklist", position=2),
    ]
    runner = Pipeline(steps)
    item = Item(
        payload={"text": "is this spam?"}, id="5b0e", callbacks={3: "https://stash.example.com/api/callbacks/x/"}
    )

    first = runner.run(item)

    assert DESK == [
        {"id": "5b0e", "text": "is this spam?", "callback_url": "https://stash.example.com/api/callbacks/x/"}
    ]
    assert (first.verdict, first.waiting_at) == ("waiting", 0)
    # The person keeps it: the next hook still judges it.
    kept = runner.resume(item, first.waiting_at, first.payload, first.trail[:0], pipeline.keep())
    assert (kept.verdict, kept.code) == ("rejected", "blocked_word")
    # Runs that only look never hand anything to the desk.
    DESK.clear()
    assert runner.looking().run(item).verdict == "waiting"
    assert DESK == []
