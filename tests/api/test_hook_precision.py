"""Hook precision and ``min_precision`` through the API, ``/metrics`` and the pipeline document."""

import pytest

from stash import processing
from stash.models import Content, HookConfig
from stash.processing.importing import InvalidDocument, export_document, import_document
from tests.support.metrics_support import scrape
from tests.support.precision import decided_ago, judge_stash, judged, people

pytestmark = pytest.mark.django_db

HOOKS = "/api/stashes/judged/hooks/"


@pytest.fixture
def stash(make_stash, register_temporarily):
    return judge_stash(make_stash, register_temporarily)


@pytest.fixture
def manager(make_user):
    return make_user("max", "stash.view_hookconfig", "stash.change_hookconfig")


@pytest.fixture
def decided(stash, django_user_model):
    """Three held items rejected (one 20 days ago) and one approved, 3 days ago."""
    rita = people(django_user_model, "rita")["rita"]
    items = [judged(stash, f"q{n}?") for n in range(4)]
    processing.reject(Content.objects.filter(pk__in=[item.pk for item in items[:3]]), rita)
    processing.approve(Content.objects.filter(pk=items[3].pk), rita)
    decided_ago(items[0], 20)
    for item in items[1:]:
        decided_ago(item, 3)
    return items


def test_the_hooks_list_and_a_hook_carry_precision_over_7_and_30_days(api, manager, stash, decided):
    listed = api(manager).get(HOOKS).json()
    assert listed[0]["precision"] == {
        "7d": {"precision": pytest.approx(2 / 3), "decisions": 3, "confirmed": 2, "reversed": 1},
        "30d": {"precision": 0.75, "decisions": 4, "confirmed": 3, "reversed": 1},
    }
    one = api(manager).get(f"{HOOKS}{listed[0]['id']}/").json()
    assert one["precision"] == listed[0]["precision"]
    assert (one["min_precision"], one["min_precision_count"], one["auto_observed_at"]) == (None, 20, None)


def test_min_precision_is_set_and_checked_through_the_api(api, manager, stash):
    config = stash.hooks.get()
    url = f"{HOOKS}{config.pk}/"
    for bad in (0, 1.5, -0.2):
        response = api(manager).patch(url, {"min_precision": bad}, format="json")
        assert response.status_code == 400
        assert response.json() == {"min_precision": ["A precision above 0 and at most 1, e.g. 0.8."]}
    response = api(manager).patch(url, {"min_precision_count": 0}, format="json")
    assert response.status_code == 400
    response = api(manager).patch(url, {"min_precision": 0.8, "min_precision_count": 10}, format="json")
    assert response.status_code == 200, response.json()
    config.refresh_from_db()
    assert (config.min_precision, config.min_precision_count) == (0.8, 10)
    response = api(manager).patch(url, {"min_precision": None}, format="json")
    assert response.status_code == 200 and HookConfig.objects.get(pk=config.pk).min_precision is None


def test_metrics_give_each_enforcing_hooks_precision_and_count_per_window(client, stash, decided, make_stash):
    watching = make_stash(
        "watching", hooks=[{"hook": "require_fields", "params": {"fields": ["t"]}, "mode": "observe"}]
    )
    page = scrape(client)
    labels = {"stash": "judged", "config": stash.hooks.get().pk, "hook": "test_judge"}
    assert page.value("stash_hook_precision", **labels, window="7d") == pytest.approx(2 / 3)
    assert page.value("stash_hook_precision_decisions", **labels, window="7d") == 3
    assert page.value("stash_hook_precision", **labels, window="30d") == 0.75
    assert page.value("stash_hook_precision_decisions", **labels, window="30d") == 4
    observing = {"stash": "watching", "config": watching.hooks.get().pk, "hook": "require_fields"}
    with pytest.raises(KeyError):
        page.value("stash_hook_precision_decisions", **observing, window="30d")


def test_the_document_carries_the_minimum_and_an_older_one_imports_with_it_off(stash, make_stash):
    config = stash.hooks.get()
    config.min_precision, config.min_precision_count = 0.85, 12
    processing.save_hook(config)
    document = export_document(stash)
    assert document["hooks"][0]["min_precision"] == 0.85 and document["hooks"][0]["min_precision_count"] == 12

    copy = make_stash("copy")
    import_document(copy, document)
    copied = copy.hooks.get()
    assert (copied.min_precision, copied.min_precision_count) == (0.85, 12)

    older = {
        **document,
        "hooks": [{k: v for k, v in h.items() if not k.startswith("min_precision")} for h in document["hooks"]],
    }
    import_document(copy, older)
    copied = copy.hooks.get()
    assert (copied.min_precision, copied.min_precision_count) == (None, 20)

    wrong = {**document, "hooks": [{**document["hooks"][0], "min_precision": 2}]}
    with pytest.raises(InvalidDocument, match=r"hooks\[0\]\.min_precision"):
        import_document(copy, wrong)
    wrong = {**document, "hooks": [{**document["hooks"][0], "min_precision": "high"}]}
    with pytest.raises(InvalidDocument, match="must be a number"):
        import_document(copy, wrong)
