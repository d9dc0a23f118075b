"""The submit form builds the payload from a text, a file and JSON data, and checks it like the API."""

import base64

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from stash.web.forms import SubmitForm

pytestmark = pytest.mark.django_db


@pytest.fixture
def stash(make_stash):
    return make_stash("audit", max_payload_bytes=200)


def form(stash, file=None, **data):
    return SubmitForm(stash, data, {"file": file} if file else {})


def test_text_file_and_data_make_the_payload(stash):
    submitted = form(
        stash, text="hello", data='{"source": "phone", "n": 2}', file=SimpleUploadedFile("note.txt", b"file body")
    )
    assert submitted.is_valid(), submitted.errors
    assert submitted.payload == {
        "text": "hello",
        "filename": "note.txt",
        "b64_file": base64.b64encode(b"file body").decode(),
        "data": {"source": "phone", "n": 2},
    }


def test_only_what_was_given_goes_into_the_payload(stash):
    submitted = form(stash, text="just text")
    assert submitted.is_valid()
    assert submitted.payload == {"text": "just text"}


def test_an_empty_form_is_refused(stash):
    submitted = form(stash, text="", data="  ")
    assert not submitted.is_valid()
    assert submitted.non_field_errors() == ["Give a text, a file or some data."]


@pytest.mark.parametrize(
    "data, message",
    [
        ("[1, 2]", 'Data must be a JSON object, like {"key": "value"}.'),
        ('"text"', 'Data must be a JSON object, like {"key": "value"}.'),
        ("{'single': 'quotes'}", "This is not valid JSON: Expecting property name enclosed in double quotes"),
        ('{"x": NaN}', "This is not valid JSON: NaN is not JSON"),
    ],
)
def test_data_must_be_a_json_object(stash, data, message):
    submitted = form(stash, text="hi", data=data)
    assert not submitted.is_valid()
    assert submitted.errors["data"][0].startswith(message)


def test_data_no_database_can_store_is_refused(stash):
    submitted = form(stash, data='{"x": "nul \\u0000"}')
    assert not submitted.is_valid()
    assert submitted.non_field_errors() == ["The payload contains a NUL character (\\u0000), which cannot be stored."]


def test_a_file_larger_than_the_stash_takes_is_refused_before_it_is_read(stash):
    submitted = form(stash, file=SimpleUploadedFile("big.bin", b"x" * 201))
    assert not submitted.is_valid()
    assert submitted.errors["file"] == ["The file is 201\xa0bytes; this stash takes at most 200\xa0bytes in all."]


def test_a_file_that_fits_but_not_once_encoded_is_refused_with_the_reason(stash):
    submitted = form(stash, file=SimpleUploadedFile("mid.bin", b"x" * 150))
    assert not submitted.is_valid()
    assert submitted.non_field_errors() == [
        (
            "The payload is 236 bytes; this stash takes at most 200. "
            "A file counts a third more: it is stored base64-encoded."
        )
    ]
