"""Line-image datasets, normalization, deterministic batching, CER and WER.

Two dataset layouts, the ones OCR tools already use:

* a **folder** of line images, each with a sidecar transcription that shares
  its name up to the first dot: ``0001.png`` + ``0001.gt.txt`` (ocropus,
  kraken, calamari; ``0001.bin.png`` and ``0001.nrm.png`` also find
  ``0001.gt.txt``). Sub-folders are searched; files are taken in sorted order.
* a **TSV manifest**: one line per sample, ``path<TAB>text``, the path
  relative to the manifest's folder (or absolute). Empty lines are skipped.

Normalization (the trainer's convention is ink = 1, background = 0): an
image is converted to 8-bit grayscale (Pillow's ``convert("L")``), resized
to height 32 with its aspect ratio kept (Pillow's bilinear filter, width
rounded to the nearest pixel, at least 1), and pixel p becomes
``1 - p / 255`` in float32, so dark text on light paper (a scan) gives
ink = 1. ``polarity="light"`` (light text on a dark background) uses
``p / 255`` instead. Transcriptions are read as UTF-8, put in Unicode NFC
form and stripped of leading and trailing whitespace.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp", ".pgm", ".pbm", ".ppm")


class DataError(ValueError):
    """A dataset problem, with the file it is about in the message."""


@dataclass
class Line:
    """One sample: where it came from, its transcription and its image
    (``[height, width]`` float32, ink = 1)."""

    path: str
    text: str
    image: np.ndarray | None = None


# -- images ------------------------------------------------------------------


def load_image(path, height: int = 32, polarity: str = "dark") -> np.ndarray:
    """A line image as ``[height, width]`` float32 in [0, 1], ink = 1."""
    from PIL import Image, UnidentifiedImageError

    if polarity not in ("dark", "light"):
        raise ValueError(f"polarity must be 'dark' (dark text on light paper) or 'light', got {polarity!r}")
    try:
        with Image.open(path) as im:
            im.load()
            im = _to_gray(im)
    except FileNotFoundError:
        raise DataError(f"{path}: image file not found") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as e:
        raise DataError(f"{path}: cannot read the image ({e})") from None
    w, h = im.size
    if w == 0 or h == 0:
        raise DataError(f"{path}: the image is empty ({w}x{h} pixels)")
    if h != height:
        new_w = max(1, int(math.floor(w * height / h + 0.5)))
        im = im.resize((new_w, height), resample=_bilinear())
    a = np.asarray(im, dtype=np.float32) / np.float32(255.0)
    if polarity == "dark":
        a = np.float32(1.0) - a
    return np.ascontiguousarray(a, dtype=np.float32)


def _to_gray(im):
    from PIL import Image

    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        # Transparent pixels are paper: composite onto white first.
        im = im.convert("RGBA")
        bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(bg, im)
    if im.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        a = np.asarray(im, dtype=np.float64)
        lo, hi = float(a.min()), float(a.max())
        scale = 255.0 / (hi - lo) if hi > lo else 0.0
        return Image.fromarray(np.round((a - lo) * scale).astype(np.uint8), mode="L")
    return im.convert("L")


def _bilinear():
    from PIL import Image

    return getattr(Image, "Resampling", Image).BILINEAR


# -- transcriptions --------------------------------------------------------------


def normalize_text(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def _sidecar(image: Path) -> Path:
    """``dir/0001.bin.png`` → ``dir/0001.gt.txt`` (name up to the first dot)."""
    return image.with_name(image.name.split(".", 1)[0] + ".gt.txt")


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"{path}: cannot read the transcription ({e.strerror or e})") from None
    try:
        return normalize_text(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: the transcription is not UTF-8 ({e})") from None


def list_dataset(source) -> list:
    """The samples (path, text) of a folder or a TSV manifest, images not
    loaded, in a fixed order (sorted paths for a folder, file order for a
    manifest)."""
    src = Path(source)
    if not src.exists():
        raise DataError(f"{src}: no such dataset (give a folder of images with .gt.txt files or a TSV manifest)")
    if src.is_dir():
        images = sorted((p for p in src.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES),
                        key=lambda p: p.as_posix())
        if not images:
            raise DataError(f"{src}: no line images ({', '.join(IMAGE_SUFFIXES)}) in this folder")
        out = []
        for p in images:
            gt = _sidecar(p)
            if not gt.exists():
                raise DataError(f"{p}: missing transcription: expected {gt}")
            out.append(Line(str(p), _read_text(gt)))
        return out
    return _read_manifest(src)


def _read_manifest(src: Path) -> list:
    try:
        raw = src.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{src}: the manifest is not UTF-8 ({e})") from None
    except OSError as e:
        raise DataError(f"{src}: cannot read the manifest ({e.strerror or e})") from None
    out = []
    for n, row in enumerate(raw.splitlines(), 1):
        if not row.strip():
            continue
        if "\t" not in row:
            raise DataError(f"{src}:{n}: expected 'path<TAB>text', found no tab: {row[:60]!r}")
        p, text = row.split("\t", 1)
        if not p.strip():
            raise DataError(f"{src}:{n}: the image path is empty")
        path = Path(p.strip())
        if not path.is_absolute():
            path = src.parent / path
        out.append(Line(str(path), normalize_text(text)))
    if not out:
        raise DataError(f"{src}: the manifest lists no samples")
    return out


def load_dataset(source, height: int = 32, polarity: str = "dark") -> list:
    """:func:`list_dataset` with every image loaded and normalized."""
    lines = list_dataset(source)
    for ln in lines:
        ln.image = load_image(ln.path, height, polarity)
    return lines


# -- charset -------------------------------------------------------------------


def charset_of(lines: Iterable[Line]) -> list:
    """The characters used by the transcriptions, sorted by code point."""
    return sorted({c for ln in lines for c in ln.text})


def check_charset(lines: Sequence[Line], charset: Sequence[str], hint: str = "") -> None:
    """Raise :class:`DataError` naming the first files whose transcriptions
    use characters outside ``charset``."""
    known = set(charset)
    bad = []
    for ln in lines:
        unknown = sorted({c for c in ln.text if c not in known})
        if unknown:
            bad.append((ln.path, unknown))
    if bad:
        chars = sorted({c for _, u in bad for c in u})
        lines_ = [f"  {p}: {' '.join(repr(c) for c in u)}" for p, u in bad[:10]]
        more = f"\n  ... and {len(bad) - 10} more files" if len(bad) > 10 else ""
        raise DataError(f"{len(bad)} transcription(s) use characters outside the charset "
                        f"({' '.join(repr(c) for c in chars)}):\n" + "\n".join(lines_) + more
                        + (f"\n{hint}" if hint else ""))


def ctc_min_steps(labels: Sequence) -> int:
    """Time steps CTC needs for a target: its length plus one blank between
    each pair of equal neighbours."""
    return len(labels) + sum(1 for a, b in zip(labels, labels[1:]) if a == b)


# -- splitting and batching ----------------------------------------------------


def split(n: int, eval_fraction: float, seed: int, max_eval: int | None = None):
    """Deterministic (train, eval) index lists: a permutation drawn from
    ``seed``, the first ``round(n * eval_fraction)`` (at least 1 when the
    fraction is positive and n > 1, never all) are held out."""
    if not 0.0 <= eval_fraction < 1.0:
        raise ValueError(f"eval split must be in [0, 1), got {eval_fraction}")
    k = int(round(n * eval_fraction))
    if eval_fraction > 0 and n > 1:
        k = max(1, k)
    k = min(k, n - 1)
    if max_eval is not None:
        k = min(k, max_eval)
    perm = np.random.default_rng([int(seed), 0x5E11]).permutation(n)
    return sorted(perm[k:].tolist()), sorted(perm[:k].tolist())


def epoch_order(n: int, seed: int, epoch: int) -> list:
    """The order of the training lines in epoch ``epoch``: a permutation from
    numpy's PCG64 seeded with (seed, epoch), so that any step's batch is a
    function of (seed, step) alone and resuming needs no saved sampler."""
    return np.random.default_rng([int(seed), 0xB47C, int(epoch)]).permutation(n).tolist()


def batch_indices(n: int, batch_size: int, seed: int, step: int) -> list:
    """Indices (into the training lines) of the batch for 0-based ``step``:
    epochs are concatenated, a batch may straddle two epochs."""
    if n <= 0:
        raise ValueError("no training lines")
    start = step * batch_size
    out = []
    epoch, pos = divmod(start, n)
    order = epoch_order(n, seed, epoch)
    while len(out) < batch_size:
        if pos == n:
            epoch, pos = epoch + 1, 0
            order = epoch_order(n, seed, epoch)
        out.append(order[pos])
        pos += 1
    return out


# -- error rates ---------------------------------------------------------------


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Edit distance (insertions, deletions, substitutions, each cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


@dataclass
class ErrorRates:
    char_errors: int
    chars: int
    word_errors: int
    words: int
    lines: int

    @property
    def cer(self) -> float:
        return self.char_errors / self.chars if self.chars else float(self.char_errors > 0)

    @property
    def wer(self) -> float:
        return self.word_errors / self.words if self.words else float(self.word_errors > 0)


def error_rates(references: Sequence[str], hypotheses: Sequence[str]) -> ErrorRates:
    """Corpus CER and WER: total edit distance over total reference length
    (characters; words split on whitespace), as ocropus and kraken report."""
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    ce = cn = we = wn = 0
    for r, h in zip(references, hypotheses):
        ce += levenshtein(r, h)
        cn += len(r)
        rw, hw = r.split(), h.split()
        we += levenshtein(rw, hw)
        wn += len(rw)
    return ErrorRates(ce, cn, we, wn, len(references))

