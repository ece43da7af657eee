"""The recognizer's command line end to end on tiny data written here: train,
resume bit-identically, Ctrl-C, recognize, eval, fine-tune, bad data, the
demo's quick mode and its bits at 1 and 2 threads."""

import hashlib
import json
import signal
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import onemodel as om
from onemodel.cli import main
from onemodel.commands.plot import write_plot
from onemodel.recognizer import CrnnV0, Trainer
from onemodel.recognizer import data as rdata
from onemodel.recognizer.demo import make_lines, render_line


def sha(path):
    """Digest of a checkpoint's content: metadata (keys sorted), then every
    tensor (name, dtype, shape, bytes) by name. Not the file's bytes: the
    safetensors package writes the metadata entries in a random (hash map)
    order, so two identical checkpoints can differ in their header bytes;
    see the report on _container.save."""
    from safetensors import safe_open

    h = hashlib.sha256()
    with safe_open(str(path), framework="numpy") as f:
        h.update(json.dumps(f.metadata(), sort_keys=True).encode())
        for k in sorted(f.keys()):
            a = f.get_tensor(k)
            h.update(f"{k}:{a.dtype.str}:{a.shape}".encode())
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def write_lines(folder, n, seed=0, manifest=False):
    """n synthetic digit lines as dark-on-light PNGs with .gt.txt sidecars (or a TSV)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (img, text) in enumerate(make_lines(n, seed, 7, min_len=2, max_len=4)):
        p = folder / f"{i:04d}.png"
        Image.fromarray(np.round(255 * (1 - img)).astype(np.uint8), mode="L").save(p)
        if manifest:
            rows.append(f"{p.name}\t{text}\n")
        else:
            (folder / f"{i:04d}.gt.txt").write_text(text + "\n")
    if manifest:
        (folder / "lines.tsv").write_text("".join(rows))
        return folder / "lines.tsv"
    return folder


TRAIN = ["--arch", "small", "--batch-size", "4", "--charset", "0123456789", "--eval-every", "0",
         "--checkpoint-every", "0", "--no-progress"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return write_lines(tmp_path_factory.mktemp("lines") / "data", 24)


def test_help_for_every_subcommand(capsys):
    for cmd in ("demo", "train", "finetune", "recognize", "eval", "info"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "usage: onemodel " + cmd in capsys.readouterr().out


def test_train_resume_recognize_eval(dataset, tmp_path, capsys):
    straight, split_ = tmp_path / "straight", tmp_path / "split"
    assert main(["train", str(dataset), "--steps", "6", "--output", str(straight)] + TRAIN) == 0
    assert main(["train", str(dataset), "--steps", "3", "--output", str(split_)] + TRAIN) == 0
    assert main(["train", str(dataset), "--steps", "6", "--output", str(split_),
                 "--resume", str(split_ / "checkpoint.safetensors")] + TRAIN) == 0
    a, b = straight / "checkpoint.safetensors", split_ / "checkpoint.safetensors"
    assert sha(a) == sha(b)
    assert Trainer.load_checkpoint(b).step_count == 6
    for f in ("model.safetensors", "plot.png", "metrics.jsonl", "run.json"):
        assert (straight / f).exists()
    capsys.readouterr()

    imgs = sorted(dataset.glob("*.png"))[:3]
    assert main(["recognize", "--model", str(straight / "model.safetensors")] + [str(p) for p in imgs]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [o.split("\t")[0] for o in out] == [str(p) for p in imgs]
    model = CrnnV0.load(straight / "model.safetensors")
    assert out[0].split("\t")[1] == model.recognize(rdata.load_image(imgs[0]))

    assert main(["eval", "--model", str(straight / "model.safetensors"), str(dataset), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["lines"] == 24 and 0.0 <= res["cer"] and 0.0 <= res["wer"]
    assert main(["eval", "--model", str(straight / "checkpoint.safetensors"), str(dataset)]) == 0
    out = capsys.readouterr().out
    assert "CER" in out and "WER" in out


def test_resume_refuses_a_different_order(dataset, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["train", str(dataset), "--steps", "1", "--output", str(out)] + TRAIN) == 0
    assert main(["train", str(dataset), "--steps", "2", "--output", str(out), "--seed", "5",
                 "--resume", str(out / "checkpoint.safetensors")] + TRAIN) == 2
    assert "--seed 5 differs" in capsys.readouterr().err


def test_resume_below_the_checkpoints_step_is_one_message(dataset, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["train", str(dataset), "--steps", "2", "--output", str(out)] + TRAIN) == 0
    assert main(["train", str(dataset), "--steps", "1", "--output", str(out),
                 "--resume", str(out / "checkpoint.safetensors")] + TRAIN) == 2
    assert "--steps 1: the checkpoint is already at step 2" in capsys.readouterr().err


def test_ctrl_c_saves_and_says_how_to_resume(dataset, tmp_path, capsys, monkeypatch):
    real_step = Trainer.step
    calls = []

    def step(self, images, targets):
        r = real_step(self, images, targets)
        calls.append(1)
        if len(calls) == 2:
            signal.raise_signal(signal.SIGINT)   # the real handler runs: it only sets a flag
        return r

    monkeypatch.setattr(Trainer, "step", step)
    before = signal.getsignal(signal.SIGINT)   # SIG_IGN when run in the background, default_int_handler otherwise
    out = tmp_path / "int"
    assert main(["train", str(dataset), "--steps", "5", "--output", str(out)] + TRAIN) == 130
    err = capsys.readouterr().out
    assert "Stopped at step 2/5" in err and "--resume" in err
    assert Trainer.load_checkpoint(out / "checkpoint.safetensors").step_count == 2
    assert signal.getsignal(signal.SIGINT) is before
    monkeypatch.setattr(Trainer, "step", real_step)
    # Resuming from the interrupted run gives the straight run's bits.
    assert main(["train", str(dataset), "--steps", "5", "--output", str(out),
                 "--resume", str(out / "checkpoint.safetensors")] + TRAIN) == 0
    assert main(["train", str(dataset), "--steps", "5", "--output", str(tmp_path / "s")] + TRAIN) == 0
    assert sha(out / "checkpoint.safetensors") == sha(tmp_path / "s" / "checkpoint.safetensors")


def test_non_finite_loss_stops_naming_step_and_lines(dataset, tmp_path, capsys):
    out = tmp_path / "nan"
    assert main(["train", str(dataset), "--steps", "3", "--output", str(out), "--lr", "1e30", "--clip", "0"]
                + TRAIN) == 2
    err = capsys.readouterr().err
    assert "non-finite" in err and "step 2:" in err and ".png" in err and "not saved" in err
    assert not (out / "model.safetensors").exists()


def test_manifest_finetune_and_extend_charset(tmp_path, capsys):
    tsv = write_lines(tmp_path / "m", 12, seed=1, manifest=True)
    base = tmp_path / "base"
    assert main(["train", str(tsv), "--steps", "2", "--output", str(base)] + TRAIN) == 0
    # New characters: refused without --extend-charset, added with it.
    (tmp_path / "m" / "lines.tsv").write_text(tsv.read_text() + "0000.png\t12+3\n")
    rc = main(["finetune", str(tsv), "--model", str(base / "model.safetensors"), "--steps", "1",
               "--output", str(tmp_path / "ft"), "--batch-size", "4", "--no-progress", "--eval-every", "0"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "'+'" in err and ("lines.tsv" in err or "0000.png" in err), err
    assert main(["finetune", str(tsv), "--model", str(base / "model.safetensors"), "--steps", "2",
                 "--output", str(tmp_path / "ft"), "--batch-size", "4", "--no-progress", "--eval-every", "0",
                 "--extend-charset"]) == 0
    ft = CrnnV0.load(tmp_path / "ft" / "model.safetensors")
    assert ft.config.charset[-1] == "+" and ft.config.charset[:10] == tuple("0123456789")


def test_bad_data_messages_name_the_file(tmp_path, capsys):
    d = write_lines(tmp_path / "d", 3)
    (d / "0001.gt.txt").unlink()
    assert main(["train", str(d), "--steps", "1", "--output", str(tmp_path / "o")] + TRAIN) == 2
    assert "0001.png: missing transcription" in capsys.readouterr().err
    d = write_lines(tmp_path / "e", 3)
    (d / "0002.png").write_bytes(b"not an image")
    assert main(["train", str(d), "--steps", "1", "--output", str(tmp_path / "o")] + TRAIN) == 2
    assert "0002.png: cannot read the image" in capsys.readouterr().err
    d = write_lines(tmp_path / "f", 3)
    (d / "0000.gt.txt").write_text("12é\n")
    assert main(["train", str(d), "--steps", "1", "--output", str(tmp_path / "o")] + TRAIN) == 2
    err = capsys.readouterr().err
    assert "0000.png" in err and "'é'" in err and "--extend-charset" in err
    assert main(["recognize", "--model", str(tmp_path / "missing.safetensors"), str(d / "0000.png")]) == 2


def test_data_pipeline_units(tmp_path):
    # Normalization: dark ink on white paper -> ink 1; height 32, aspect kept.
    a = np.full((64, 200), 255, np.uint8)
    a[20:40, 10:50] = 0
    Image.fromarray(a).save(tmp_path / "x.png")
    img = rdata.load_image(tmp_path / "x.png")
    assert img.shape == (32, 100) and img.dtype == np.float32
    assert img[15, 15] == 1.0 and img[0, 0] == 0.0
    assert rdata.load_image(tmp_path / "x.png", polarity="light")[0, 0] == 1.0
    # Batches are a function of (seed, step) alone and cover each epoch once.
    n = 10
    first = [i for s in range(5) for i in rdata.batch_indices(n, 2, 3, s)]
    assert sorted(first) == list(range(n))
    assert rdata.batch_indices(n, 4, 3, 2) == (first + [i for s in range(5, 10) for i in rdata.batch_indices(n, 2, 3, s)])[8:12]
    tr, ev = rdata.split(20, 0.1, 0)
    assert len(ev) == 2 and sorted(tr + ev) == list(range(20)) and rdata.split(20, 0.1, 0) == (tr, ev)
    # Error rates.
    assert rdata.levenshtein("kitten", "sitting") == 3
    r = rdata.error_rates(["ab cd", "x"], ["ab ce", ""])
    assert (r.char_errors, r.chars, r.word_errors, r.words) == (2, 6, 2, 3)


def test_plot_is_a_png(tmp_path):
    write_plot(tmp_path / "p.png", [{"step": 0, "loss": None, "cer": 1.0}, {"step": 5, "loss": 3.0, "cer": None},
                                    {"step": 10, "loss": 1.0, "cer": 0.5}], title="t")
    assert Image.open(tmp_path / "p.png").size == (720, 360)


def test_demo_lines_are_seeded():
    a = render_line("0123", np.random.default_rng(5))
    b = render_line("0123", np.random.default_rng(5))
    assert a.dtype == np.float32 and a.shape[0] == 32 and np.array_equal(a, b)
    assert 0.0 <= a.min() and a.max() <= 1.0


def _demo(out, threads):
    cmd = [sys.executable, "-m", "onemodel", "demo", "--quick", "--no-progress", "--output", str(out),
           "--threads", str(threads)]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def test_demo_quick_same_bits_at_1_and_2_threads(tmp_path):
    out1 = _demo(tmp_path / "t1", 1)
    out2 = _demo(tmp_path / "t2", 2)
    assert sha(tmp_path / "t1" / "checkpoint.safetensors") == sha(tmp_path / "t2" / "checkpoint.safetensors")
    h1 = [l for l in out1.splitlines() if "weights sha256" in l]
    assert h1 and h1 == [l for l in out2.splitlines() if "weights sha256" in l]
    for f in ("model.safetensors", "plot.png"):
        assert (tmp_path / "t1" / f).exists()
    assert "held-out CER" in out1


def test_demo_kernel_paths_same_bits(tmp_path, capsys):
    paths = om.compute.available_kernel_paths()
    if len(paths) < 2:
        pytest.skip("one kernel path on this CPU")
    digests = []
    with om.compute.settings():   # --kernel-path and --threads are process-wide: restored after
        # The two fastest paths (scalar is slow here, and the recognizer's own tests pin every path).
        for p, threads in ((paths[-2], 1), (paths[-1], 2)):
            assert main(["demo", "--quick", "--no-progress", "--steps", "2", "--batch-size", "2",
                         "--train-lines", "12", "--eval-lines",
                         "2", "--output", str(tmp_path / p), "--kernel-path", p, "--threads", str(threads)]) == 0
            digests.append(sha(tmp_path / p / "checkpoint.safetensors"))
    assert digests[0] == digests[1]


def test_demo_resume_is_bit_identical(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["demo", "--quick", "--no-progress", "--output", str(a)]) == 0
    assert main(["demo", "--quick", "--no-progress", "--output", str(b), "--steps", "4"]) == 0
    assert main(["demo", "--quick", "--no-progress", "--output", str(b),
                 "--resume", str(b / "checkpoint.safetensors")]) == 0
    assert sha(a / "checkpoint.safetensors") == sha(b / "checkpoint.safetensors")
    hashes = [l for l in capsys.readouterr().out.splitlines() if "weights sha256" in l]
    assert hashes[0] == hashes[2] != hashes[1]


def test_progress_on_a_terminal_and_in_a_log():
    import io

    from rich.console import Console

    from onemodel.commands.progress import TrainingProgress
    from onemodel.recognizer.data import ErrorRates

    tty = io.StringIO()
    p = TrainingProgress(console=Console(file=tty, force_terminal=True, width=150))
    assert p.live
    p.on_start(0, 4, 8)
    for s in range(1, 5):
        p.on_step(s, 2.0, 1.0)
    p.on_end()
    out = tty.getvalue()
    assert "4/4" in out and "lines/s" in out and "ETA" in out and "loss  2.0000" in out
    log = io.StringIO()
    p = TrainingProgress(every=2, console=Console(file=log, force_terminal=False, width=150))
    assert not p.live
    p.on_start(0, 4, 8)
    p.on_eval(0, ErrorRates(1, 4, 1, 1, 1))
    for s in range(1, 5):
        p.on_step(s, 1.0, 1.0)
    p.on_end()
    lines = log.getvalue().splitlines()
    assert [ln.split()[1] for ln in lines] == ["2/4", "4/4"]
    assert "\x1b" not in log.getvalue() and "CER 25.00%" in lines[-1] and "lines/s" in lines[-1]


def test_missing_cli_extras_is_one_message_before_anything_is_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # import matplotlib now raises ImportError
    assert main(["demo", "--quick", "--no-progress", "--output", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "missing: matplotlib" in err and "pip install 'onemodel[cli]'" in err
    assert not (tmp_path / "d").exists()


def test_metrics_jsonl_per_step(dataset, tmp_path):
    out = tmp_path / "m"
    args = [a if a != "0" else "2" for a in TRAIN]  # --eval-every 2 (and --checkpoint-every 2)
    assert main(["train", str(dataset), "--steps", "4", "--output", str(out)] + args) == 0
    rows = [json.loads(r) for r in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["cer"] is not None for r in rows] == [True, False, True, False, True]
    assert rows[0]["loss"] is None and all(r["loss"] > 0 and r["grad_norm"] > 0 for r in rows[1:])
    assert all(0.0 <= r["wer"] for r in rows if r["cer"] is not None)
