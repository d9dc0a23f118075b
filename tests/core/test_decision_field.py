"""A filter's decision may name the payload field it is about: the trail keeps it (its JSON gains
"field" only when set), and the built-in filters that match a field name it."""

import pytest

import stash.hooks.filters  # noqa: F401 - registers the built-ins
from stash.core import pipeline
from stash.core.pipeline import Item, Pipeline, Step
from stash.core.testing import run_hook


class Named:
    kind = "filter"

    def filter(self, item):
        return pipeline.hold("too loud", "shouting", field="title")


class Unnamed:
    kind = "filter"

    def filter(self, item):
        return pipeline.drop("no")


def test_a_decision_that_names_its_field_keeps_it_in_the_trail():
    result = Pipeline([Step(hook=Named(), name="named")]).run(Item(payload={"title": "HI"}))
    (entry,) = result.trail
    assert (entry.field, entry.as_dict()["field"]) == ("title", "title")


def test_a_decision_without_a_field_leaves_the_trail_as_it_was():
    result = Pipeline([Step(hook=Unnamed(), name="plain")]).run(Item(payload={}))
    assert "field" not in result.trail[0].as_dict()


def test_an_observing_step_keeps_the_field_of_what_it_would_have_done():
    result = Pipeline([Step(hook=Named(), name="named", mode=pipeline.OBSERVE)]).run(Item(payload={}))
    assert result.trail[0].as_dict()["field"] == "title"


@pytest.mark.parametrize(
    ("hook", "params", "payload", "field"),
    [
        ("keyword_blocklist", {"words": ["spam"]}, {"meta": {"title": "spam"}}, "meta.title"),
        ("regex", {"field": "email", "pattern": "@"}, {"email": "nobody"}, "email"),
        ("min_score", {"field": "score", "min": 1}, {"score": 0}, "score"),
    ],
)
def test_the_built_in_filters_name_the_field_they_matched(hook, params, payload, field):
    assert run_hook(hook, params, payload).trail[0].field == field
