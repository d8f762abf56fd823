import os
import subprocess
import sys

from elmo_plugin.elmo.mkl_dispatch import OPT_OUT, avx2_dispatch_setting

AMD = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx fma avx2 f16c\n"
AMD_WITHOUT_AVX2 = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx\n"
INTEL = "vendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx fma avx2 avx512f\n"


def test_only_amd_processors_with_avx2_get_mkls_avx2_path(monkeypatch):
    monkeypatch.delenv("MKL_DEBUG_CPU_TYPE", raising=False)
    monkeypatch.delenv(OPT_OUT, raising=False)
    assert avx2_dispatch_setting(AMD) == "5"
    assert avx2_dispatch_setting(AMD_WITHOUT_AVX2) is None
    assert avx2_dispatch_setting(INTEL) is None  # MKL already picks Intel's best path
    assert avx2_dispatch_setting("") is None  # no /proc/cpuinfo: leave MKL alone


def test_a_users_setting_and_the_opt_out_are_respected(monkeypatch):
    monkeypatch.setenv("MKL_DEBUG_CPU_TYPE", "4")
    assert avx2_dispatch_setting(AMD) is None
    monkeypatch.delenv("MKL_DEBUG_CPU_TYPE")
    monkeypatch.setenv(OPT_OUT, "1")
    assert avx2_dispatch_setting(AMD) is None


def test_importing_the_plugin_applies_the_setting_before_any_matrix_product(monkeypatch):
    monkeypatch.delenv("MKL_DEBUG_CPU_TYPE", raising=False)
    monkeypatch.delenv(OPT_OUT, raising=False)
    environment = dict(os.environ)
    script = "import os, elmo_plugin; print(os.environ.get('MKL_DEBUG_CPU_TYPE'))"
    printed = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    expected = avx2_dispatch_setting(open("/proc/cpuinfo").read()) if os.path.exists("/proc/cpuinfo") else None
    assert printed == str(expected)
