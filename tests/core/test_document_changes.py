"""What changed between two pipeline documents, in words that say what each thing became."""

from stash.core.documents import changes, summary


def document(*hooks, **stash):
    return {"stash": {"slug": "audit", "on_error": "reject", **stash}, "hooks": list(hooks)}


def hook(label, name="max_size", **fields):
    return {"hook": name, "label": label, "params": {}, "enabled": True, "mode": "enforce", **fields}


def test_a_disabled_hook_is_said_to_be_disabled_and_enabled_again_enabled():
    on, off = hook("Blocklist", enabled=True), hook("Blocklist", enabled=False)
    assert changes(document(on), document(off)) == ["Blocklist disabled"]
    assert changes(document(off), document(on)) == ["Blocklist enabled"]


def test_each_param_and_field_says_its_value_before_and_after():
    before = hook("Size", params={"max_bytes": 1000, "fields": ["text"]})
    after = hook("Size", params={"max_bytes": 2000, "strict": True}, mode="observe")
    assert changes(document(before), document(after)) == [
        'Size: max_bytes 1000 → 2000, strict unset → true, fields ["text"] → unset, mode enforce → observe'
    ]


def test_a_secret_param_is_named_and_its_value_never_shown():
    before = hook("Notify", "webhook", params={"url": "https://a.example", "secret": "old-secret-value-1"})
    after = hook("Notify", "webhook", params={"url": "https://b.example", "secret": "new-secret-value-2"})
    said = changes(document(before), document(after))
    assert said == ["Notify: url https://a.example → https://b.example, secret changed (secret, not shown)"]
    assert "secret-value" not in str(said)


def test_settings_order_and_long_values_say_what_they_became():
    a, b = hook("A"), hook("B")
    long_condition = "payload.text and len(payload.text) > 1000 and payload.lang == 'en'"
    said = changes(document(a, b), document(b, {**a, "condition": long_condition}, on_error="accept"))
    assert said == [
        "stash on_error reject → accept",
        'A: condition none → "payload.text and len(payload.text) > 1…',  # cut at 40 characters
        "order: B, A",
    ]
    assert summary(document(a), document(a, on_error="accept"), "import") == "import: stash on_error reject → accept"
