import json
import logging
import os
import subprocess
import sys

from elmo_plugin.elmo.bilm.lstm import mkl_dispatch
from elmo_plugin.elmo.bilm.lstm.mkl_dispatch import (
    VARIABLE,
    avx2_dispatch_setting,
    use_avx2_kernels_on_amd,
)

AMD = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx fma avx2 f16c\n"
AMD_WITHOUT_AVX2 = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx\n"
INTEL = "vendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx fma avx2 avx512f\n"


def test_only_amd_processors_with_avx2_get_mkls_avx2_path(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert avx2_dispatch_setting(AMD) == "5"
    assert avx2_dispatch_setting(AMD_WITHOUT_AVX2) is None
    assert avx2_dispatch_setting(INTEL) is None  # MKL already picks Intel's best path
    assert avx2_dispatch_setting("") is None  # no /proc/cpuinfo: leave MKL alone


def test_a_users_setting_is_respected(monkeypatch):
    monkeypatch.setenv(VARIABLE, "4")
    assert avx2_dispatch_setting(AMD) is None
    assert not use_avx2_kernels_on_amd()
    assert os.environ[VARIABLE] == "4"


def test_the_opt_in_sets_the_variable_and_says_so(monkeypatch, caplog):
    monkeypatch.delenv(VARIABLE, raising=False)
    monkeypatch.setattr(mkl_dispatch, "_cpu_description", lambda: AMD)
    with caplog.at_level(logging.INFO, logger=mkl_dispatch.__name__):
        assert use_avx2_kernels_on_amd()
    assert os.environ[VARIABLE] == "5"
    assert f"{VARIABLE}=5" in caplog.text


def test_importing_the_plugin_leaves_the_environment_unchanged():
    # Everything the `allennlp` command imports with the plugin: the core, lm, commands, tasks.
    script = (
        "import json, os; before = dict(os.environ);"
        "from allennlp.common.util import import_module_and_submodules as imp;"
        "imp('elmo_plugin');"
        "after = dict(os.environ);"
        "print(json.dumps({k: [before.get(k), after.get(k)] for k in set(before) | set(after)"
        " if before.get(k) != after.get(k)}))"
    )
    environment = {k: v for k, v in os.environ.items() if k != VARIABLE}
    printed = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True
    ).stdout.splitlines()[-1]
    assert json.loads(printed) == {}
