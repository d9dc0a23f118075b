"""The hook page's minimum precision, and each hook's precision on the hook and stash pages."""

import pytest
from django.urls import reverse
from django.utils import timezone

from stash import processing
from stash.models import Content, HookConfig
from tests.support.precision import judge_stash, judged, people

from .test_admin_params import page_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def stash(make_stash, register_temporarily):
    return judge_stash(make_stash, register_temporarily)


def hook_page(config):
    return reverse("admin:stash_hookconfig_change", args=[config.pk])


def test_the_hook_page_sets_the_minimum_and_refuses_one_out_of_range(admin_client, stash):
    config = stash.hooks.get()
    response = admin_client.post(hook_page(config), page_post(config, min_precision="1.2"))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["min_precision"] == [
        "A precision above 0 and at most 1, e.g. 0.8."
    ]
    response = admin_client.post(hook_page(config), page_post(config, min_precision="0.8", min_precision_count="10"))
    assert response.status_code == 302
    config.refresh_from_db()
    assert (config.min_precision, config.min_precision_count) == (0.8, 10)


def test_the_hook_and_stash_pages_show_the_precision_of_each_window(admin_client, stash, django_user_model):
    rita = people(django_user_model, "rita")["rita"]
    items = [judged(stash, f"q{n}?") for n in range(4)]
    processing.reject(Content.objects.filter(pk__in=[item.pk for item in items[:3]]), rita)
    processing.approve(Content.objects.filter(pk=items[3].pk), rita)
    config = stash.hooks.get()
    for url in (hook_page(config), reverse("admin:stash_stash_change", args=[stash.pk])):
        page = admin_client.get(url).content.decode().replace("\xa0", " ")  # figures do not break
        assert "precision 7 d 0.75 of 4 · 30 d 0.75 of 4" in page


def test_setting_the_mode_back_to_enforce_ends_the_warning(admin_client, stash):
    config = stash.hooks.get()
    HookConfig.objects.filter(pk=config.pk).update(mode="observe", auto_observed_at=timezone.now(), min_precision=0.8)
    assert "switched to observe by the system" in admin_client.get(hook_page(config)).content.decode()
    response = admin_client.post(hook_page(config), page_post(config, mode="enforce", min_precision="0.8"))
    assert response.status_code == 302
    config.refresh_from_db()
    assert config.mode == "enforce" and config.auto_observed_at is None
    assert "switched to observe by the system" not in admin_client.get(hook_page(config)).content.decode()


def test_a_duplicated_hook_keeps_its_minimum(admin_client, stash):
    config = stash.hooks.get()
    HookConfig.objects.filter(pk=config.pk).update(min_precision=0.7, min_precision_count=8)
    response = admin_client.post(
        reverse("admin:stash_hookconfig_changelist"), {"action": "duplicate", "_selected_action": [config.pk]}
    )
    assert response.status_code == 302
    copy = HookConfig.objects.exclude(pk=config.pk).get()
    assert (copy.min_precision, copy.min_precision_count, copy.enabled) == (0.7, 8, False)
