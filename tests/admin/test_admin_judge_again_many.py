"""Judging many items again from the admin: past a batch, a link follows the items still waiting."""

import pytest
from django.urls import reverse

from stash import processing
from stash.models import Content

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:stash_content_changelist"


@pytest.fixture
def items(make_stash, broker):
    stash = make_stash("audit", hooks=[("keyword_blocklist", {"words": ["spam"]})])
    made = [processing.submit(stash, {"text": f"item {n}"})[0] for n in range(3)]
    processing.judge([item.pk for item in made])
    return made


def judge_again(client, items, query=""):
    response = client.post(
        reverse(CHANGELIST) + query,
        {"action": "reprocess", "_selected_action": [item.pk for item in items]},
        follow=True,
    )
    return [str(message) for message in response.context["messages"]]


def test_past_a_batch_the_admin_links_to_the_items_still_waiting(admin_client, items, settings):
    settings.STASH_BATCH_SIZE = 2
    said = judge_again(admin_client, items)
    assert said[0] == "3 items sent to be judged again."
    link = f"{reverse(CHANGELIST)}?status__in=pending%2Cprocessing"
    assert said[1] == (
        f'They are judged over a while, a batch at a time. <a href="{link}">'
        "Follow the items still waiting to be judged</a>"
    )
    waiting = admin_client.get(link)
    assert {item.pk for item in waiting.context["cl"].result_list} == {item.pk for item in items}

    processing.judge([item.pk for item in items])
    assert list(admin_client.get(link).context["cl"].result_list) == []
    assert set(Content.objects.values_list("status", flat=True)) == {"accepted"}


def test_the_link_keeps_the_lists_stash(admin_client, items, settings):
    settings.STASH_BATCH_SIZE = 2
    stash = items[0].stash
    said = judge_again(admin_client, items, f"?stash__id__exact={stash.pk}")
    assert f'?status__in=pending%2Cprocessing&amp;stash__id__exact={stash.pk}"' in said[1]


def test_a_batch_or_less_is_only_counted(admin_client, items):
    assert judge_again(admin_client, items) == ["3 items sent to be judged again."]
