"""Data-parallel gradients over several hosts with adarray's JAX backend.

Every host runs this same script (one process per host; each sees its own devices). JAX connects them
(`jax.distributed.initialize`), the mesh spans every device of every host, each process holds only its own
points, and `ad.data_parallel` compiles one SPMD program in which XLA adds the partial gradients across all
devices. Run, e.g. on two hosts:

    host0$ python examples/multihost_data_parallel.py --coordinator host0:12345 --processes 2 --process-id 0
    host1$ python examples/multihost_data_parallel.py --coordinator host0:12345 --processes 2 --process-id 1

On GPUs or TPUs nothing changes (JAX picks the accelerators). Two processes on one machine, CPU only, with
two simulated devices each (what tests/test_jax_multihost.py runs):

    XLA_FLAGS=--xla_force_host_platform_device_count=2 python examples/multihost_data_parallel.py \\
        --coordinator localhost:12345 --processes 2 --process-id 0 &
    XLA_FLAGS=--xla_force_host_platform_device_count=2 python examples/multihost_data_parallel.py \\
        --coordinator localhost:12345 --processes 2 --process-id 1

Each process prints one JSON line: its devices, its shard, and the gradient's difference from the NumPy
backend's gradient over all the points (every process can compute that here: the data is synthetic).
"""
from __future__ import annotations

import argparse
import json

import numpy as np


def loss(w, x, y):
    """Least squares of a small tanh model, summed over the data points (rows of x and y)."""
    import adarray.numpy as anp

    return anp.sum((anp.tanh(x @ w[:-1]) @ w[-1:].T - y) ** 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coordinator", required=True, help="host:port of process 0")
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--process-id", type=int, required=True)
    parser.add_argument("--points", type=int, default=4096, help="data points in all (divisible by the devices)")
    args = parser.parse_args()

    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives across processes
    jax.distributed.initialize(args.coordinator, num_processes=args.processes, process_id=args.process_id)

    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    import adarray as ad
    from adarray.backends.jax import x64

    rng = np.random.default_rng(0)  # the same synthetic data on every process; each keeps its own rows
    w = rng.normal(size=(4, 3))
    x, y = rng.normal(size=(args.points, 3)), rng.normal(size=(args.points, 1))

    mesh = Mesh(np.array(jax.devices()), ("data",))         # every device of every process
    rows = NamedSharding(mesh, PartitionSpec("data"))
    per_process = args.points // jax.process_count()
    mine = slice(jax.process_index() * per_process, (jax.process_index() + 1) * per_process)
    with x64():  # float64 on the devices
        x_global = jax.make_array_from_process_local_data(rows, x[mine], x.shape)
        y_global = jax.make_array_from_process_local_data(rows, y[mine], y.shape)

    step = ad.data_parallel(ad.grad(loss), mesh, batch_argnums=(1, 2))
    gradient = step(w, x_global, y_global)
    local = np.asarray(gradient.addressable_shards[0].data)  # the reduced gradient is replicated
    reference = ad.grad(loss)(w, x, y)                        # NumPy backend, all points, one process
    print(json.dumps({
        "process": jax.process_index(), "processes": jax.process_count(), "devices": len(jax.devices()),
        "local_devices": len(jax.local_devices()),
        "local_rows": sorted(int(s.data.shape[0]) for s in x_global.addressable_shards),
        "difference": float(np.max(np.abs(local - reference))), "scale": float(np.max(np.abs(reference))),
    }))
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
