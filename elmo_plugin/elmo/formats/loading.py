"""
Loading a biLM for use, the one way for `Elmo` and for `load_bilm`'s other callers
(`ElmoEmbedder`, `allennlp elmo-embed`, the `bilm` model): its options found (given inline,
recorded in a model's vocabulary, or read from `options.json`), its weights read from
`weights.hdf5`, and, for a biLM inside a model, where its weights come from checked at its first
forward pass (`WeightProvenance`).
"""

import json
import os
from typing import Any, Dict, Iterable, Optional, Protocol, Tuple, Union

import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.bilm_tf import read_weights
from elmo_plugin.elmo.formats.bilm_tf_options import check_options, read_options
from elmo_plugin.elmo.formats.efml import load_efml_bilm
from elmo_plugin.elmo.formats.efml.ids import EFML_INDEXER_NAME
from elmo_plugin.elmo.formats.efml.model import EFML_OPTIONS_KEY
from elmo_plugin.elmo.formats.naming.bilm_formats import EFML, TF_CHECKPOINT, TF_HUB
from elmo_plugin.elmo.formats.naming.names import (
    BilmFiles,
    PathName,
    is_gone,
    resolve_bilm,
)
from elmo_plugin.elmo.formats.tensorflow.bilm_checkpoint import load_checkpoint_bilm
from elmo_plugin.elmo.formats.tensorflow.hub_module import load_hub_bilm

# The vocabulary namespace where a biLM loaded with a model's vocabulary has its options
# recorded, one JSON token `{"options_file": name, "options": {...}}` per file name: AllenNLP
# saves the vocabulary into the model's archive, so the archive carries the biLM's sizes.
OPTIONS_NAMESPACE = "elmo_bilm_options"


class OptionsRecord(Protocol):
    """Where a model keeps the options of its biLM: the part of AllenNLP's `Vocabulary` that
    loading uses (AllenNLP passes the model's vocabulary; the core does not import AllenNLP)."""

    def get_namespaces(self) -> Iterable[str]: ...

    def get_token_to_index_vocabulary(self, namespace: str) -> Dict[str, int]: ...

    def add_token_to_namespace(self, token: str, namespace: str) -> int: ...


# Names the pretrained biLM's parameters inside any model (`..._bilm.<...>`: `Elmo` and the
# `bilm` model hold their biLM as `_bilm`), for an initializer's `prevent_regexes`: a task's
# initializer regex can match them too (SRL's ".*_encoder.*weight" matches the biLM's
# `character_encoder`) and would silently replace the pretrained weights with random ones.
BILM_PARAMETERS_REGEX = r"(^|\.)_bilm\."


def load_bilm(
    options_file: PathName,
    weight_file: Optional[PathName],
    stateful: bool = False,
    char_cnn_cache_size: int = 50000,
    dropout: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
    known_options: Optional[Dict[str, Dict[str, Any]]] = None,
    vocab: Optional[OptionsRecord] = None,
    in_model: bool = False,
    execution: Union[str, Dict[str, Any], Execution] = Execution(),
) -> ElmoBiLm:
    """
    An `ElmoBiLm` of the size in `options_file` with the weights of `weight_file`.

    # Parameters

    options_file : `str` or `os.PathLike`
        bilm-tf `options.json`: a path, a URL or `elmo_plugin://...`; or a whole biLM, which
        brings its weights: a published biLM's short name, a folder or a ZIP archive
        (`elmo_plugin.elmo.formats.names`).
    weight_file : `str` or `os.PathLike`, optional
        bilm-tf `weights.hdf5`; random weights when not given with an options file.
    stateful, char_cnn_cache_size, dropout, compute_dtype :
        As `ElmoBiLm.from_options`.
    execution : `Execution` or its config, optional (default = `"auto"`)
        As `ElmoBiLm.from_options`; a config's value (`"auto"`, `{"fused": true}`) too.
    known_options : `Dict[str, Dict[str, Any]]`, optional
        The contents of `options.json` files by name, used instead of reading that file.
    vocab : `OptionsRecord`, optional
        A model's vocabulary: options recorded there for `options_file` are used before the file
        is read, and the options are recorded there (namespace `OPTIONS_NAMESPACE`).
    in_model : `bool`, optional (default = `False`)
        The biLM is part of a model, whose state dict (a trained archive's) may bring the
        weights and whose initializer runs after it is built: a missing `weight_file` is then an
        error only at a first forward pass that no state dict preceded, and weights changed
        between reading them and the first forward pass are an error (`WeightProvenance`).
    """
    execution = Execution.parse(execution)
    known_options = known_options or {}
    if options_file not in known_options:
        files = resolve_bilm(options_file, weight_file)
        if files.format == EFML:
            bilm = _load_efml(
                files, stateful, char_cnn_cache_size, dropout, compute_dtype, execution
            )
            if vocab is not None:  # so that its archive knows the folder it needs
                record_options(vocab, os.fspath(options_file), bilm.options())
            return bilm
        if files.format in (TF_CHECKPOINT, TF_HUB):
            load = load_checkpoint_bilm if files.format == TF_CHECKPOINT else load_hub_bilm
            return load(
                files.options_file, stateful, char_cnn_cache_size, dropout, compute_dtype, execution
            )
        name = os.fspath(options_file)
        if vocab is not None and _recorded_efml(vocab, name) and is_gone(files.options_file):
            raise efml_model_gone(name, "the biLM's options_file")
        options_file, weight_file = files.options_file, files.weight_file
    options = find_options(str(options_file), known_options, vocab)
    bilm = ElmoBiLm.from_options(
        options,
        stateful,
        char_cnn_cache_size,
        dropout,
        compute_dtype=compute_dtype,
        execution=execution,
    )
    if weight_file is not None:
        _read_weights(bilm, str(weight_file), in_model)
    return bilm


def _load_efml(
    files: BilmFiles,
    stateful: bool,
    char_cnn_cache_size: int,
    dropout: float,
    compute_dtype: torch.dtype,
    execution: Execution,
) -> ElmoBiLm:
    if dropout:
        raise ConfigurationError(
            f"{files.options_file}: an ELMoForManyLangs biLM has no dropout inside it (got "
            f"dropout={dropout}); leave it at 0"
        )
    return load_efml_bilm(
        files.options_file, stateful, char_cnn_cache_size, compute_dtype, execution
    )


def _read_weights(bilm: ElmoBiLm, weight_file: str, in_model: bool) -> None:
    missing: Optional[MissingFileError] = None
    try:
        read_weights(bilm, weight_file)
    except MissingFileError as error:
        if not in_model:
            raise
        missing = error  # a trained archive's state dict may still bring the weights
    if in_model:
        WeightProvenance(bilm, weight_file, missing)


def efml_model_gone(name: str, what: str) -> MissingFileError:
    """The error for the ELMoForManyLangs model folder `name`, which `what` names, when it is
    gone (`is_gone`), e.g. after a model trained with it was archived."""
    overrides = {
        "dataset_reader.token_indexers.elmo.model": "/new/place",
        "model.elmo.options_file": "/new/place",
    }
    return MissingFileError(
        f"{what} {name!r}: the ELMoForManyLangs model folder is not there (tried "
        f"{os.path.abspath(name)}). A model trained with it needs the folder at that path: its "
        "tables (char.dic, word.dic) index the text and its architecture JSON builds the biLM "
        "(the archive brings the weights). Put the folder back there, or name where it is now "
        f"for both the \"{EFML_INDEXER_NAME}\" indexer's model and the biLM's options_file, "
        f"e.g. allennlp predict/evaluate ... -o '{json.dumps(overrides)}' (an elmo token "
        "embedder's is model.text_field_embedder.token_embedders.elmo.options_file; a "
        "validation_dataset_reader's indexer too, where the config has one; in Python, "
        "load_archive(..., overrides=...))"
    )


def _recorded_efml(vocab: OptionsRecord, name: str) -> bool:
    """Whether `vocab` (a trained model's) recorded `name` as an ELMoForManyLangs model."""
    return EFML_OPTIONS_KEY in (recorded_options(vocab, name) or {})


def find_options(
    options_file: str, known_options: Dict[str, Dict[str, Any]], vocab: Optional[OptionsRecord]
) -> Dict[str, Any]:
    """The options of `options_file` (see `_options`), recorded in `vocab`."""
    options = _options(options_file, known_options, vocab)
    if vocab is not None:
        record_options(vocab, options_file, options)
    return options


def _options(
    options_file: str, known_options: Dict[str, Dict[str, Any]], vocab: Optional[OptionsRecord]
) -> Dict[str, Any]:
    """The options given inline, else those recorded in the model's vocabulary (its archive's),
    else the file's."""
    if options_file in known_options:
        return check_options(known_options[options_file], f"known_options[{options_file!r}]")
    recorded = recorded_options(vocab, options_file) if vocab is not None else None
    if recorded is not None:
        return check_options(recorded, f"the options recorded for {options_file!r}")
    return read_options(options_file)


def recorded_options(vocab: OptionsRecord, options_file: str) -> Optional[Dict[str, Any]]:
    """The options `record_options` kept in `vocab` for `options_file`, or None."""
    if OPTIONS_NAMESPACE not in vocab.get_namespaces():
        return None
    for token in vocab.get_token_to_index_vocabulary(OPTIONS_NAMESPACE):
        if not token.startswith("{"):
            continue  # the namespace's padding and unknown tokens
        try:
            record = json.loads(token)
        except json.JSONDecodeError as error:
            raise ConfigurationError(
                f"the vocabulary's namespace {OPTIONS_NAMESPACE!r} holds {token[:80]!r}, not "
                f"the JSON of a biLM's options ({error.msg}); is its file corrupt?"
            ) from error
        if record.get("options_file") == options_file:
            return record.get("options")
    return None


def record_options(vocab: OptionsRecord, options_file: str, options: Dict[str, Any]) -> None:
    """Keeps `options` for `options_file` in `vocab`, once per file name."""
    if recorded_options(vocab, options_file) is None:
        record = json.dumps({"options_file": options_file, "options": options}, sort_keys=True)
        vocab.add_token_to_namespace(record, OPTIONS_NAMESPACE)


class WeightProvenance:
    """
    Where the weights of a biLM inside a model come from, checked at its first forward pass
    (hooked into the biLM when built): from `weight_file` as it was read, or from a state dict
    loaded since (a trained archive's), which must bring them when the file is missing. A biLM
    whose weights changed between reading the file and the first forward pass is refused,
    naming the weights: a model initializer whose regexes match them (AllenNLP runs it after
    the modules are built) replaced the pretrained weights; see `BILM_PARAMETERS_REGEX`.

    # Parameters

    bilm : `ElmoBiLm`
        Hooked: its forward pre-hook checks, its state dict pre-hook forgets the file.
    weight_file : `str`
    missing : `MissingFileError`, optional
        Why `weight_file` could not be read, when it could not.
    """

    def __init__(
        self, bilm: ElmoBiLm, weight_file: str, missing: Optional[MissingFileError] = None
    ) -> None:
        self._weight_file = weight_file
        self._missing = missing
        # The weights as the file gave them, until the first forward pass or a state dict.
        self._loaded = bilm.weight_digests() if missing is None else {}
        self._check_hook = bilm.register_forward_pre_hook(self._check)
        bilm._register_load_state_dict_pre_hook(self._forget_the_file)

    def _check(self, bilm: ElmoBiLm, inputs: Tuple[Any, ...]) -> None:
        # Read once: threads sharing the biLM may run their first passes at once, and the
        # first to finish settles (empties) what the others are still checking against.
        missing, loaded = self._missing, self._loaded
        if missing is not None:
            raise ConfigurationError(
                f"{missing} No loaded model state brought the biLM weights either."
            )
        if not loaded:  # settled by another thread's first pass
            return
        changed = [name for name, digest in bilm.weight_digests().items() if loaded[name] != digest]
        self._settle()  # once: from here on training may change them
        if changed:
            raise ConfigurationError(
                f"the biLM's weights {', '.join(changed)} changed between loading "
                f"{self._weight_file} and ELMo's first forward pass: a model initializer whose "
                f"regexes match them replaced the pretrained weights (e.g. '.*_encoder.*weight' "
                f'matches the biLM\'s character_encoder). Add "prevent_regexes": '
                f'["{BILM_PARAMETERS_REGEX}"] to the model\'s initializer (in jsonnet: '
                "elmo.libsonnet's bilm_parameters_regex)"
            )

    def _forget_the_file(self, state_dict: Dict[str, Any], prefix: str, *args: Any) -> None:
        if any(key.startswith(prefix) for key in state_dict):
            self._settle()

    def _settle(self) -> None:
        self._missing, self._loaded = None, {}
        # Popped, which one thread at a time does: two removing the hook at once could both
        # find it in the module's hooks, and the second fail to delete it.
        hook = self.__dict__.pop("_check_hook", None)
        if hook is not None:
            hook.remove()
