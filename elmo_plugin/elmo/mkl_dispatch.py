"""
MKL's AVX2 kernels on AMD processors.

PyTorch 1.12 ships MKL 2020.0, which gives processors that are not Intel's its slow SSE code
path unless `MKL_DEBUG_CPU_TYPE=5` asks for the AVX2 one (honoured up to that release). On an
AMD EPYC with AVX2 this makes ELMo's matrix products 2-3x faster with the same results to
float32 rounding. MKL reads the variable when it first runs, so it is set when this package is
imported, before any matrix product; a process that already used MKL keeps its path.

Set `ELMO_PLUGIN_KEEP_MKL_DISPATCH=1` to leave MKL's choice alone; a `MKL_DEBUG_CPU_TYPE` that
is already set is never changed.
"""
import logging
import os
from typing import Optional

logger = logging.getLogger(__name__)

OPT_OUT = "ELMO_PLUGIN_KEEP_MKL_DISPATCH"


def _cpu_description(path: str = "/proc/cpuinfo") -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as cpuinfo:
            return cpuinfo.read(65536)
    except OSError:
        return ""


def avx2_dispatch_setting(cpuinfo: Optional[str] = None) -> Optional[str]:
    """The `MKL_DEBUG_CPU_TYPE` value this machine should run with, or `None` to leave it."""
    if os.environ.get(OPT_OUT) or "MKL_DEBUG_CPU_TYPE" in os.environ:
        return None
    cpuinfo = _cpu_description() if cpuinfo is None else cpuinfo
    flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
    if "AuthenticAMD" in cpuinfo and " avx2" in flags and " fma" in flags:
        return "5"
    return None


def use_avx2_kernels_on_amd() -> None:
    setting = avx2_dispatch_setting()
    if setting is not None:
        os.environ["MKL_DEBUG_CPU_TYPE"] = setting
        logger.debug("AMD processor with AVX2: MKL_DEBUG_CPU_TYPE=%s", setting)
