"""A local Ray that stays up while a `with` block runs, for programs that join it (the Ray
example's `--address`): a child process starts it, prints its address and shuts it down when
its input closes, so nothing of it outlives the block."""

import contextlib
import os
import subprocess
import sys
from typing import Iterator

_HOLDER = """
import sys
import ray
context = ray.init(num_cpus=int(sys.argv[1]), include_dashboard=False)
print(context.address_info["gcs_address"], flush=True)
sys.stdin.read()
ray.shutdown()
"""


@contextlib.contextmanager
def running_ray(cpus: int) -> Iterator[str]:
    """The address of a local Ray of `cpus` CPUs, up until the block ends."""
    # A Ray that `ray.init` starts wants a token from every process that joins it: this one,
    # on the loopback interface for one test or benchmark, asks for none.
    environment = dict(os.environ, RAY_AUTH_MODE="disabled")
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(cpus)],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        address = holder.stdout.readline().strip()
        if not address:
            raise RuntimeError("the process starting Ray printed no address")
        yield address
    finally:
        holder.stdin.close()
        holder.wait(timeout=120)
