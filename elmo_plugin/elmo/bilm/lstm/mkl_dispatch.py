"""
MKL's AVX2 kernels on AMD processors, as an explicit opt-in.

The MKL 2020.0 inside PyTorch 1.12 (the "allennlp-2.10" profile) gives processors that are not
Intel's its slow SSE code path unless `MKL_DEBUG_CPU_TYPE=5` asks for the AVX2 one; on an AMD
processor with AVX2 that made ELMo's matrix products much faster with the same results to
float32 rounding (docs/performance.md has the figures). The MKL of current PyTorch ignores the
variable. Nothing here runs on import: the variable changes every MKL user of the process and
of its children, so it is the user's call, either in the shell
(`MKL_DEBUG_CPU_TYPE=5 allennlp ...`) or with `use_avx2_kernels_on_amd()` before the first
matrix product.
"""

import logging
import os
from typing import Optional

logger = logging.getLogger(__name__)

VARIABLE = "MKL_DEBUG_CPU_TYPE"


def _cpu_description(path: str = "/proc/cpuinfo") -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as cpuinfo:
            return cpuinfo.read(65536)
    except OSError:
        return ""


def avx2_dispatch_setting(cpuinfo: Optional[str] = None) -> Optional[str]:
    """The `MKL_DEBUG_CPU_TYPE` value this machine would run faster with, or `None` (not an
    AMD processor with AVX2 and FMA, or the variable is already set)."""
    if VARIABLE in os.environ:
        return None
    cpuinfo = _cpu_description() if cpuinfo is None else cpuinfo
    flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
    if "AuthenticAMD" in cpuinfo and " avx2" in flags and " fma" in flags:
        return "5"
    return None


def use_avx2_kernels_on_amd() -> bool:
    """Sets `MKL_DEBUG_CPU_TYPE=5` in this process (and so its children) on an AMD processor
    with AVX2, unless it is already set. Call it before anything runs a matrix product: MKL
    reads it once. Returns whether it was set."""
    setting = avx2_dispatch_setting()
    if setting is None:
        return False
    os.environ[VARIABLE] = setting
    logger.info("AMD processor with AVX2: %s=%s for MKL's AVX2 kernels", VARIABLE, setting)
    return True
