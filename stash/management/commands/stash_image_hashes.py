"""Print the perceptual hash of image files, to paste into an ``image_hash`` hook's blocklist."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from stash.hooks.classifiers import ImageError, image_hash


class Command(BaseCommand):
    help = (
        "Print each image file's perceptual hash (the one the image_hash hook compares), "
        "one line per file: the hash, two spaces, the file."
    )

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE", help="Image files (PNG, JPEG, GIF, WebP, BMP, TIFF).")
        parser.add_argument(
            "--json", action="store_true", help="Print the hashes as a JSON list, ready to paste as the blocklist."
        )

    def handle(self, *args, **options):
        hashes, problems = [], []
        for name in options["files"]:
            try:
                hashes.append((image_hash(Path(name).read_bytes()), name))
            except (OSError, ImageError) as exc:
                problems.append(f"{name}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}")
        if problems:
            raise CommandError("Cannot hash " + "; ".join(problems))
        if options["json"]:
            self.stdout.write(json.dumps([digest for digest, _ in hashes]))
            return
        for digest, name in hashes:
            self.stdout.write(f"{digest}  {name}")
