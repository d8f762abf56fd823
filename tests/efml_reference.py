"""
ELMoForManyLangs' own code (elmoformanylangs 0.0.4.post2), the reference of the EFML parity
tests, imported from where scripts/install_profile.sh installs it for the current profile
(`<venv>/elmoformanylangs`, off the default import path).

One shim, which stops nothing of its math: while EFML is imported, `overrides` is a no-op
decorator. EFML decorates `Highway.forward` with `@overrides`; old `overrides` (<= 7.0) does not
import on Python 3.12's bytecode and new `overrides` (7.x) rejects EFML's signatures. The real
`overrides` (which AllenNLP needs) is back in place once EFML is imported.
"""

import os
import sys
import types
from typing import Any, Optional

EFML_DIR = os.path.join(sys.prefix, "elmoformanylangs")
SKIP_REASON = (
    f"ELMoForManyLangs is not in {EFML_DIR}: scripts/install_profile.sh installs it there for "
    "the current profile only"
)


def efml_available() -> bool:
    return os.path.isfile(os.path.join(EFML_DIR, "elmoformanylangs", "elmo.py"))


def import_efml() -> Any:
    """The `elmoformanylangs` package (its `Embedder`, its training in `biLM`)."""
    if EFML_DIR not in sys.path:
        sys.path.append(EFML_DIR)
    real: Optional[types.ModuleType] = sys.modules.get("overrides")
    shim = types.ModuleType("overrides")
    shim.overrides = lambda method: method  # type: ignore[attr-defined]
    sys.modules["overrides"] = shim
    try:
        import elmoformanylangs
        import elmoformanylangs.biLM  # noqa: F401  (imported under the shim too)
    finally:
        if real is None:
            del sys.modules["overrides"]
        else:
            sys.modules["overrides"] = real
    return elmoformanylangs
