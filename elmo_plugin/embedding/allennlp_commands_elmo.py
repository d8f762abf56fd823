"""
An opt-in stand-in for AllenNLP 0.9's `allennlp.commands.elmo`, for code that imports it inside
a library the user cannot edit (flair's `ELMoEmbeddings`). `install()` registers this module
under that name; importing it (or `elmo_plugin`) installs nothing. It holds what such clients
reach: `ElmoEmbedder`, `DEFAULT_OPTIONS_FILE` and `DEFAULT_WEIGHT_FILE` (0.9's defaults: the
original ELMo), and, on the embedder's biLM, `_elmo_lstm._states`, which flair moves to its
device when it unpickles a model.

    from elmo_plugin.embedding import allennlp_commands_elmo
    allennlp_commands_elmo.install()
    from flair.embeddings import ELMoEmbeddings   # now runs on elmo_plugin

With AllenNLP installed (2.x has no `allennlp.commands.elmo`) the module joins its
`allennlp.commands`; without it, `allennlp` and `allennlp.commands` become bare packages
holding only this module, so `import allennlp` succeeds in that process. `uninstall()` undoes
either. Pickles of these embedders name this module, so they load with or without `install()`.
"""

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any, Dict, Optional, Tuple

import torch

from elmo_plugin.elmo import ElmoBiLm
from elmo_plugin.elmo.bilm.lstm.module import LstmState
from elmo_plugin.elmo.formats.naming.published_models import PUBLISHED_MODELS
from elmo_plugin.embedding import elmo_embedder

NAME = "allennlp.commands.elmo"
DEFAULT_OPTIONS_FILE = PUBLISHED_MODELS["original"].options_url
DEFAULT_WEIGHT_FILE = PUBLISHED_MODELS["original"].weights_url

# What install() put in place and what was there before (a module, None or nothing), for
# uninstall().
_ABSENT = object()
_replaced: Dict[str, object] = {}


class CarriedLstmStates:
    """
    AllenNLP 0.9's `_ElmoBiLm._elmo_lstm` as far as its clients reach it: `_states`, the LSTM
    states carried from one batch to the next, as a tuple of tensors (`()` when nothing is
    carried, as in `ElmoEmbedder`'s stateless default). Setting it sets the biLM's carried
    states (flair sets them moved to its device); `()` forgets them. Unlike 0.9's, a biLM moved
    to a device starts afresh (`ElmoBiLm` forgets carried states when moved), so a reloaded
    flair model, which flair moves first, no longer carries the states it was pickled with.
    """

    def __init__(self, bilm: ElmoBiLm) -> None:
        self._bilm = bilm

    @property
    def _states(self) -> Tuple[torch.Tensor, ...]:
        carried = self._bilm._states
        return () if carried is None else tuple(carried)

    @_states.setter
    def _states(self, states: Tuple[torch.Tensor, ...]) -> None:
        states = tuple(states)
        if len(states) not in (0, len(LstmState._fields)):
            raise ValueError(
                f"carried LSTM states are {len(LstmState._fields)} tensors "
                f"({', '.join(LstmState._fields)}) or none, got {len(states)}"
            )
        self._bilm._states = LstmState(*states) if states else None


class ElmoEmbedder(elmo_embedder.ElmoEmbedder):
    """`elmo_plugin.ElmoEmbedder`, its biLM also reachable as 0.9's clients reach it
    (`elmo_bilm._elmo_lstm._states`, see `CarriedLstmStates`)."""

    def _hold(self, bilm: ElmoBiLm, *args: Any, **kwargs: Any) -> None:
        super()._hold(bilm, *args, **kwargs)
        # 0.9's private name, which flair's `ELMoEmbeddings.__setstate__` reaches.
        setattr(self.elmo_bilm, "_elmo_lstm", CarriedLstmStates(self.elmo_bilm))


def install() -> types.ModuleType:
    """Makes `import allennlp.commands.elmo` give this module (see above); returns it."""
    this = sys.modules[__name__]
    if sys.modules.get(NAME) is this:
        return this
    if importlib.util.find_spec("allennlp") is not None:
        _register(NAME, this, parent=importlib.import_module("allennlp.commands"))
        return this
    root = _bare_package("allennlp")
    commands = _bare_package("allennlp.commands")
    _register("allennlp", root, parent=None)
    _register("allennlp.commands", commands, parent=root)
    _register(NAME, this, parent=commands)
    return this


def uninstall() -> None:
    """Undoes `install()`: the modules it registered are gone, what was there is back."""
    for name, before in reversed(list(_replaced.items())):
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name) if parent_name else None
        if before is _ABSENT:
            sys.modules.pop(name, None)
            if parent is not None and hasattr(parent, child):
                delattr(parent, child)
        else:
            sys.modules[name] = before  # type: ignore[assignment]
    _replaced.clear()


def _register(name: str, module: types.ModuleType, parent: Optional[types.ModuleType]) -> None:
    _replaced.setdefault(name, sys.modules.get(name, _ABSENT))
    sys.modules[name] = module
    if parent is not None:
        setattr(parent, name.rpartition(".")[2], module)


def _bare_package(name: str) -> types.ModuleType:
    package = types.ModuleType(name, f"AllenNLP is not installed: a stand-in made by {__name__}")
    # A package with no files: any other submodule stays missing, as before.
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__path__ = []
    return package
