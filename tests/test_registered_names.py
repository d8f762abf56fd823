"""Users install allennlp-models beside us: all three must import together in either order
(AllenNLP's `Registrable.register` raises on a name used twice for the same base class), and
our names must resolve to our classes."""

import subprocess
import sys

import pytest
from allennlp.common.plugins import import_plugins
from allennlp.common.util import import_module_and_submodules

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow


def test_plugin_registers_after_allennlp_and_allennlp_models(allennlp_models):
    import_plugins()  # all of allennlp and allennlp_models, as the `allennlp` command does
    import_module_and_submodules("elmo_plugin")

    from allennlp.common.registrable import Registrable
    from allennlp.models import Model
    from allennlp.modules.token_embedders import TokenEmbedder

    from elmo_plugin.allennlp.modules import ElmoTokenEmbedder

    assert Model.by_name("crf_tagger").__module__.startswith("allennlp_models")  # really loaded
    assert TokenEmbedder.by_name("elmo") is ElmoTokenEmbedder
    ours = [
        (base, name, cls)
        for base, names in Registrable._registry.items()
        for name, (cls, _) in names.items()
        if cls.__module__.startswith("elmo_plugin")
    ]
    for base, name, cls in ours:
        assert issubclass(base, Registrable)
        assert base.resolve_class_name(name)[0] is cls, name
    names = {name for _, name, _ in ours}
    assert {"elmo", "litbank_coref", "span_ranking_coref", "coref_clusters"} <= names
    assert {"conll2012_coref_scores", "coref_mention_recall"} <= names


def test_allennlp_models_registers_after_the_plugin(allennlp_models):
    code = (
        "import nltk; nltk.download = lambda *args, **kwargs: False;"
        "from allennlp.common.util import import_module_and_submodules as imp;"
        "imp('elmo_plugin'); imp('allennlp_models'); print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")


def test_the_plugin_never_imports_allennlp_models(allennlp_models):
    # allennlp-models is not a runtime dependency (docs/install.md): with it importable, every
    # module of ours still loads without it.
    code = (
        "import sys; from allennlp.common.util import import_module_and_submodules as imp;"
        "imp('elmo_plugin'); print('allennlp_models' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "False"
