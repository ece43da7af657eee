"""Synthetic text lines for ``onemodel demo``, rendered with Pillow's
built-in font.

The font is Pillow's built-in bitmap font (``ImageFont.load_default_imagefont()``,
which is what ``ImageFont.load_default()`` returns without FreeType and on
Pillow < 10.1): it ships inside Pillow, needs no font file, and is drawn by
Pillow's own integer code, so a seed gives the same pixels on every machine
(``load_default()`` with FreeType would depend on the FreeType build). Each
line: a random string from the charset, random extra spacing between
characters, a random scale and stretch (bilinear), a random position, ink and
paper level, a slight blur and uniform noise, all drawn from one numpy
``Generator`` (PCG64: the same stream everywhere). The result follows the
trainer's convention: ``[32, width]`` float32 in [0, 1], ink = 1.
"""

from __future__ import annotations

import numpy as np

DIGITS = "0123456789"


def builtin_font():
    from PIL import ImageFont

    if hasattr(ImageFont, "load_default_imagefont"):
        return ImageFont.load_default_imagefont()
    return ImageFont.load_default()


_FONT = None


def _font():
    global _FONT
    if _FONT is None:
        _FONT = builtin_font()
    return _FONT


def random_text(rng: np.random.Generator, charset: str = DIGITS, min_len: int = 3, max_len: int = 8) -> str:
    n = int(rng.integers(min_len, max_len + 1))
    idx = rng.integers(0, len(charset), size=n)
    return "".join(charset[int(i)] for i in idx)


def render_line(text: str, rng: np.random.Generator, height: int = 32) -> np.ndarray:
    """One synthetic line: ``[height, width]`` float32, ink = 1."""
    from PIL import Image, ImageDraw

    font = _font()
    spacing = [int(rng.integers(0, 3)) for _ in text]
    widths = [max(1, int(round(font.getlength(c)))) for c in text]
    canvas_w = 2 + sum(widths) + sum(spacing)
    glyph_h = 11
    im = Image.new("L", (canvas_w, glyph_h), 0)
    draw = ImageDraw.Draw(im)
    x = 1
    for c, w, s in zip(text, widths, spacing):
        draw.text((x, 0), c, font=font, fill=255)
        x += w + s
    # Scale: the digits' 7-pixel body becomes about 13 to 19 pixels tall.
    scale = 1.9 + 0.8 * float(rng.random())
    stretch = 0.9 + 0.25 * float(rng.random())
    new_h = min(height, int(round(glyph_h * scale)))
    new_w = max(1, int(round(canvas_w * scale * stretch)))
    resample = getattr(Image, "Resampling", Image).BILINEAR
    im = im.resize((new_w, new_h), resample=resample)
    body = np.asarray(im, dtype=np.float32) / np.float32(255.0)
    left, right = int(rng.integers(1, 7)), int(rng.integers(1, 7))
    top = int(rng.integers(0, height - new_h + 1))
    img = np.zeros((height, left + new_w + right), np.float32)
    img[top:top + new_h, left:left + new_w] = body
    # Slight blur: separable [b, 1 - 2b, b], b in [0, 0.2].
    b = np.float32(0.2 * float(rng.random()))
    img = _blur(img, b)
    ink = np.float32(0.75 + 0.25 * float(rng.random()))
    paper = np.float32(0.1 * float(rng.random()))
    amp = np.float32(0.04 + 0.08 * float(rng.random()))
    noise = (rng.random(img.shape).astype(np.float32) - np.float32(0.5)) * (np.float32(2.0) * amp)
    img = paper + (ink - paper) * img + noise
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def _blur(img: np.ndarray, b: np.float32) -> np.ndarray:
    c = np.float32(1.0) - np.float32(2.0) * b
    p = np.pad(img, 1, mode="edge")
    h = b * p[:, :-2] + c * p[:, 1:-1] + b * p[:, 2:]
    return (b * h[:-2, :] + c * h[1:-1, :] + b * h[2:, :]).astype(np.float32)


def make_lines(n: int, seed: int, stream: int, charset: str = DIGITS, min_len: int = 3, max_len: int = 8,
               height: int = 32):
    """``n`` (image, text) pairs from the stream (seed, stream): the training
    and held-out sets use different streams so they never share a line by
    construction of the generator."""
    rng = np.random.default_rng([int(seed), 0xDE70, int(stream)])
    out = []
    for _ in range(n):
        t = random_text(rng, charset, min_len, max_len)
        out.append((render_line(t, rng, height), t))
    return out
