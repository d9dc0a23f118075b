"""Pins of code that reaches into another library past its documented API: each such place names
the versions it was read against, and a test fails once requirements.txt or the environment moves on."""

import re
from importlib import metadata
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def pins(requirements=REQUIREMENTS):
    """``{package: version}`` of the ``name==version`` lines of a requirements file."""
    found = re.findall(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)", requirements.read_text(), re.MULTILINE)
    return dict(found)


def assert_checked_against(checked, where):
    """Fail, saying what to re-check, unless each ``{package: version}`` of ``checked`` is the version
    requirements.txt pins and the one installed."""
    pinned = pins()
    for package, version in checked.items():
        assert pinned.get(package) == version == metadata.version(package), (
            f"{where} reaches into {package} as {package} {version} has it; requirements.txt pins "
            f"{pinned.get(package)} and {metadata.version(package)} is installed. Re-check {where} against "
            "the new version, then update the versions it was checked against."
        )
