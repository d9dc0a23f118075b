"""A payload in one line of a list (``short_preview``): an excerpt, a filename, a thumbnail only for real
images. No database."""

import base64

from stash.admin.previews import EXCERPT_CHARS, MAX_THUMBNAIL_BYTES, ShortPreview, short_preview

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def b64(data):
    return base64.b64encode(data).decode()


def test_a_text_is_cut_to_an_excerpt_with_its_whitespace_collapsed():
    shown = short_preview({"text": "hello\n\n   world " + "x" * 200})
    assert shown.text.startswith("hello world x") and shown.text.endswith("…")
    assert len(shown.text) == EXCERPT_CHARS
    assert short_preview({"text": "short"}) == ShortPreview(text="short")


def test_without_text_the_first_other_text_or_the_json_is_shown():
    assert short_preview({"n": 1, "title": "A title", "filename": "a.txt"}).text == "A title"
    assert short_preview({"data": {"probability": 0.5}}).text == '{ "data": { "probability": 0.5 } }'
    assert short_preview({"filename": "a.bin"}) == ShortPreview(filename="a.bin")


def test_an_image_file_is_shown_as_a_thumbnail_of_its_own_type():
    shown = short_preview({"filename": "cat.jpg", "b64_file": b64(PNG)})  # the bytes say png, whatever the name
    assert shown.image == f"data:image/png;base64,{b64(PNG)}" and shown.filename == "cat.jpg"
    assert short_preview({"b64_file": "data:image/png;base64," + b64(PNG)}).image == shown.image  # a data URL too


def test_files_that_are_not_images_or_too_large_or_not_base64_get_no_thumbnail():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    for value in (b64(b"%PDF-1.7 ..."), b64(svg), "not base64!", "", 42, b64(PNG + b"\0" * (MAX_THUMBNAIL_BYTES + 1))):
        assert short_preview({"b64_file": value}).image == "", value if isinstance(value, int) else value[:20]


def test_a_payload_that_is_not_an_object_is_shown_as_json():
    assert short_preview(["a", 1]) == ShortPreview(text='[ "a", 1 ]')
