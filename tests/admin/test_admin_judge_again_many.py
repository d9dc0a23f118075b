"""Judging many items again from the admin: past a batch, links follow their judging (a page with the
counts, and its JSON) and the items still waiting."""

import re
import time

import pytest
from django.urls import reverse

from stash import processing
from stash.models import Content

from .test_admin import staff

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


def links(message):
    return dict(
        (text, href.replace("&amp;", "&")) for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', message)
    )


def judging_url(stash, sent, since=None):
    query = f"?sent={sent}" + (f"&since={since}" if since is not None else "")
    return reverse("admin:stash_stash_judging", args=[stash.pk]) + query


def counts_url(stash, sent, since=None):
    query = f"?sent={sent}" + (f"&since={since}" if since is not None else "")
    return reverse("admin:stash_stash_judging_counts", args=[stash.pk]) + query


def test_past_a_batch_the_admin_links_to_their_judging_and_the_items_still_waiting(admin_client, items, settings):
    settings.STASH_BATCH_SIZE = 2
    before = time.time()
    said = judge_again(admin_client, items)
    assert said[0] == "3 items sent to be judged again."
    assert said[1].startswith("They are judged over a while, a batch at a time. Follow their judging: ")
    found = links(said[1])
    waiting = f"{reverse(CHANGELIST)}?status__in=pending%2Cprocessing"
    assert found["Follow the items still waiting to be judged"] == waiting
    listed = admin_client.get(waiting)
    assert {item.pk for item in listed.context["cl"].result_list} == {item.pk for item in items}

    follow = found[str(items[0].stash)]
    assert follow.startswith(judging_url(items[0].stash, 3) + "&since=")
    since = float(follow.rsplit("=", 1)[1])
    assert before - 1 <= since <= time.time() + 1
    page = admin_client.get(follow)
    assert page.status_code == 200
    assert page.context["progress_text"].startswith("0 of 3 items judged, 3 waiting, 0.0 items/s")

    processing.judge([item.pk for item in items])
    assert list(admin_client.get(waiting).context["cl"].result_list) == []
    assert set(Content.objects.values_list("status", flat=True)) == {"accepted"}
    page = admin_client.get(follow).content.decode()
    assert "3 of 3 items judged, 0 waiting" in page
    assert '<progress id="judging-bar" value="3" max="3"' in page
    # Without script, the page is counted again by loading it again.
    assert f'<a href="{follow.replace("&", "&amp;")}" id="judging-refresh">Count again</a>' in page


def test_the_link_to_the_items_still_waiting_keeps_the_lists_stash(admin_client, items, settings):
    settings.STASH_BATCH_SIZE = 2
    stash = items[0].stash
    said = judge_again(admin_client, items, f"?stash__id__exact={stash.pk}")
    assert links(said[1])["Follow the items still waiting to be judged"].endswith(
        f"?status__in=pending%2Cprocessing&stash__id__exact={stash.pk}"
    )


def test_items_of_several_stashes_link_to_each_stashs_judging(admin_client, items, make_stash, settings):
    settings.STASH_BATCH_SIZE = 2
    stash = items[0].stash
    other = make_stash("other")
    more, _ = processing.submit(other, {"text": "another"})
    found = links(judge_again(admin_client, [*items, more])[1])
    assert found[str(stash)].startswith(judging_url(stash, 3) + "&since=")
    assert found[str(other)].startswith(judging_url(other, 1) + "&since=")
    assert "0 of 1 item judged, 1 waiting, " in admin_client.get(found[str(other)]).content.decode()


def test_a_batch_or_less_is_only_counted(admin_client, items):
    assert judge_again(admin_client, items) == ["3 items sent to be judged again."]


def test_the_replay_pages_judge_again_links_to_the_judging_too(admin_client, items, settings):
    settings.STASH_BATCH_SIZE = 2
    stash = items[0].stash
    response = admin_client.post(
        reverse("admin:stash_stash_replay", args=[stash.pk]),
        {"_judge_again": "1", "ids": [str(item.pk) for item in items]},
        follow=True,
    )
    said = [str(message) for message in response.context["messages"]]
    assert said[0] == "3 items sent to be judged again."
    assert links(said[1])[str(stash)].startswith(judging_url(stash, 3) + "&since=")


def test_the_counts_as_json(admin_client, items, settings):
    settings.STASH_BATCH_SIZE = 2
    stash = items[0].stash
    processing.reprocess(stash.contents.all())
    processing.judge([items[0].pk])
    counts = admin_client.get(counts_url(stash, 3, time.time() - 2)).json()
    assert {key: counts[key] for key in ("sent", "judged", "waiting", "done")} == {
        "sent": 3,
        "judged": 1,
        "waiting": 2,
        "done": False,
    }
    assert counts["per_second"] == pytest.approx(0.5, rel=0.2)
    assert counts["text"].startswith("1 of 3 items judged, 2 waiting, 0.")
    assert counts["text"].endswith(" items/s.")
    counts = admin_client.get(counts_url(stash, 3)).json()
    assert counts["per_second"] is None and counts["text"] == "1 of 3 items judged, 2 waiting."


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?sent=",
        "?sent=many",
        "?sent=-3",
        "?sent=3.5",
        "?sent=3&since=yesterday",
        "?sent=3&since=nan",
        "?sent=3&since=1e300",
    ],
)
def test_a_bad_query_is_a_clear_400(admin_client, items, query):
    stash = items[0].stash
    page = admin_client.get(reverse("admin:stash_stash_judging", args=[stash.pk]) + query)
    assert page.status_code == 400
    assert "must be" in page.content.decode()
    counts = admin_client.get(reverse("admin:stash_stash_judging_counts", args=[stash.pk]) + query)
    assert counts.status_code == 400
    assert "must be" in counts.json()["error"]


def test_an_unknown_stash_is_a_404(admin_client, items):
    assert admin_client.get(reverse("admin:stash_stash_judging", args=[99999]) + "?sent=3").status_code == 404
    assert admin_client.get(reverse("admin:stash_stash_judging_counts", args=[99999]) + "?sent=3").status_code == 404
    assert admin_client.get(reverse("admin:stash_stash_judging", args=["x"]) + "?sent=3").status_code == 404


def test_whoever_may_view_the_items_may_follow_their_judging(django_user_model, items):
    stash = items[0].stash
    viewer = staff(django_user_model, "viewer", "view_stash", "view_content")
    assert viewer.get(judging_url(stash, 3)).status_code == 200
    assert viewer.get(counts_url(stash, 3)).status_code == 200
    stash_only = staff(django_user_model, "stash-only", "view_stash")
    assert stash_only.get(judging_url(stash, 3)).status_code == 403
    assert stash_only.get(counts_url(stash, 3)).status_code == 403
    items_only = staff(django_user_model, "items-only", "view_content")
    assert items_only.get(judging_url(stash, 3)).status_code == 403
