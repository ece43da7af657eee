"""The sweep's ported programs (tests/ports/, beyond the six of
harness.NAMES): each port file ends with ``sweep_drive(run)``, which does
what its program's main() does at tiny sizes with dropout 0, through the
same harness (tests/ports/harness.py: torch's initial weights and random
draws replayed on onemodel). tools/surface_oracle.py (section
sweep_ports) runs them on torch into testdata/surface/sweep_ports.{npz,json};
tests/test_sweep_ports.py runs them on onemodel and compares."""

from __future__ import annotations

import harness

# name -> port file (tests/ports/<file>.py)
SWEEP_PORTS = {
    "nanogpt": "nanogpt",
    "time_sequence_prediction": "time_sequence_prediction",
    "super_resolution": "super_resolution",
    "reinforcement_learning": "reinforcement_learning",
    "regression": "regression",
    "fast_neural_style": "fast_neural_style",
    "gcn": "gcn",
    "vit": "vit",
    "resnet": "resnet",
    "siamese_network": "siamese_network",
    "snli": "snli",
    "seq2seq": "seq2seq",
    "char_rnn": "char_rnn",
}


def drive(name: str, lib, run: "harness.Run") -> None:
    port = harness.load_port(SWEEP_PORTS[name], lib.__name__)
    port.sweep_drive(run)
