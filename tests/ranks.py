"""What a process of a local 2-process gloo group needs, as `torchrun` gives it: a free port on
the loopback, and the environment variables of its rank."""

import os
import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def become_rank(number: int, port: str, world_size: int = 2) -> None:
    """Sets this (forked) process's environment as `torchrun` sets rank `number`'s."""
    os.environ.update(
        WORLD_SIZE=str(world_size),
        RANK=str(number),
        LOCAL_RANK=str(number),
        LOCAL_WORLD_SIZE=str(world_size),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=port,
    )
