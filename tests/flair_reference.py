"""
flair's own code (flair 0.15.1), the old client the old-client tests drive, imported from where
scripts/install_profile.sh installs it with the four small packages its import needs beyond
ours (`<venv>/flair`, off the default import path).

`import flair` imports all of flair: its corpus loaders and training plugins too. Four modules
only they use, which would bring several more packages (pyarrow's `datasets` among them), are
stand-ins while flair is imported, and gone from `sys.modules` after: `lxml` and `bioc` (the
biomedical and entity-linking corpora), `gdown` (corpus downloads) and
`transformer_smaller_training_vocab` (a training plugin). Each name flair takes from them
raises if ever used. Nothing of `ELMoEmbeddings`, `Sentence` or a model's loading touches
them; a real module of that name, where installed, is used instead.
"""

import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any, Dict, List

FLAIR_DIR = os.path.join(sys.prefix, "flair")
SKIP_REASON = (
    f"flair is not in {FLAIR_DIR}: scripts/install_profile.sh installs it there "
    "(make install, or its last lines by hand)"
)
# Each stand-in and the names flair imports from it.
_STAND_INS: Dict[str, List[str]] = {
    "lxml": ["etree"],
    "lxml.etree": ["XMLSyntaxError"],
    "bioc": ["biocxml", "pubtator"],
    "gdown": ["download_folder"],
    "gdown.download_folder": [],
    "transformer_smaller_training_vocab": ["reduce_train_vocab"],
}


def flair_available() -> bool:
    return os.path.isfile(os.path.join(FLAIR_DIR, "flair", "embeddings", "legacy.py"))


def import_flair() -> Any:
    """The `flair` package (`flair.embeddings.ELMoEmbeddings`, `flair.data.Sentence`)."""
    if FLAIR_DIR not in sys.path:
        sys.path.append(FLAIR_DIR)
    if "flair" in sys.modules:
        return sys.modules["flair"]
    missing = [name for name in _STAND_INS if not _installed(name.split(".")[0])]
    for name in missing:
        sys.modules[name] = _stand_in(name)
    try:
        import flair
        import flair.embeddings  # noqa: F401  (imported under the stand-ins too)
        import flair.models  # noqa: F401
    finally:
        for name in missing:
            del sys.modules[name]
    return flair


def _installed(name: str) -> bool:
    return name in sys.modules or importlib.util.find_spec(name) is not None


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, f"a stand-in of the old-client tests (tests/{__name__})")
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__path__ = []
    for attribute in _STAND_INS[name]:
        setattr(module, attribute, _unavailable(f"{name}.{attribute}"))
    return module


def _unavailable(name: str) -> Any:
    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise ModuleNotFoundError(f"{name} is a stand-in in flair's test place ({__name__})")

    return unavailable
