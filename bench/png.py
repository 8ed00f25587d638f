"""A minimal PNG encoder, so screenshots in the workload are real, decodable images.

Why not Pillow: the bench must run in the project's own venv without extra packages, and the
workload only needs deterministic RGB pixels with a realistic (poorly compressible) size.
"""

from __future__ import annotations

import base64
import random
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_rgb(width: int, height: int, pixels: bytes) -> bytes:
    """PNG bytes of an 8-bit RGB image; `pixels` is row-major, 3 bytes per pixel."""
    if len(pixels) != width * height * 3:
        raise ValueError(f"expected {width * height * 3} pixel bytes, got {len(pixels)}")
    stride = width * 3
    # Filter type 0 (None) on every row: simplest valid encoding.
    raw = b"".join(b"\x00" + pixels[y * stride : (y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b"")


def screenshot_png(rng: random.Random) -> bytes:
    """A "screenshot": flat UI bands (compressible) over noisy content areas, 20-100 KB."""
    width = rng.randrange(140, 200)
    height = rng.randrange(110, 170)
    rows: list[bytes] = []
    band = bytes((rng.randrange(200, 256), rng.randrange(200, 256), rng.randrange(200, 256)))
    for y in range(height):
        if y < 12 or rng.random() < 0.12:  # title bar and blank lines between "widgets"
            rows.append(band * width)
        else:
            rows.append(rng.randbytes(width * 3))
    return encode_rgb(width, height, b"".join(rows))


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
