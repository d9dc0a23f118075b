"""A stash's pipeline as code in the admin: download, upload (preview, then apply), versions (list, view,
compare, restore), and the version that judged an item."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from stash import processing
from stash.models import Example, HookConfig, PipelineVersion

from .test_admin import change_url, judge, staff

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret-s3cret"
HOOKS = [
    {"hook": "require_fields", "label": "Needs text", "params": {"fields": ["text"]}},
    {"hook": "keyword_blocklist", "label": "No spam", "params": {"words": ["spam"]}},
    {"hook": "webhook", "label": "Tell them", "params": {"url": "https://example.com/in", "secret": SECRET}},
]
#: What may see a stash's pipeline, and what may change it too.
VIEWER = ("view_stash", "view_hookconfig", "view_example")
EDITOR = (
    *VIEWER,
    "change_stash",
    "add_hookconfig",
    "change_hookconfig",
    "delete_hookconfig",
    "add_example",
    "delete_example",
)


@pytest.fixture
def audit(make_stash):
    return make_stash("audit", name="Audit", hooks=HOOKS)


def url(name, stash, *args):
    return reverse(f"admin:stash_stash_{name}", args=[stash.pk, *args])


def upload(client, stash, document):
    """Post ``document`` (a dict, or the file's text) to the upload page: the preview."""
    text = document if isinstance(document, (str, bytes)) else json.dumps(document)
    return client.post(
        url("upload", stash),
        {"file": SimpleUploadedFile("pipeline.json", text.encode() if isinstance(text, str) else text)},
    )


def apply(client, stash, preview):
    """Press "Apply this pipeline" on a preview: the hidden fields it carries, sent back."""
    form = preview.context["apply_form"]
    return client.post(
        url("upload", stash),
        {"document": form["document"].value(), "version": form["version"].value(), "_apply": "Apply this pipeline"},
        follow=True,
    )


def hooks_of(stash):
    return list(stash.hooks.in_order().values_list("label", "params", "enabled"))


def said(response):
    return [str(message) for message in response.context["messages"]]


def edited_export(stash, **changes):
    """The stash's export with the hook labelled ``No spam`` blocking other words, and a hook added."""
    document = processing.export_document(stash)
    for hook in document["hooks"]:
        if hook["label"] == "No spam":
            hook["params"] = {"words": changes.get("words", ["spam", "scam"])}
    document["hooks"].append({"hook": "max_size", "label": "Small", "params": {"max_bytes": 1000}, "position": 9})
    return document


# --- download ------------------------------------------------------------------------------------


def test_download_gives_the_pipeline_as_a_json_attachment_without_ids_or_secrets(admin_client, audit):
    Example.objects.create(stash=audit, name="plain", payload={"text": "hi"}, verdict="accepted")
    response = admin_client.get(url("download", audit))
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"] == 'attachment; filename="audit-pipeline.json"'
    document = json.loads(response.content)
    assert document["format"] == "stash.pipeline" and document["stash"]["slug"] == "audit"
    assert [hook["label"] for hook in document["hooks"]] == ["Needs text", "No spam", "Tell them"]
    assert all("id" not in hook for hook in document["hooks"])
    assert SECRET not in response.content.decode()
    assert document["examples"] == [
        {
            "name": "plain",
            "payload": {"text": "hi"},
            "verdict": "accepted",
            "reason_code": "",
            "hook": "",
            "service_answers": {},
        }
    ]


def test_the_stash_page_links_to_the_pipeline_tools_and_shows_the_examples_policy(admin_client, audit):
    page = admin_client.get(change_url(audit)).content.decode()
    for name in ("versions", "examples", "download", "upload"):
        assert f'href="{url(name, audit)}"' in page, name
    assert 'name="examples_policy"' in page and "refuse the change" in page


def test_who_may_not_see_the_hooks_may_not_download_them_nor_see_the_links(django_user_model, audit):
    client = staff(django_user_model, "viewer", "view_stash")
    assert client.get(url("download", audit)).status_code == 403
    assert client.get(url("versions", audit)).status_code == 403
    assert url("download", audit) not in client.get(change_url(audit)).content.decode()


# --- upload --------------------------------------------------------------------------------------


@pytest.mark.parametrize("codenames", [VIEWER, (*VIEWER, "change_stash"), (*VIEWER, "change_hookconfig")])
def test_uploading_needs_the_change_permissions_on_the_stash_and_its_hooks(django_user_model, audit, codenames):
    client = staff(django_user_model, "someone", *codenames)
    before, versions = hooks_of(audit), audit.versions.count()
    assert client.get(url("upload", audit)).status_code == 403
    assert upload(client, audit, edited_export(audit)).status_code == 403
    assert hooks_of(audit) == before and audit.versions.count() == versions
    assert url("upload", audit) not in client.get(change_url(audit)).content.decode()


def test_a_preview_says_what_would_change_and_changes_nothing_then_apply_makes_one_new_version(
    django_user_model, audit
):
    client = staff(django_user_model, "editor", *EDITOR)
    before, version = hooks_of(audit), audit.config_version
    preview = upload(client, audit, edited_export(audit))
    assert preview.status_code == 200
    page = preview.content.decode()
    assert preview.context["plan"].changes == ["added Small", 'No spam: words ["spam"] → ["spam", "scam"]']
    assert (
        "<li>added Small</li>" in page
        and "<li>No spam: words [&quot;spam&quot;] → [&quot;spam&quot;, &quot;scam&quot;]</li>" in page
    )
    assert hooks_of(audit) == before and audit.versions.count() == version

    done = apply(client, audit, preview)
    assert done.redirect_chain[-1][0] == change_url(audit)
    audit.refresh_from_db()
    assert audit.config_version == version + 1 and audit.versions.count() == version + 1
    assert said(done) == [
        (
            f"Pipeline uploaded: it is pipeline version {version + 1} now "
            '(added Small; No spam: words ["spam"] → ["spam", "scam"]).'
        )
    ]
    assert [label for label, _params, _enabled in hooks_of(audit)] == ["Needs text", "No spam", "Tell them", "Small"]
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "scam"]}
    assert audit.hooks.get(label="Tell them").params["secret"] == SECRET  # kept, though the file has none
    newest = audit.versions.get(number=version + 1)
    assert newest.created_by.username == "editor" and newest.summary.startswith("upload: ")

    again = apply(client, audit, preview)  # the same confirmation, sent twice: the second changes nothing
    assert audit.versions.count() == version + 1
    assert "The pipeline has changed since this preview" in said(again)[0]


@pytest.mark.parametrize(
    "broken, errors",
    [
        (
            {"hooks": [{"hook": "keyword_blocklist", "label": "No spam", "params": {"words": "spam"}}]},
            ["hooks[0].params: No spam (keyword_blocklist):", "words: Must be a list."],
        ),
        (
            {"hooks": [{"hook": "no_such_hook", "label": "Ghost"}]},
            ["hooks[0].hook: Ghost (no_such_hook): &#x27;no_such_hook&#x27; is not a registered hook."],
        ),
        (
            {"hooks": [{"hook": "require_fields", "params": {"fields": ["text"]}, "enabled": "yes"}]},
            ["hooks[0].enabled", "must be true or false"],
        ),
        ({"format": "something else", "hooks": []}, ["format: Must be &#x27;stash.pipeline&#x27;."]),
    ],
)
def test_a_bad_document_is_refused_naming_the_hook_and_field_and_changes_nothing(admin_client, audit, broken, errors):
    document = {"format": "stash.pipeline", "format_version": 1, **broken}
    before, versions = hooks_of(audit), audit.versions.count()
    response = upload(admin_client, audit, document)
    assert response.status_code == 200 and response.context["plan"] is None
    page = response.content.decode()
    listed = page[page.index('class="errorlist') : page.index("</ul>", page.index('class="errorlist'))]
    for error in errors:
        assert error in listed
    assert 'name="_apply"' not in page
    assert hooks_of(audit) == before and audit.versions.count() == versions


@pytest.mark.parametrize(
    "content, error",
    [
        (b"{oops", "This file is not JSON"),
        (b"\xff\xfe{", "This file is not text in UTF-8."),
        (b"[1, 2]", "document: A pipeline document is a JSON object."),
        (b"[" * 100_000, "This file nests its JSON too deeply"),
        (
            b" " * (1024 * 1024 + 1),
            "A pipeline document has at most 1,048,576 bytes (STASH_MAX_DOCUMENT_BYTES); this one has 1,048,577.",
        ),
    ],
)
def test_a_file_that_is_not_a_document_is_refused_on_the_field(admin_client, audit, content, error):
    response = upload(admin_client, audit, content)
    assert error in response.content.decode() and response.context["plan"] is None


def test_a_forged_confirmation_is_checked_again_and_refused_with_a_400(admin_client, audit):
    before = hooks_of(audit)
    response = admin_client.post(
        url("upload", audit), {"document": "{not json", "version": audit.config_version, "_apply": "Apply"}
    )
    assert response.status_code == 400 and "This file is not JSON" in response.content.decode()
    bad = {"format": "stash.pipeline", "format_version": 1, "hooks": [{"hook": "no_such_hook"}]}
    response = admin_client.post(
        url("upload", audit),
        {"document": json.dumps(bad), "version": audit.config_version, "_apply": "Apply"},
        follow=True,
    )
    assert "Nothing was changed" in said(response)[0] and "no_such_hook" in said(response)[0]
    assert hooks_of(audit) == before


def test_a_preview_shows_the_examples_it_breaks_and_a_stash_that_blocks_them_cannot_apply_it(admin_client, audit):
    Example.objects.create(stash=audit, name="scam gets in", payload={"text": "a scam"}, verdict="accepted")
    Example.objects.create(stash=audit, name="spam stays out", payload={"text": "spam"}, verdict="rejected")
    before, versions = hooks_of(audit), audit.versions.count()
    preview = upload(admin_client, audit, edited_export(audit))
    page = preview.content.decode()
    results = page[page.index('id="example-results"') : page.index("</table>", page.index('id="example-results"'))]
    assert "scam gets in" in results and "expected accepted, got rejected" in results
    assert results.count("stash-example-passed") == 1 and results.count("stash-example-failed") == 1
    assert "this stash refuses such changes: it cannot be applied" in page and 'name="_apply"' not in page

    # Sent all the same, the confirmation is checked again: refused, nothing changed.
    response = apply(admin_client, audit, preview)
    assert said(response)[0].startswith("Nothing was changed. It breaks golden examples of audit")
    assert "Example “scam gets in”: expected accepted, got rejected" in said(response)[0]
    assert hooks_of(audit) == before and audit.versions.count() == versions


def test_a_stash_that_warns_applies_a_pipeline_that_breaks_examples_and_says_so(admin_client, audit):
    audit.examples_policy = "warn"
    audit.save()
    Example.objects.create(stash=audit, name="scam gets in", payload={"text": "a scam"}, verdict="accepted")
    preview = upload(admin_client, audit, edited_export(audit))
    assert "this stash makes such changes with a warning" in preview.content.decode()
    response = apply(admin_client, audit, preview)
    assert said(response)[0].startswith("Pipeline uploaded")
    assert said(response)[1].startswith(
        "It breaks golden examples: Example “scam gets in”: expected accepted, got rejected"
    )
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "scam"]}


def test_examples_in_a_file_need_the_permissions_to_add_and_delete_examples(django_user_model, audit):
    client = staff(django_user_model, "editor", *[name for name in EDITOR if name != "delete_example"])
    document = edited_export(audit)
    document["examples"] = [{"name": "x", "payload": {"text": "x"}, "verdict": "accepted"}]
    response = upload(client, audit, document)
    assert "needs permissions you do not have: stash.delete_example." in response.content.decode()
    del document["examples"]
    assert upload(client, audit, document).context["plan"].changes == [
        "added Small",
        'No spam: words ["spam"] → ["spam", "scam"]',
    ]


# --- versions ------------------------------------------------------------------------------------


def edit_in_admin(client, stash, words):
    """Change the No spam hook's words on its own page, as a person does."""
    config = stash.hooks.get(label="No spam")
    response = client.post(
        change_url(config),
        {
            "hook": config.hook,
            "label": config.label,
            "enabled": "on",
            "params": json.dumps({"words": words}),
            "mode": "enforce",
            "on_error": "inherit",
            "condition": "",
            "timeout_ms": 2000,
        },
    )
    assert response.status_code == 302, response.content.decode()


def test_the_versions_page_lists_each_version_with_who_when_and_what(admin_client, audit):
    edit_in_admin(admin_client, audit, ["spam", "eggs"])
    audit.refresh_from_db()
    response = admin_client.get(url("versions", audit))
    rows = response.context["rows"]
    assert [version.number for version in rows] == list(range(audit.config_version, 0, -1))
    newest = rows[0]
    assert newest.created_by.username == "admin" and newest.summary == 'No spam: words ["spam"] → ["spam", "eggs"]'
    page = response.content.decode()
    assert (
        f'href="{url("version", audit, newest.number)}"' in page
        and "No spam: words [&quot;spam&quot;] → [&quot;spam&quot;, &quot;eggs&quot;]" in page
    )
    assert "<td>admin</td>" in page
    # The two newest are picked for comparing.
    assert f'name="a" value="{newest.number - 1}" checked' in page
    assert f'name="b" value="{newest.number}" checked' in page


def test_a_version_page_shows_its_document_indented_without_secrets(admin_client, audit):
    page = admin_client.get(url("version", audit, audit.config_version)).content.decode()
    assert "&quot;label&quot;: &quot;Tell them&quot;" in page and '\n  "format": ' not in page
    assert "{\n  &quot;format&quot;: &quot;stash.pipeline&quot;," in page
    assert SECRET not in page and "&quot;id&quot;" not in page
    assert "the current version" in page and "Restore this version" not in page
    assert admin_client.get(url("version", audit, 99)).status_code == 404


def test_a_version_is_shown_in_the_formats_key_order_whatever_order_the_database_keeps(admin_client, audit):
    version = audit.versions.get(number=audit.config_version)
    shuffled = {key: value for key, value in reversed(version.document.items())}  # as jsonb might give it
    shuffled["hooks"] = [dict(reversed(hook.items())) for hook in shuffled["hooks"]]
    PipelineVersion.objects.filter(pk=version.pk).update(document=shuffled)
    document = admin_client.get(url("version", audit, version.number)).context["document"]
    assert list(json.loads(document)) == ["format", "format_version", "stash", "hooks"]
    assert list(json.loads(document)["hooks"][0]) == [
        "hook",
        "label",
        "params",
        "enabled",
        "mode",
        "position",
        "on_error",
        "condition",
        "timeout_ms",
        "cache_seconds",
        "min_precision",
        "min_precision_count",
    ]


def test_comparing_two_versions_shows_the_changes_and_a_marked_diff(admin_client, audit):
    old = audit.config_version
    edit_in_admin(admin_client, audit, ["spam", "eggs"])
    response = admin_client.get(url("compare", audit) + f"?a={old}&b={old + 1}")
    assert response.context["diff"].changes == ['No spam: words ["spam"] → ["spam", "eggs"]']
    page = response.content.decode()
    assert '<span class="stash-diff-added"><span class="visually-hidden">added: </span>+' in page
    assert "&quot;eggs&quot;" in page[page.index('id="diff"') :]
    lines = response.context["lines"]
    assert ("file", "", f"--- version {old}") in lines and ("file", "", f"+++ version {old + 1}") in lines
    assert any(kind == "removed" and words == "removed:" and line.startswith("-") for kind, words, line in lines)
    assert any(kind == "added" and line.strip() == '+          "eggs"' for kind, words, line in lines)


@pytest.mark.parametrize(
    "query, error",
    [
        ("?a=1&b=x", "b: Enter a whole number."),
        ("?a=1", "b: This field is required"),
        ("?a=1&b=99", "version: audit has no version 99."),
    ],
)
def test_comparing_what_is_not_there_is_a_400_naming_it(admin_client, audit, query, error):
    response = admin_client.get(url("compare", audit) + query)
    assert response.status_code == 400 and error in response.content.decode()


def test_restoring_a_version_asks_first_then_records_it_as_a_new_version(admin_client, audit):
    old = audit.config_version
    edit_in_admin(admin_client, audit, ["spam", "eggs"])
    confirm = admin_client.get(url("restore", audit, old))
    said_now = "No spam: words [&quot;spam&quot;, &quot;eggs&quot;] → [&quot;spam&quot;]"  # from the current one
    assert said_now in confirm.content.decode() and "Yes, restore version" in confirm.content.decode()
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "eggs"]}

    done = admin_client.post(url("restore", audit, old), follow=True)
    audit.refresh_from_db()
    assert said(done) == [f"Version {old} restored as version {old + 2}."]
    assert done.redirect_chain[-1][0] == url("version", audit, old + 2)
    assert audit.config_version == old + 2 and audit.hooks.get(label="No spam").params == {"words": ["spam"]}
    assert audit.hooks.get(label="Tell them").params["secret"] == SECRET
    assert audit.versions.get(number=old + 2).summary.startswith(f"restore of version {old}: ")


def test_restoring_needs_the_change_permissions(django_user_model, audit):
    client = staff(django_user_model, "viewer", *VIEWER)
    assert client.get(url("version", audit, 1)).status_code == 200
    assert client.get(url("restore", audit, 1)).status_code == 403
    assert client.post(url("restore", audit, 1)).status_code == 403
    assert audit.versions.count() == audit.config_version


def test_a_restore_that_breaks_an_example_of_a_stash_that_blocks_is_refused(admin_client, audit):
    old = audit.config_version
    edit_in_admin(admin_client, audit, ["spam", "eggs"])
    Example.objects.create(stash=audit, name="no eggs", payload={"text": "eggs"}, verdict="rejected")
    response = admin_client.post(url("restore", audit, old), follow=True)
    assert said(response)[-1].startswith(f"Version {old} was not restored. It breaks golden examples of audit")
    assert "Example “no eggs”: expected rejected, got accepted" in said(response)[-1]
    assert audit.hooks.get(label="No spam").params == {"words": ["spam", "eggs"]}
    assert not PipelineVersion.objects.filter(stash=audit, number__gt=old + 1).exists()


def test_an_items_trail_links_to_the_version_that_judged_it(admin_client, audit):
    item = judge(audit, text="some spam")
    run = item.runs.get()
    version_url = url("version", audit, run.config_version)
    item_page = admin_client.get(change_url(item)).content.decode()
    assert f'pipeline version <a class="stash-inline-link" href="{version_url}"' in item_page
    run_page = admin_client.get(reverse("admin:stash_pipelinerun_change", args=[run.pk])).content.decode()
    assert f'href="{version_url}"' in run_page


def test_a_run_older_than_versions_names_its_version_without_a_link(admin_client, audit):
    item = judge(audit, text="hello")
    PipelineVersion.objects.filter(stash=audit).delete()
    page = admin_client.get(change_url(item)).content.decode()
    assert f"pipeline version {item.runs.get().config_version}, in" in page
    assert url("versions", audit) not in page


def test_secrets_appear_on_no_page_of_the_pipeline(admin_client, audit):
    HookConfig.objects.filter(label="Tell them").update(label="Tell them now")  # a second version with the secret
    edit_in_admin(admin_client, audit, ["eggs"])
    audit.refresh_from_db()
    for page in (
        url("versions", audit),
        url("version", audit, audit.config_version),
        url("download", audit),
        url("compare", audit) + f"?a=1&b={audit.config_version}",
        url("restore", audit, 1),
    ):
        assert SECRET not in admin_client.get(page).content.decode(), page
