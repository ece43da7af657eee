"""Every numeric option of the command line is checked at parse time: a bad
value gives one line on stderr naming the option and the accepted range,
exit status 2, no traceback, and nothing is written."""

import subprocess
import sys

import pytest

from onemodel.cli import build_parser, main

#: (command prefix, option, bad values, range text in the message)
BAD = [
    # demo
    (["demo"], "--steps", ["0", "-5", "1.5", "x", str(10**9 + 1)], "[1, 1000000000]"),
    (["demo"], "--batch-size", ["0", "-1", "65537", "2.0"], "[1, 65536]"),
    (["demo"], "--lr", ["0", "-1", "nan", "inf", "-inf", "1e400", "abc"], "(0, 3.4e38]"),
    (["demo"], "--seed", ["-1", str(2**64), "0.5"], "[0, 18446744073709551615]"),
    (["demo"], "--train-lines", ["0", "100001"], "[1, 100000]"),
    (["demo"], "--eval-lines", ["0", "-3"], "[1, 100000]"),
    (["demo"], "--eval-every", ["-1", "1e3"], "[0, 1000000000]"),
    (["demo"], "--min-len", ["0", "201"], "[1, 200]"),
    (["demo"], "--max-len", ["0", "-2"], "[1, 200]"),
    (["demo"], "--threads", ["0", "-2", "1025"], "[1, 1024]"),
    # train and finetune
    (["train", "DATA"], "--steps", ["0", "-5"], "[1, 1000000000]"),
    (["train", "DATA"], "--epochs", ["0", "-1", "nan", "inf", "1e7"], "(0, 1e+06]"),
    (["train", "DATA"], "--batch-size", ["0", "-8"], "[1, 65536]"),
    (["train", "DATA"], "--lr", ["-1", "nan", "0"], "(0, 3.4e38]"),
    (["train", "DATA"], "--weight-decay", ["-1", "nan", "inf"], "[0, 3.4e38]"),
    (["train", "DATA"], "--clip", ["-3", "nan", "1e39"], "[0, 3.4e38]"),
    (["train", "DATA"], "--eval-split", ["1.5", "1", "-0.1", "nan"], "[0, 1)"),
    (["train", "DATA"], "--max-eval", ["-1"], "[0, 1000000000]"),
    (["train", "DATA"], "--eval-every", ["-1"], "[0, 1000000000]"),
    (["train", "DATA"], "--checkpoint-every", ["-1", "x"], "[0, 1000000000]"),
    (["train", "DATA"], "--seed", ["-1"], "[0, 18446744073709551615]"),
    (["train", "DATA"], "--threads", ["0"], "[1, 1024]"),
    (["finetune", "DATA", "--model", "M"], "--lr", ["-1", "nan"], "(0, 3.4e38]"),
    (["finetune", "DATA", "--model", "M"], "--steps", ["-5"], "[1, 1000000000]"),
    (["finetune", "DATA", "--model", "M"], "--eval-split", ["1.5"], "[0, 1)"),
    # recognize and eval
    (["recognize", "--model", "M", "x.png"], "--threads", ["0"], "[1, 1024]"),
    (["eval", "--model", "M", "DATA"], "--show-errors", ["-1"], "[0, 1000000000]"),
    (["eval", "--model", "M", "DATA"], "--threads", ["0"], "[1, 1024]"),
]

CASES = [(cmd, opt, v, span) for cmd, opt, values, span in BAD for v in values]


@pytest.mark.parametrize("cmd,opt,value,span", CASES, ids=[f"{c[0]}{o}={v}" for c, o, v, _ in CASES])
def test_bad_value_is_one_line_exit_2_nothing_written(cmd, opt, value, span, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    # "-inf" does not look like a negative number to argparse: it is given as --opt=-inf, as a user must.
    given = [f"{opt}={value}"] if value.startswith("-") and any(c.isalpha() for c in value) else [opt, value]
    argv = cmd + ([] if cmd[0] in ("recognize", "eval") else ["--output", str(out)]) + given
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert f"argument {opt}: expected" in lines[0] and span in lines[0] and repr(value) in lines[0]
    assert lines[0].startswith(f"onemodel {cmd[0]}: error:")
    assert list(tmp_path.iterdir()) == []


def test_boundary_values_are_accepted():
    p = build_parser()
    a = p.parse_args(["train", "D", "--steps", "1", "--batch-size", "65536", "--lr", "3.4e38", "--weight-decay", "0",
                      "--clip", "0", "--eval-split", "0", "--max-eval", "0", "--eval-every", "0", "--seed",
                      str(2**64 - 1), "--threads", "1024", "--checkpoint-every", "0"])
    assert (a.steps, a.batch_size, a.lr, a.weight_decay, a.clip, a.eval_split, a.seed, a.threads) == \
        (1, 65536, 3.4e38, 0.0, 0.0, 0.0, 2**64 - 1, 1024)
    a = p.parse_args(["train", "D", "--epochs", "0.5", "--lr", "1e-45", "--eval-split", "0.999"])
    assert (a.epochs, a.lr, a.eval_split) == (0.5, 1e-45, 0.999)
    a = p.parse_args(["demo", "--min-len", "1", "--max-len", "200", "--train-lines", "100000", "--eval-lines", "1"])
    assert (a.min_len, a.max_len, a.train_lines, a.eval_lines) == (1, 200, 100000, 1)


@pytest.mark.parametrize("argv,needle", [
    (["demo", "--max-len", "2"], "argument --max-len: 2 is below --min-len 3"),
    (["demo", "--min-len", "9"], "argument --max-len: 8 is below --min-len 9"),
    (["demo", "--charset", ""], "argument --charset: expected at least one character"),
    (["demo", "--charset", "0123401"], "repeats '0' '1'"),
    (["train", "D", "--charset", ""], "argument --charset: expected at least one character"),
    (["demo", "--kernel-path", "sse9"], "argument --kernel-path: invalid choice: 'sse9'"),
])
def test_other_bad_values(argv, needle, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(argv + ["--output", str(tmp_path / "out")])
    assert e.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and needle in err[0]
    assert list(tmp_path.iterdir()) == []


def test_a_real_process_prints_one_line_and_exits_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "onemodel", "train", str(tmp_path), "--lr", "nan", "--output",
                        str(tmp_path / "out")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == ["onemodel train: error: argument --lr: expected a finite number in "
                                     "(0, 3.4e38], got 'nan' (see onemodel train --help)"]
    assert not (tmp_path / "out").exists()


def test_an_output_path_that_cannot_be_made_is_one_message(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["demo", "--quick", "--no-progress", "--output", str(tmp_path / "file" / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "file/sub" in err and "Traceback" not in err


def _numeric_options():
    """Every option of every command whose value is parsed as a number
    (found from the parser itself, so an option added later is covered)."""
    import argparse

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    prefix = {"train": ["train", "DATA"], "finetune": ["finetune", "DATA", "--model", "M"],
              "recognize": ["recognize", "--model", "M", "x.png"], "eval": ["eval", "--model", "M", "DATA"]}
    for name, sp in sub.choices.items():
        for a in sp._actions:
            if a.option_strings and getattr(a.type, "__name__", "") in ("integer", "number"):
                yield prefix.get(name, [name]), a.option_strings[-1]


NUMERIC = list(_numeric_options())


def test_the_numeric_options_are_the_ones_listed():
    # BAD tests each listed option with its own boundary values; the generic
    # test below covers the rest of the commands' numeric options.
    assert len(NUMERIC) >= 38, NUMERIC


@pytest.mark.parametrize("cmd,opt", NUMERIC, ids=[f"{c[0]}{o}" for c, o in NUMERIC])
@pytest.mark.parametrize("value", ["-1", "nan", "x", "1e39"])
def test_every_numeric_option_refuses_a_bad_value(cmd, opt, value, tmp_path, capsys, monkeypatch):
    # Every range the command line accepts is non-negative and at most
    # 3.4e38 (float32's largest), and an integer one takes no exponent form:
    # -1, NaN, a word and 1e39 are outside all of them.
    monkeypatch.chdir(tmp_path)
    argv = cmd + ([] if cmd[0] in ("recognize", "eval") else ["--output", str(tmp_path / "out")]) + [opt, value]
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1, captured.err
    assert lines[0].startswith(f"onemodel {cmd[0]}: error: argument {opt}: expected") and repr(value) in lines[0]
    assert ("[" in lines[0] or "(" in lines[0]) and "Traceback" not in captured.err
    assert list(tmp_path.iterdir()) == []
