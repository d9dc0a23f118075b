"""The embedded default's broker: a consumer polling the queue folder never reads half a message."""

import os

import pytest
from kombu import Connection

from hooksite import broker

from ..support.pins import assert_checked_against

#: What ``broker.Channel`` was written against: kombu's virtual ``Channel._put(queue, payload)``, the
#: method each virtual transport implements, and the filesystem transport's file names and folders.
CHECKED_WITH = {"kombu": "5.7.0"}


@pytest.fixture
def channel(tmp_path):
    folders = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path), "control_folder": str(tmp_path)}
    with Connection("filesystem://", transport_options=folders) as connection:
        yield connection.default_channel


def test_filesystem_urls_use_the_atomic_transport(channel):
    assert isinstance(channel, broker.Channel)


def test_a_message_appears_in_the_queue_folder_only_when_complete(channel, tmp_path, monkeypatch):
    seen_while_writing = []
    rename = os.rename

    def watching_rename(src, dst):
        # The moment before the message is put in place: what would a polling consumer find?
        seen_while_writing.append(sorted(name for name in os.listdir(tmp_path) if name.endswith(".work.msg")))
        return rename(src, dst)

    monkeypatch.setattr(broker.os, "rename", watching_rename)
    channel._put("work", {"body": "first"})
    channel._put("work", {"body": "second"})

    # Before each rename, a consumer finds only the messages written before it.
    assert [len(names) for names in seen_while_writing] == [0, 1]
    # Both are read back whole (names order by millisecond, so two in one are in either order).
    assert sorted([channel._get("work")["body"], channel._get("work")["body"]]) == ["first", "second"]
    assert not [name for name in os.listdir(tmp_path) if not name.endswith(".exchange")]


def test_the_transport_was_checked_against_the_pinned_kombu():
    assert_checked_against(CHECKED_WITH, "hooksite.broker.Channel")
