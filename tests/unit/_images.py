"""Real images made with Pillow, in memory, for the unit tests."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

FORMATS = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WEBP",
}


def image_bytes(width: int, height: int, media_type: str = "image/png") -> bytes:
    """Encode a real ``width`` x ``height`` image in the format of ``media_type``."""
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 90)).save(buf, format=FORMATS[media_type])
    return buf.getvalue()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose IHDR claims ``width`` x ``height`` but that carries no pixel data.

    The IEND chunk makes the file well-formed enough for a header reader; there is no
    IDAT, so nothing can be decoded.
    """
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IEND", b"")
