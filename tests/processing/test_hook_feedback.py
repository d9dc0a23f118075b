"""Feedback: a person's decision on an item a hook decided is sent to that hook's ``feedback``.

Decisions are made through the real paths (``processing.approve`` / ``reject`` / ``overturn``,
``decide_appeal``); the feedback tasks they publish are recorded by the stub broker and run as the
sinks worker runs them (``tasks.give_feedback``).
"""

import re
from pathlib import Path

import pytest
from django.db import transaction

from stash import hooks, processing, tasks
from stash.core import registry
from stash.db import publishing
from stash.models import Content, Review
from tests.support.appeals import rejected
from tests.support.review import reviewer

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


class Learner(hooks.Filter):
    """Holds text with "?", drops text with "spam"; records the feedback it gets."""

    got: list[tuple[str, str]] = []

    def filter(self, item):
        text = item.payload.get("text", "")
        if "spam" in text:
            return self.drop("spam", "spam")
        return self.hold("asks a question", "question") if "?" in text else self.keep()

    def feedback(self, item, verdict):
        Learner.got.append((item.payload["text"], verdict))


class Sulky(Learner):
    """Its feedback fails."""

    def feedback(self, item, verdict):
        raise ConnectionError("the vendor is down")


@pytest.fixture(autouse=True)
def _registered(register_temporarily):
    Learner.got = []
    register_temporarily("test_learner", Learner)
    register_temporarily("test_sulky", Sulky)


@pytest.fixture
def learning(make_stash):
    return make_stash("learning", hooks=[("test_learner", {})])


@pytest.fixture
def rita(django_user_model):
    return reviewer(django_user_model, "rita")


def judged(stash, text):
    item = Content.objects.create(stash=stash, payload={"text": text})
    processing.judge([item.pk])
    item.refresh_from_db()
    return item


def feedback_sent(broker):
    """The feedback tasks published: (config id, item id, verdict)."""
    return [tuple(m["args"]) for m in broker.messages if m["name"] == publishing.FEEDBACK_TASK]


def run_feedback(broker):
    """Run each feedback task published, as the sinks worker does."""
    for message in broker.messages:
        if message["name"] == publishing.FEEDBACK_TASK:
            tasks.give_feedback.run(*message["args"])


def test_an_approval_of_an_item_a_hook_held_is_fed_back_once(broker, learning, rita):
    item = judged(learning, "why?")
    broker.messages.clear()

    processing.approve(Content.objects.filter(pk=item.pk), rita)
    run_feedback(broker)

    assert feedback_sent(broker) == [(item.decided_by_id, str(item.pk), "accepted")]
    assert broker.messages[-1]["queue"] == publishing.sink_queue(learning.queue)
    assert Learner.got == [("why?", "accepted")]


def test_a_rejection_and_an_overturn_are_fed_back(broker, learning, rita):
    held = judged(learning, "why?")
    dropped = judged(learning, "spam offer")
    broker.messages.clear()

    processing.reject(Content.objects.filter(pk=held.pk), rita)
    processing.overturn(Content.objects.filter(pk=dropped.pk), rita)
    run_feedback(broker)

    assert Learner.got == [("why?", "rejected"), ("spam offer", "accepted")]


def test_an_appeal_reversal_is_fed_back(broker, make_stash, django_user_model, rita):
    stash = make_stash("appealing", hooks=[("test_learner", {})])
    sam = django_user_model.objects.create_user("sam", password="pw")
    item = rejected(stash, sam, text="not spam, a recipe")
    appeal = processing.appeal(item, "It is a recipe.", sam)
    broker.messages.clear()

    processing.decide_appeal(appeal.pk, "reversed", "Fine.", rita)
    run_feedback(broker)

    assert Learner.got == [("not spam, a recipe", "accepted")]


def test_an_upheld_appeal_sends_nothing(broker, make_stash, django_user_model, rita):
    stash = make_stash("appealing", hooks=[("test_learner", {})])
    sam = django_user_model.objects.create_user("sam", password="pw")
    appeal = processing.appeal(rejected(stash, sam, text="spam"), "No.", sam)
    broker.messages.clear()

    processing.decide_appeal(appeal.pk, "upheld", "", rita)

    assert feedback_sent(broker) == []


def test_no_feedback_on_an_item_no_hook_decided(broker, learning, rita):
    kept = judged(learning, "hello")  # accepted: no hook decided it
    broker.messages.clear()

    processing.overturn(Content.objects.filter(pk=kept.pk), rita)

    assert Content.objects.get(pk=kept.pk).status == "rejected"
    assert feedback_sent(broker) == []


def test_no_feedback_on_an_expiry_which_is_no_persons_decision(broker, learning):
    item = judged(learning, "why?")
    broker.messages.clear()

    processing.decide_automatically(Content.objects.filter(pk=item.pk), "rejected", "expired")

    assert Content.objects.get(pk=item.pk).status == "rejected"
    assert feedback_sent(broker) == []


def test_no_feedback_to_a_hook_without_it(broker, make_stash, rita):
    stash = make_stash("plain", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    item = judged(stash, "spam")
    broker.messages.clear()

    processing.overturn(Content.objects.filter(pk=item.pk), rita)

    assert feedback_sent(broker) == []


def test_feedback_is_sent_only_once_the_decision_is_committed(broker, learning, rita):
    item = judged(learning, "why?")
    broker.messages.clear()

    with transaction.atomic():
        processing.approve(Content.objects.filter(pk=item.pk), rita)
        assert feedback_sent(broker) == []

    assert len(feedback_sent(broker)) == 1


def test_a_failing_feedback_does_not_break_the_review_and_is_retried(broker, make_stash, rita):
    stash = make_stash("sulky", hooks=[("test_sulky", {})])
    item = judged(stash, "why?")
    broker.messages.clear()

    assert processing.approve(Content.objects.filter(pk=item.pk), rita) == 1
    assert Content.objects.get(pk=item.pk).status == "accepted"
    assert Review.objects.filter(content=item, decision="approve").count() == 1
    [args] = feedback_sent(broker)
    with pytest.raises(processing.FeedbackError, match="ConnectionError: the vendor is down"):
        processing.give_feedback(*args)
    assert tasks.give_feedback.autoretry_for == (processing.FeedbackError,)


def test_feedback_for_a_hook_or_item_gone_is_skipped(broker, learning, rita):
    item = judged(learning, "why?")
    broker.messages.clear()
    processing.approve(Content.objects.filter(pk=item.pk), rita)
    [args] = feedback_sent(broker)
    learning.hooks.all().delete()

    processing.give_feedback(*args)  # nothing to call: logged, no error

    assert Learner.got == []


def test_the_docs_feedback_example_learns_from_reviewers(broker, make_stash, rita):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "hooks.md").read_text(), flags=re.DOTALL)
    [source] = [block for block in blocks if '"seen_before"' in block]
    try:
        exec(compile(source, "docs/hooks.md", "exec"), {})  # noqa: S102 - the docs' own example
        stash = make_stash("seen", hooks=[("seen_before", {})])
        first = judged(stash, "buy cheap watches")
        assert (first.status, first.reason) == ("held", "new text: a person decides")

        processing.reject(Content.objects.filter(pk=first.pk), rita)
        run_feedback(broker)

        assert judged(stash, "buy cheap watches").status == "rejected"
        assert judged(stash, "hello there").status == "held"
    finally:
        if registry.is_registered("seen_before"):
            registry.unregister("seen_before")
