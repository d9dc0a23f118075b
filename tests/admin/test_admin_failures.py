"""The admin's failure store: groups filtered by stash and time, a group's page with an example's
trail, and Re-drive with what became of the items."""

from datetime import timedelta

import pytest
from django.utils import timezone

from stash import processing
from stash.models import Failure

from ..support.fussy_hook import FIXED, Fussy, judged_fussy_stash

pytestmark = pytest.mark.django_db

LIST = "/admin/stash/content/failures/"


@pytest.fixture
def fussy(make_stash, register_temporarily):
    yield judged_fussy_stash(make_stash, register_temporarily, colours=3)
    FIXED.clear()


def test_the_list_shows_the_group_and_links_its_page(fussy, admin_client):
    page = admin_client.get(LIST).content.decode()
    key = processing.failures.groups()[0].key
    assert f'href="/admin/stash/content/failures/{key}/"' in page
    assert "ValueError" in page and "Fussy" in page


def test_the_list_filters_by_stash_and_time(fussy, admin_client, make_stash):
    calm = make_stash("calm")
    assert "ValueError" not in admin_client.get(LIST, {"stash": calm.pk}).content.decode()
    assert "ValueError" in admin_client.get(LIST, {"stash": fussy.pk}).content.decode()
    Failure.objects.update(at=timezone.now() - timedelta(days=3))
    since = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    assert "No failure matches these filters." in admin_client.get(LIST, {"since": since}).content.decode()
    refused = admin_client.get(LIST, {"since": "soon"})
    assert refused.status_code == 200 and "Enter a valid date/time." in refused.content.decode()


def test_a_window_that_ends_before_it_starts_is_refused_on_until(fussy, admin_client):
    page = admin_client.get(LIST, {"since": "2026-01-02T00:00", "until": "2026-01-01T00:00"}).content.decode()
    assert "“Until” must not come before “since”." in page
    assert "ValueError" not in page  # nothing listed for a window that cannot hold anything


def test_the_stash_page_links_its_failures(fussy, admin_client):
    page = admin_client.get(f"/admin/stash/stash/{fussy.pk}/change/").content.decode()
    assert f"/admin/stash/content/failures/?stash={fussy.pk}" in page


def test_a_group_page_shows_an_example_trail_and_redrives(fussy, admin_client):
    key = processing.failures.groups()[0].key
    url = f"/admin/stash/content/failures/{key}/"
    page = admin_client.get(url).content.decode()
    assert "Fussy: ValueError: unknown colour" in page
    assert 'class="stash-trail"' in page and "Judge its 3 items again" in page

    FIXED.add(Fussy)
    response = admin_client.post(url, follow=True)
    assert "3 items sent to be judged again." in response.content.decode()
    processing.judge(list(processing.failures.items_of(key).values_list("pk", flat=True)))
    page = admin_client.get(url).content.decode()
    assert "accepted: <strong>3</strong>" in page and "still failing: <strong>0</strong>" in page


def test_a_viewer_reads_but_may_not_redrive(fussy, client, django_user_model):
    from django.contrib.auth.models import Permission

    viewer = django_user_model.objects.create_user("vi", password="pass-word-123", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_content"))
    client.force_login(viewer)
    key = processing.failures.groups()[0].key
    page = client.get(f"/admin/stash/content/failures/{key}/").content.decode()
    assert "Judge its" not in page
    assert client.post(f"/admin/stash/content/failures/{key}/").status_code == 403
    assert client.get("/admin/stash/content/failures/ffffffffffffffff/").status_code == 404
