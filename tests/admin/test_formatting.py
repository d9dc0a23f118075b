"""How the admin writes times, rates and verdicts: readable units, percentages, badges with words."""

import pytest
from django.template import Context, Template

from stash.admin import formatting


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (None, "–"),
        (0, "0 µs"),
        (0.3580040000201734, "358 µs"),
        (0.9996, "1.0 ms"),  # rounds up into the next unit, never "1000 µs"
        (2.5, "2.5 ms"),
        (9.96, "10 ms"),
        (42.4, "42 ms"),
        (999.4, "999 ms"),
        (999.6, "1.0 s"),
        (1234.5, "1.2 s"),
        (12_000, "12 s"),
        (59_600, "1 min"),
        (185_000, "3 min 5 s"),
        (3_599_600, "1 h"),
        (7_500_000, "2 h 5 min"),
        (-0.001, "0 µs"),  # a clock that stepped back is no negative time
    ],
)
def test_durations_read_in_the_unit_that_fits(ms, text):
    assert formatting.duration(ms) == text


def test_ages_are_given_in_seconds():
    assert formatting.age(185) == "3 min 5 s"
    assert formatting.age(0.25) == "250 ms"
    assert formatting.age(None) == "–"


@pytest.mark.parametrize(
    ("rate", "text"),
    [
        (None, "–"),
        (0, "0%"),
        (0.0004, "<0.1%"),
        (0.004, "0.4%"),
        (0.095, "9.5%"),
        (0.0999, "10%"),
        (0.125, "12%"),
        (1, "100%"),
    ],
)
def test_rates_read_as_percentages(rate, text):
    assert formatting.percent(rate) == text


def test_a_badge_says_its_status_in_words_and_escapes_what_it_is_given():
    assert formatting.badge("held") == '<span class="stash-badge stash-badge-held">held for review</span>'
    assert formatting.badge("kept") == '<span class="stash-badge stash-badge-kept">kept</span>'
    assert formatting.badge("x<y", "a & b") == '<span class="stash-badge stash-badge-x&lt;y">a &amp; b</span>'


def test_the_template_filters_format_the_same_way():
    rendered = Template("{% load stash_format %}{{ ms|duration }} · {{ rate|percent }} · {{ status|badge }}").render(
        Context({"ms": 1234.5, "rate": 0.25, "status": "<b>"})
    )
    assert rendered == '1.2 s · 25% · <span class="stash-badge stash-badge-&lt;b&gt;">&lt;b&gt;</span>'
