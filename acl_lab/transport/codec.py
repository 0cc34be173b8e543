"""The wire format of the pipe transport: length-prefixed frames of a restricted value codec.

A frame is a 4-byte big-endian length followed by that many bytes of one encoded value. The
codec carries only plain data, so decoding a frame never runs code of the sender (the server
must not trust the learner's process: ``pickle`` would let it run anything in the emulator).

Values, each one tag byte then its body:

====  ==========================================================================
tag   value
====  ==========================================================================
N     None
T F   True, False
i     int in the signed 64-bit range: 8 bytes big-endian two's complement
I     any other int: 4-byte length, then big-endian two's complement bytes
f     float: 8 bytes IEEE 754 big-endian
s     str: 4-byte length, then UTF-8
b     bytes (bytearray and memoryview encode as bytes): 4-byte length, raw bytes
l t   list, tuple: 4-byte count, then the items
d     dict with str or int keys: 4-byte count, then key, value pairs
R     a reference to an object that stays in the client (``Ref``): 8-byte id
====  ==========================================================================

Decoding is strict: a truncated body, trailing bytes, an unknown tag, a bad UTF-8 string, a
dict key of another type, nesting deeper than ``MAX_DEPTH`` or more than ``MAX_NODES``
values raise ``CodecError`` (a ``ValueError``). Encoding accepts exact types only (and numpy
scalars of numpy's own integer, floating and bool types, as plain values), so no method a
learner defined runs while encoding; anything else goes to the ``other`` function the
caller passes (the client turns it into a ``Ref``) or raises ``CodecError``.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

#: Largest frame either side accepts (bytes after the length prefix).
MAX_FRAME = 256 << 20
#: Deepest nesting of lists, tuples and dicts.
MAX_DEPTH = 64
#: Most values in one frame.
MAX_NODES = 1_000_000

_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
_F64 = struct.Struct(">d")
_LO, _HI = -(1 << 63), (1 << 63) - 1


class CodecError(ValueError):
    """A value cannot be encoded, or bytes are not a well-formed frame."""


class Ref:
    """An object that stays in the client's process, named by the id the client gave it."""

    __slots__ = ("id",)

    def __init__(self, ref_id: int) -> None:
        self.id = ref_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ref) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("Ref", self.id))

    def __repr__(self) -> str:
        return f"Ref({self.id})"


def encode(value: Any, other: Callable[[Any], Any] | None = None) -> bytes:
    """The bytes of ``value`` (see the module docstring).

    Args:
        value: what to encode.
        other: called with a value of any other type; returns its replacement (usually a
            ``Ref``), which is encoded instead. Without it such a value raises.

    Raises:
        CodecError: a value of another type (and no ``other``), or nesting too deep.
    """
    out = bytearray()
    _enc(value, out, other, 0)
    return bytes(out)


def _enc(v: Any, out: bytearray, other: Callable[[Any], Any] | None, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply to encode")
    t = type(v)
    if v is None:
        out += b"N"
    elif t is bool:
        out += b"T" if v else b"F"
    elif t is int:
        if _LO <= v <= _HI:
            out += b"i"
            out += _I64.pack(v)
        else:
            raw = v.to_bytes((v.bit_length() + 8) // 8, "big", signed=True)
            out += b"I"
            out += _U32.pack(len(raw))
            out += raw
    elif t is float:
        out += b"f"
        out += _F64.pack(v)
    elif t is str:
        raw = v.encode("utf-8", "surrogatepass")
        out += b"s"
        out += _U32.pack(len(raw))
        out += raw
    elif t is bytes or t is bytearray or t is memoryview:
        raw = bytes(v)
        out += b"b"
        out += _U32.pack(len(raw))
        out += raw
    elif t is list or t is tuple:
        out += b"l" if t is list else b"t"
        out += _U32.pack(len(v))
        for x in v:
            _enc(x, out, other, depth + 1)
    elif t is dict:
        out += b"d"
        out += _U32.pack(len(v))
        for k, x in v.items():
            if type(k) not in (str, int):
                raise CodecError(f"dict key of type {type(k).__name__} cannot be encoded")
            _enc(k, out, other, depth + 1)
            _enc(x, out, other, depth + 1)
    elif t is Ref:
        out += b"R"
        out += _I64.pack(v.id)
    elif isinstance(v, (np.integer, np.floating, np.bool_)) and t.__module__ == "numpy":
        _enc(v.item(), out, other, depth + 1)
    elif other is not None:
        _enc(other(v), out, None, depth + 1)
    else:
        raise CodecError(f"a value of type {t.__name__} cannot be encoded")


def decode(data: bytes | memoryview) -> Any:
    """The value encoded in ``data`` (all of it).

    Raises:
        CodecError: ``data`` is not exactly one well-formed value.
    """
    mv = memoryview(data).cast("B")
    state = [0]  # values decoded so far
    try:
        value, pos = _dec(mv, 0, 0, state)
    except (struct.error, IndexError):
        raise CodecError("truncated frame") from None
    if pos != len(mv):
        raise CodecError(f"{len(mv) - pos} bytes after the value")
    return value


def _need(mv: memoryview, pos: int, n: int) -> None:
    if pos + n > len(mv):
        raise CodecError("truncated frame")


def _dec(mv: memoryview, pos: int, depth: int, state: list[int]) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise CodecError("value nested too deeply")
    state[0] += 1
    if state[0] > MAX_NODES:
        raise CodecError("too many values in one frame")
    _need(mv, pos, 1)
    tag = mv[pos]
    pos += 1
    if tag == 0x4E:  # N
        return None, pos
    if tag == 0x54:  # T
        return True, pos
    if tag == 0x46:  # F
        return False, pos
    if tag == 0x69:  # i
        _need(mv, pos, 8)
        return _I64.unpack_from(mv, pos)[0], pos + 8
    if tag == 0x66:  # f
        _need(mv, pos, 8)
        return _F64.unpack_from(mv, pos)[0], pos + 8
    if tag == 0x52:  # R
        _need(mv, pos, 8)
        return Ref(_I64.unpack_from(mv, pos)[0]), pos + 8
    if tag in (0x49, 0x73, 0x62):  # I s b
        _need(mv, pos, 4)
        n = _U32.unpack_from(mv, pos)[0]
        pos += 4
        _need(mv, pos, n)
        raw = bytes(mv[pos:pos + n])
        pos += n
        if tag == 0x62:
            return raw, pos
        if tag == 0x49:
            if n == 0:
                raise CodecError("empty big integer")
            return int.from_bytes(raw, "big", signed=True), pos
        try:
            return raw.decode("utf-8", "surrogatepass"), pos
        except UnicodeDecodeError:
            raise CodecError("string is not UTF-8") from None
    if tag in (0x6C, 0x74, 0x64):  # l t d
        _need(mv, pos, 4)
        n = _U32.unpack_from(mv, pos)[0]
        pos += 4
        if n > len(mv) - pos:  # every value takes at least one byte
            raise CodecError("count larger than the frame")
        if tag == 0x64:
            d: dict[Any, Any] = {}
            for _ in range(n):
                k, pos = _dec(mv, pos, depth + 1, state)
                if type(k) not in (str, int):
                    raise CodecError(f"dict key of type {type(k).__name__}")
                d[k], pos = _dec(mv, pos, depth + 1, state)
            return d, pos
        items = []
        for _ in range(n):
            x, pos = _dec(mv, pos, depth + 1, state)
            items.append(x)
        return (items if tag == 0x6C else tuple(items)), pos
    raise CodecError(f"unknown tag byte {tag:#04x}")


def frame(value: Any, other: Callable[[Any], Any] | None = None) -> bytes:
    """``value`` encoded and length-prefixed, ready to write.

    Raises:
        CodecError: as ``encode``, or the encoding is larger than ``MAX_FRAME``.
    """
    body = encode(value, other)
    if len(body) > MAX_FRAME:
        raise CodecError(f"frame of {len(body)} bytes is larger than {MAX_FRAME}")
    return _U32.pack(len(body)) + body


class FrameReader:
    """Reads whole frames from a file descriptor (blocking)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def _exactly(self, n: int) -> bytes | None:
        parts: list[bytes] = []
        got = 0
        while got < n:
            chunk = os.read(self.fd, min(n - got, 1 << 20))
            if not chunk:
                return None
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def read(self) -> bytes | None:
        """The body of the next frame, or None at end of stream.

        Raises:
            CodecError: the length prefix is larger than ``MAX_FRAME``, or the stream ends
                inside a frame (the stream cannot be resynchronised after either).
        """
        head = self._exactly(4)
        if head is None:
            return None
        n = _U32.unpack(head)[0]
        if n > MAX_FRAME:
            raise CodecError(f"frame length {n} is larger than {MAX_FRAME}")
        body = self._exactly(n)
        if body is None:
            raise CodecError("the stream ended inside a frame")
        return body
