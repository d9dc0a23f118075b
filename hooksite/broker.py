"""The embedded default's Celery broker: kombu's filesystem transport, each message written atomically.

kombu's filesystem transport writes a message file straight into the queue folder, and a worker
polling that folder can take the file while it is still empty: the worker then stops with a JSON
decode error (celery/kombu#1551). Here a message is written under a name that consumers skip and
renamed into place when complete; a rename within one folder is atomic on POSIX. The file name
is the one kombu would have used, so the worker's reads (oldest first) are kombu's own.

Importing this module (``hooksite.celery`` does) makes ``filesystem://`` URLs use it.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    """Writes a message to a hidden file, then renames it to ``<ms>_<uuid>.<queue>.msg``."""

    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        # A leading dot: kombu's reader takes only files named "<anything>.<queue>.msg".
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.rename(partial, os.path.join(self.data_folder_out, name))
        except OSError as exc:
            raise ChannelError(f"Cannot add file {name!r} to directory") from exc


class Transport(filesystem.Transport):
    """kombu's filesystem transport with atomic writes."""

    Channel = Channel


TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
