"""
How many CPUs this process may really use: those of its affinity mask
(`os.sched_getaffinity`, what `taskset` and container cpusets set), within its cgroup's CPU
quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us / cpu.cfs_period_us`, what `docker --cpus`
and Kubernetes CPU limits set), rather than the host's core count, which torch's default
thread count follows.
"""

import math
import os
from typing import List, Optional, Tuple

_CGROUP_ROOT = "/sys/fs/cgroup"


def usable_cpus(cgroup_root: str = _CGROUP_ROOT) -> Tuple[int, str]:
    """The CPUs this process may use, at least 1, and how that was found (for the log)."""
    affinity = _affinity()
    quota = cpu_quota(cgroup_root)
    if quota is not None and quota < affinity:
        return max(1, math.floor(quota)), f"cgroup CPU quota {quota:g} of {affinity} CPUs"
    return affinity, f"{affinity} CPUs in the affinity mask"


def _affinity() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_quota(cgroup_root: str = _CGROUP_ROOT) -> Optional[float]:
    """The CPUs' worth of time the process may use, the tightest quota of its cgroup and the
    cgroups above it (v2 or v1), or None without a limit."""
    quotas: List[float] = []
    for relative in _cgroup_paths() or ["/"]:
        parts = [part for part in relative.split("/") if part]
        for depth in range(len(parts), -1, -1):
            below = os.path.join("", *parts[:depth])
            quotas += _quotas(os.path.join(cgroup_root, below), cgroup_root, below)
    return min(quotas) if quotas else None


def _quotas(v2_directory: str, cgroup_root: str, below: str) -> List[float]:
    found = [_v2_quota(v2_directory)]
    found += [_v1_quota(os.path.join(cgroup_root, v1, below)) for v1 in ("cpu", "cpu,cpuacct")]
    return [quota for quota in found if quota is not None]


def _cgroup_paths() -> List[str]:
    """The process's cgroup paths from /proc/self/cgroup (v2's `0::/path`, v1's cpu line)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as handle:
            entries = [line.strip().split(":", 2) for line in handle if line.count(":") >= 2]
    except OSError:
        return []
    return [path for _, controllers, path in entries if controllers in ("", "cpu,cpuacct", "cpu")]


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _v2_quota(directory: str) -> Optional[float]:
    text = _read(os.path.join(directory, "cpu.max"))
    if not text:
        return None
    quota, _, period = text.partition(" ")
    if quota == "max" or not period:
        return None
    return int(quota) / int(period)


def _v1_quota(directory: str) -> Optional[float]:
    quota, period = (_read(os.path.join(directory, f"cpu.cfs_{n}_us")) for n in ("quota", "period"))
    if quota is None or period is None or int(quota) <= 0:
        return None
    return int(quota) / int(period)
