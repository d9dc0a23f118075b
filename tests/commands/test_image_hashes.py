"""manage.py stash_image_hashes: the hashes of image files, the same ones the image_hash hook compares."""

import base64
import io
import json

import pytest
from django.core.management import CommandError, call_command
from PIL import Image, ImageDraw

from stash.core.testing import run_hook


def run(*args):
    out = io.StringIO()
    call_command("stash_image_hashes", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def files(tmp_path):
    """A picture as PNG, a smaller JPEG copy of it, and an unrelated picture."""
    picture = Image.new("RGB", (200, 150), (230, 230, 210))
    draw = ImageDraw.Draw(picture)
    draw.ellipse((20, 20, 120, 110), fill=(200, 30, 30))
    draw.rectangle((110, 60, 190, 140), fill=(30, 60, 200))
    other = Image.new("RGB", (200, 150), (20, 20, 20))
    ImageDraw.Draw(other).polygon([(0, 150), (100, 0), (200, 150)], fill=(240, 200, 0))
    paths = {"picture": tmp_path / "picture.png", "copy": tmp_path / "copy.jpg", "other": tmp_path / "other.png"}
    picture.save(paths["picture"])
    picture.resize((100, 75)).save(paths["copy"], quality=60)
    other.save(paths["other"])
    return paths


def test_prints_each_files_hash_that_the_hook_then_blocks(files):
    out = run(str(files["picture"]), str(files["other"]))

    lines = out.splitlines()
    assert [line.split("  ")[1] for line in lines] == [str(files["picture"]), str(files["other"])]
    picture_hash = lines[0].split("  ")[0]
    assert len(picture_hash) == 16 and int(picture_hash, 16) >= 0
    copy = base64.b64encode(files["copy"].read_bytes()).decode()
    result = run_hook("image_hash", {"blocklist": [picture_hash]}, {"b64_file": copy})
    assert (result.verdict, result.code) == ("rejected", "image_match")


def test_json_prints_a_blocklist_to_paste(files):
    hashes = json.loads(run("--json", str(files["picture"]), str(files["copy"])))

    assert len(hashes) == 2
    assert run_hook("image_hash", {"blocklist": hashes}, {}).verdict == "accepted"


def test_a_missing_or_unreadable_file_is_a_command_error(files, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a picture")

    with pytest.raises(
        CommandError, match=r"Cannot hash .*notes\.txt: not an image that can be read.*nope\.png: No such file"
    ):
        run(str(files["picture"]), str(text), str(tmp_path / "nope.png"))
