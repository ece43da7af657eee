import json
import subprocess
import sys

import onemodel as om
from onemodel.cli import main


def test_info_prints_everything(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for field in ("onemodel", "CPU features", "kernel paths available", "kernel path in use", "threads", "mode"):
        assert field in out
    assert om.compute.kernel_path() in out


def test_info_json_and_console_script():
    out = subprocess.run([sys.executable, "-m", "onemodel", "info", "--json"], capture_output=True, text=True, check=True).stdout
    info = json.loads(out)
    assert info["kernel_paths_available"][0] == "scalar"
    assert info["mode"] in ("fast", "exact")


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "info" in capsys.readouterr().out


def test_the_library_imports_no_cli_extra():
    code = ("import sys, onemodel, onemodel.nn, onemodel.optim, onemodel.recognizer.training, onemodel.cli; "
            "print(sorted(m for m in ('rich', 'matplotlib', 'tqdm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
