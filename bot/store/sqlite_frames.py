"""The frames between the bot and its SQLite writer process: a 4-byte big-endian length, then a
pickle. Standard library only: the writer process (``sqlite_child``) imports it too.

Only plain values cross: what JSON would see of an event (a ``StrEnum`` member is its string, a
``dict`` subclass a ``dict``), so the writer process never needs the bot's own classes.
"""

from __future__ import annotations

import io
import pickle
import struct
from typing import IO, Any

HEADER = struct.Struct(">I")
"""A frame's length, before its pickle."""

_PLAIN: tuple[tuple[type, Any], ...] = (
    (str, str.__str__),
    (int, int.__int__),
    (float, float.__float__),
    (dict, dict.copy),
    (list, list.copy),
    (tuple, tuple),
)
"""The JSON types, and how a subclass's instance becomes one (as the JSON encoder reads it)."""
_JSON_TYPES = tuple(kind for kind, _ in _PLAIN)


class _PlainPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # Called only for objects that are not exactly a pickle's fast types (str, int, dict…).
        if obj is True or obj is False or not isinstance(obj, _JSON_TYPES):
            return NotImplemented  # a bool, or no JSON type's (a datetime, a class): as it is
        for kind, plain in _PLAIN:
            if isinstance(obj, kind):
                return kind, (plain(obj),)
        return NotImplemented


def frame(value: Any) -> bytes:
    """``value`` as a frame (subclasses of the JSON types as their plain type)."""
    buffer = io.BytesIO()
    buffer.write(b"\0" * HEADER.size)
    _PlainPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(value)
    with buffer.getbuffer() as data:
        HEADER.pack_into(data, 0, len(data) - HEADER.size)
    return buffer.getvalue()


class FrameReader:
    """Frames from a stream that arrives in pieces (a pipe read by the event loop)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """The values of the frames ``data`` completes, in order; a partial one waits."""
        self._buffer += data
        values, start, end = [], 0, len(self._buffer)
        with memoryview(self._buffer) as view:
            while end - start >= HEADER.size:
                size = HEADER.unpack_from(view, start)[0]
                body = start + HEADER.size
                if end - body < size:
                    break
                values.append(pickle.loads(view[body : body + size]))
                start = body + size
        del self._buffer[:start]
        return values


def read_frame(stream: IO[bytes]) -> Any:
    """The next frame's value; EOFError at the end of ``stream`` (or of a frame cut short)."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        raise EOFError
    size = HEADER.unpack(head)[0]
    body = stream.read(size)
    if len(body) < size:
        raise EOFError
    return pickle.loads(body)
