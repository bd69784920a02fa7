"""simrun.read's memory check counts the arrays it hands back, before it reads anything: a read
holds the stored values and their copy as arrays at once (the crafted files that the reader
refuses are made in tests/unit/framework/run_file_safety_test.cpp)."""

import pytest

import simrun
from simrun import _simrun
from conftest import source

HEAT = source("inputs", "heat.toml")


def test_read_counts_its_arrays_in_the_memory_it_may_use(tmp_path):
    summary = simrun.run(HEAT, set={"grid.nx": 17, "grid.ny": 13, "time.end": 0.05},
                         output=tmp_path, backend="cpu")
    steps = simrun.read_steps(summary["h5"])
    histories = sum(len(step["residual_history"]) for step in steps)
    # The stored input and solver decisions: their UTF-8 bytes (one at least, HDF5's least).
    texts = sum(max(1, len(text.encode())) for text in simrun.read_input(summary["h5"]))
    # One field "u" per step: the read holds each step's nodes and history and the texts, the
    # arrays and strings again.
    held = 8 * (len(steps) * 17 * 13 + histories) + texts
    with pytest.raises(RuntimeError, match=f"reading {len(steps)} steps' fields"):
        _simrun._read(summary["h5"], True, None, memory_limit=2 * held - 8)
    stored = _simrun._read(summary["h5"], True, None, memory_limit=2 * held)
    assert stored["fields"]["u"].shape == (len(steps), 13, 17)
