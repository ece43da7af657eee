"""Synthetic text lines without any font file: a built-in 5×7 bitmap font
for digits and a few letters, scaled, spaced and noised at random. Used by
the parity fixtures and the benchmark (the CLI's demo renders real fonts)."""

from __future__ import annotations

import numpy as np

_GLYPHS = {
    "0": ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
    "1": ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    "3": ["11110", "00001", "00001", "01110", "00001", "00001", "11110"],
    "4": ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    "5": ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    "6": ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    "8": ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    "9": ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
    " ": ["00000"] * 7,
}

CHARSET = tuple("0123456789 ")


def render(text: str, rng: np.random.Generator, height: int = 32, scale: int = 3) -> np.ndarray:
    """A [height, width] float32 line in [0, 1] (ink = 1)."""
    cols = [np.zeros((7 * scale, int(rng.integers(2, 8))), np.float32)]
    for ch in text:
        g = np.array([[float(b) for b in row] for row in _GLYPHS[ch]], np.float32)
        g = np.kron(g, np.ones((scale, scale), np.float32))
        cols.append(g)
        cols.append(np.zeros((7 * scale, int(rng.integers(1, 6))), np.float32))
    body = np.concatenate(cols, axis=1)
    img = np.zeros((height, body.shape[1] + int(rng.integers(2, 8))), np.float32)
    top = int(rng.integers(0, height - 7 * scale + 1))
    img[top:top + 7 * scale, : body.shape[1]] = body
    img = img + rng.normal(0.0, 0.08, img.shape).astype(np.float32)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def random_text(rng: np.random.Generator, lo: int = 3, hi: int = 8, charset=CHARSET[:-1]) -> str:
    return "".join(rng.choice(list(charset), size=int(rng.integers(lo, hi + 1))))
