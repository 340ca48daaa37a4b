"""Image checks that read the header alone: the format's magic bytes and the pixel size."""

from __future__ import annotations

import io
from typing import Any

__all__ = ["image_magic_matches", "image_size"]


def image_magic_matches(data: bytes, media_type: str) -> bool:
    if media_type == "image/jpeg":
        return data.startswith(b"\xff\xd8\xff")
    if media_type == "image/png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if media_type == "image/gif":
        return data.startswith((b"GIF87a", b"GIF89a"))
    return data[:4] == b"RIFF" and data[8:12] == b"WEBP"


def image_size(data: bytes, media_type: str) -> tuple[int, int] | None:
    """Width and height read from an image's header, or ``None`` when it cannot be read.

    The format's Pillow plugin is instantiated directly rather than through
    ``Image.open``: that parses the header only (no pixel is decoded), and skips the
    decompression-bomb check, which would refuse a header that merely *claims* a huge
    size although nothing here ever allocates those pixels.
    """
    from PIL import GifImagePlugin, JpegImagePlugin, PngImagePlugin, WebPImagePlugin

    plugins: dict[str, Any] = {
        "image/jpeg": JpegImagePlugin.JpegImageFile,
        "image/png": PngImagePlugin.PngImageFile,
        "image/gif": GifImagePlugin.GifImageFile,
        "image/webp": WebPImagePlugin.WebPImageFile,
    }
    plugin = plugins.get(media_type)
    if plugin is None:
        return None
    try:
        with plugin(io.BytesIO(data)) as image:
            width, height = image.size
    except Exception:  # any unreadable header means "size unknown"
        return None
    if width <= 0 or height <= 0:
        return None
    return int(width), int(height)
