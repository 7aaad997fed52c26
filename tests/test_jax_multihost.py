"""examples/multihost_data_parallel.py run as two processes on this machine (two simulated CPU devices each):
jax.distributed connects them, each holds half of the points, and both get the gradient over all of them."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def test_two_processes_compute_one_data_parallel_gradient():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    port = _free_port()
    command = [sys.executable, str(ROOT / "examples" / "multihost_data_parallel.py"), "--coordinator",
               f"localhost:{port}", "--processes", "2", "--process-id"]
    processes = [subprocess.Popen(command + [str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for i in range(2)]
    reports = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=240)
            assert process.returncode == 0, err[-3000:]
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert sorted(r["process"] for r in reports) == [0, 1]
    for report in reports:
        assert report["processes"] == 2 and report["devices"] == 4 and report["local_devices"] == 2
        assert report["local_rows"] == [1024, 1024]  # half of the 4096 points, over its two devices
        assert report["difference"] <= 1e-12 * report["scale"]
