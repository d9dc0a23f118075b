"""The file_type filter: base64 decoded, sized, and typed by magic bytes, never by name. No database."""

import base64
import gzip
import io
import zipfile

import pytest

from stash.core.testing import run_hook
from stash.hooks.filetypes import detect

from ..support.hook_support import assert_refused

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 20
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def zipped() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("a.txt", date_time=(2020, 1, 1, 0, 0, 0)), "hello")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (PNG, "png"),
        (JPEG, "jpeg"),
        (b"GIF89a\x01\x00", "gif"),
        (b"GIF87a", "gif"),
        (PDF, "pdf"),
        (zipped(), "zip"),
        (gzip.compress(b"x", mtime=0), "gzip"),
        (b"II*\x00\x08\x00", "tiff"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "webp"),
        (b"RIFF\x24\x00\x00\x00WAVEfmt ", "wav"),
        (b"\x00\x00\x00\x18ftypisom\x00\x00", "mp4"),
        (b"\x00\x00\x00\x18ftypheic\x00\x00", "heic"),
        (b"\x00\x00\x00\x14ftypqt  \x00\x00", "mov"),
        (b"ID3\x04\x00", "mp3"),
        (b"OggS\x00\x02", "ogg"),
        (b"\x1a\x45\xdf\xa3\x9f", "webm"),
        ("plain text, é and 😀\n".encode(), "text"),
        (b'{"a": 1}', "text"),
        (EXE, "unknown"),
        (b"\xff\xfe\xfd", "unknown"),
        (b"text\x00with nul", "unknown"),
    ],
)
def test_detect_names_types_by_their_first_bytes(data, kind):
    assert detect(data) == kind


def test_keeps_an_allowed_type():
    result = run_hook("file_type", {"allowed": ["png", "jpeg"]}, {"filename": "cat.png", "b64_file": b64(PNG)})

    assert result.verdict == "accepted"
    assert result.trail[0].outcome == "kept"


def test_the_real_type_counts_not_the_name():
    result = run_hook("file_type", {"allowed": ["png", "jpeg"]}, {"filename": "cat.png", "b64_file": b64(EXE)})

    assert (result.verdict, result.code, result.reason) == (
        "rejected",
        "file_type",
        "file is unknown, not one of png, jpeg",
    )


def test_a_data_url_type_is_not_trusted_either():
    payload = {"b64_file": "data:image/png;base64," + b64(PDF)}

    assert run_hook("file_type", {"allowed": ["png"]}, payload).reason == "file is pdf, not one of png"
    assert run_hook("file_type", {"allowed": ["pdf"]}, payload).verdict == "accepted"


def test_line_breaks_and_the_url_safe_alphabet_are_accepted():
    data = bytes(range(256)) * 4  # makes + and / in standard base64
    wrapped = "\n".join(b64(PDF + data)[i : i + 76] for i in range(0, len(b64(PDF + data)), 76))
    urlsafe = base64.urlsafe_b64encode(PDF + data).decode()

    assert "-" in urlsafe or "_" in urlsafe
    assert run_hook("file_type", {"allowed": ["pdf"]}, {"b64_file": wrapped}).verdict == "accepted"
    assert run_hook("file_type", {"allowed": ["pdf"]}, {"b64_file": urlsafe}).verdict == "accepted"


@pytest.mark.parametrize("value", ["not base64!", "QUJDRA", "QUJ", "QU JD\x00", "🙂🙂🙂🙂"])
def test_bad_base64_is_dropped_with_a_reason(value):
    result = run_hook("file_type", {"allowed": ["text"]}, {"b64_file": value})

    assert (result.verdict, result.code) == ("rejected", "bad_base64")
    assert result.reason.startswith("b64_file is not valid base64 (")


@pytest.mark.parametrize("value", [12, True, ["QUJD"], {"data": "QUJD"}])
def test_a_file_that_is_not_a_string_is_bad_base64(value):
    result = run_hook("file_type", {"allowed": ["text"]}, {"b64_file": value})

    assert (result.code, result.reason) == ("bad_base64", "b64_file is not base64 text")


def test_base64_of_nothing_is_an_empty_file():
    result = run_hook("file_type", {"allowed": ["text"]}, {"b64_file": "\n"})

    assert (result.code, result.reason) == ("empty_file", "b64_file is an empty file")


@pytest.mark.parametrize("payload", [{}, {"b64_file": None}, {"b64_file": ""}, {"text": "no file"}])
def test_no_file_is_kept_unless_required(payload):
    assert run_hook("file_type", {"allowed": ["png"]}, payload).verdict == "accepted"

    result = run_hook("file_type", {"allowed": ["png"], "required": True}, payload)
    assert (result.verdict, result.code, result.reason) == ("rejected", "missing_file", "missing b64_file")


def test_decoded_size_is_capped_exactly():
    exactly = PDF + b"x" * (100 - len(PDF))
    params = {"allowed": ["pdf"], "max_bytes": 100}

    assert run_hook("file_type", params, {"b64_file": b64(exactly)}).verdict == "accepted"
    result = run_hook("file_type", params, {"b64_file": b64(exactly + b"x")})
    assert (result.code, result.reason) == ("file_too_large", "file is 101 bytes, over the limit of 100")


def test_a_huge_string_is_refused_before_it_is_decoded():
    result = run_hook("file_type", {"allowed": ["pdf"], "max_bytes": 1000}, {"b64_file": "A" * 20_000_000})

    assert (result.code, result.reason) == ("file_too_large", "file is about 15000000 bytes, over the limit of 1000")


def test_field_is_a_dotted_path():
    payload = {"attachment": {"b64_file": b64(JPEG)}}

    assert run_hook("file_type", {"allowed": ["jpeg"], "field": "attachment.b64_file"}, payload).verdict == "accepted"
    assert run_hook("file_type", {"allowed": ["png"], "field": "attachment.b64_file"}, payload).reason == (
        "file is jpeg, not one of png"
    )


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"allowed": "This field is required."}),
        ({"allowed": []}, {"allowed": "Must not be empty."}),
        (
            {"allowed": ["exe"]},
            {
                "allowed.0": "Must be one of: avi, gif, gzip, heic, jpeg, mov, mp3, "
                "mp4, ogg, pdf, png, text, tiff, wav, webm, webp, zip, "
                "unknown."
            },
        ),
        ({"allowed": ["png"], "max_bytes": 0}, {"max_bytes": "Must be at least 1."}),
        ({"allowed": ["png"], "field": ""}, {"field": "This field may not be blank."}),
        ({"allowed": ["png", "png"]}, {"allowed": "Must not list the same item twice."}),
    ],
)
def test_refuses_bad_params(params, errors):
    assert_refused("file_type", params, errors)
