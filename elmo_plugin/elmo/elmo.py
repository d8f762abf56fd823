import json
from typing import Any, Dict, List, Optional, Tuple, cast

import torch
from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.nn.util import remove_sentence_boundaries
from overrides import overrides

from elmo_plugin.elmo.activation_cache import ActivationCache
from elmo_plugin.elmo.bilm import ElmoBiLm
from elmo_plugin.elmo.bilm_tf_format import check_options, read_options, read_weights
from elmo_plugin.elmo.compute_dtype import parse_compute_dtype
from elmo_plugin.elmo.package_files import MissingFileError
from elmo_plugin.elmo.scalar_mix import ScalarMix

# The text field key of the `elmo_characters` indexer (the readers and configs name it so):
# models that read the character ids themselves find them under it.
ELMO_INDEXER_KEY = "elmo"

# Names the pre-softmax layer weights of every scalar mix (`..._scalar_mixes.<i>.
# scalar_parameters`), e.g. for AllenNLP's `regularizer`: it follows `Elmo._scalar_mixes` and
# `ScalarMix.scalar_parameters`, so whoever renames those changes it (a test checks it matches).
LAYER_WEIGHTS_REGEX = ".*scalar_mixes.*scalar_parameters"

# Names the pretrained biLM's parameters inside any model (`..._bilm.<...>`, following
# `Elmo._bilm`), for an initializer's `prevent_regexes`: a task's initializer regex can match
# them too (SRL's ".*_encoder.*weight" matches the biLM's `character_encoder`) and would
# silently replace the pretrained weights with random ones.
BILM_PARAMETERS_REGEX = r"(^|\.)_bilm\."

# The vocabulary namespace where an `Elmo` built with the model's vocabulary records the options
# of its biLM, one JSON token `{"options_file": name, "options": {...}}` per file name: AllenNLP
# saves the vocabulary into the model's archive, so the archive carries the biLM's sizes.
OPTIONS_NAMESPACE = "elmo_bilm_options"


class Elmo(torch.nn.Module, FromParams):
    """
    ELMo representations (Peters et al. 2018): one biLM run, mixed into
    `num_output_representations` task-specific combinations of its layers, e.g. one for the
    input and one for the output of a task model.

    Build it in a config wherever a model takes an `Elmo`; the `elmo` token embedder wraps it
    for use in a `TextFieldEmbedder`.

    # Parameters

    options_file : `str`, optional
        bilm-tf `options.json`: a path, a URL, or `elmo_plugin://pretrained/...` for the shipped
        biLM (from any working directory).
    weight_file : `str`, optional
        bilm-tf `weights.hdf5`; random weights when not given (for tests and pretraining).
        When the file is missing, the weights must come from a loaded state dict (a trained
        model archive, which holds them), else the first forward pass raises. So does a biLM
        whose weights changed between loading them and the first forward pass, which is what
        a model initializer with a regex matching the biLM's parameters does (AllenNLP runs it
        after the modules are built): see `BILM_PARAMETERS_REGEX`.
    known_options : `Dict[str, Dict[str, Any]]`, optional
        The contents of bilm-tf `options.json` files by name: when `options_file` is one of
        these names, its contents come from here and no file is read. A trained model archive
        (its `config.json`) then carries the biLM's sizes and loads with no biLM file at all;
        an override of `options_file` to another name simply reads that file. The `elmo`
        config block gives the shipped biLM's options so.
    vocab : `Vocabulary`, optional
        The model's vocabulary, which AllenNLP passes when it builds the model from a config:
        the biLM's options are recorded in it (namespace `elmo_bilm_options`, saved in the
        model's archive), and options recorded there for `options_file` are used before the
        file is read. So every archive carries the options of the biLM it was trained with
        and loads after the biLM files are gone, with no `known_options` written by hand.
    num_output_representations : `int`, optional (default = `1`)
    requires_grad : `bool`, optional (default = `False`)
        Fine-tune the biLM with the task.
    do_layer_norm : `bool`, optional (default = `False`)
    dropout : `float`, optional (default = `0.5`)
        Dropout on each mixed representation.
    scalar_mix_parameters : `List[float]`, optional
        Fixed pre-softmax layer weights, e.g. `[-9e10, -9e10, 1]` for the top layer only; the
        weights and gamma are then not trained.
    keep_sentence_boundaries : `bool`, optional (default = `False`)
        Keep the `<S>` and `</S>` positions in the output.
    stateful : `bool`, optional (default = `False`)
        Carry LSTM states from each batch row to the same row of the next batch.
    char_cnn_cache_size : `int`, optional (default = `50000`)
        Token types whose character-CNN encodings are remembered while the biLM is frozen.
    activation_cache : `ActivationCache`, optional
        Remember the frozen biLM's activations per sentence (needs `requires_grad: false` and
        `stateful: false`).
    compute_dtype : `str`, optional (default = `"float32"`)
        `"float32"` is exact; `"bfloat16"` runs the biLM's matrix products and convolutions in
        bfloat16 on weights cast once per batch (kept while frozen), with float32 gate math,
        states, outputs and trainable weights: layers within ~1e-2 relative of float32 (see
        `elmo_plugin.elmo.compute_dtype`).
    """

    def __init__(
        self,
        options_file: Optional[str] = None,
        weight_file: Optional[str] = None,
        num_output_representations: int = 1,
        requires_grad: bool = False,
        do_layer_norm: bool = False,
        dropout: float = 0.5,
        scalar_mix_parameters: Optional[List[float]] = None,
        keep_sentence_boundaries: bool = False,
        stateful: bool = False,
        char_cnn_cache_size: int = 50000,
        activation_cache: Optional[ActivationCache] = None,
        known_options: Optional[Dict[str, Dict[str, Any]]] = None,
        compute_dtype: str = "float32",
        vocab: Optional[Vocabulary] = None,
    ) -> None:
        super().__init__()
        if num_output_representations < 1:
            raise ConfigurationError(
                f"num_output_representations must be at least 1, got {num_output_representations}"
            )
        self._missing_weights: Optional[MissingFileError] = None
        options = _options(options_file, known_options or {}, vocab)
        if vocab is not None:
            record_options(vocab, cast(str, options_file), options)
        bilm = ElmoBiLm.from_options(
            options,
            stateful,
            char_cnn_cache_size,
            compute_dtype=parse_compute_dtype(compute_dtype),
        )
        if weight_file is not None:
            try:
                read_weights(bilm, weight_file)
            except MissingFileError as error:
                # A trained archive's state dict may still bring the weights.
                self._missing_weights = error
        for parameter in bilm.parameters():
            parameter.requires_grad_(requires_grad)
        if activation_cache is not None and (requires_grad or stateful):
            raise ConfigurationError(
                "activation_cache needs a frozen, stateless biLM (requires_grad: false, "
                "stateful: false); to fine-tune the biLM or carry states, drop the cache too "
                "(the elmo block's embedder(requires_grad=true), or the override "
                "'<path to the elmo module>.activation_cache': null)"
            )
        self._bilm = bilm
        self._weight_file = weight_file
        # The weights as the file gave them, until the first forward pass or a state dict.
        self._loaded_weights: Optional[Dict[str, bytes]] = (
            bilm.weight_digests()
            if weight_file is not None and self._missing_weights is None
            else None
        )
        self._keep_sentence_boundaries = keep_sentence_boundaries
        self._activation_cache = activation_cache
        self._bilm_digest: Optional[bytes] = None
        self._scalar_mixes = torch.nn.ModuleList(
            ScalarMix(
                bilm.num_layers,
                do_layer_norm=do_layer_norm,
                initial_scalar_parameters=scalar_mix_parameters,
                trainable=scalar_mix_parameters is None,
                dropout=dropout,
            )
            for _ in range(num_output_representations)
        )

    @property
    def bilm(self) -> ElmoBiLm:
        return self._bilm

    @property
    def scalar_mixes(self) -> List[ScalarMix]:
        # A `ModuleList` yields plain `Module`s to the checker; these are the `ScalarMix`es.
        return cast(List[ScalarMix], list(self._scalar_mixes))

    def get_output_dim(self) -> int:
        return self._bilm.get_output_dim()

    def reset_states(self) -> None:
        self._bilm.reset_states()

    @overrides
    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        # New weights are another biLM as far as the activation cache is concerned.
        self._bilm_digest = None
        if any(key.startswith(prefix + "_bilm.") for key in state_dict):
            self._missing_weights = None
            self._loaded_weights = None

    def forward(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        """
        # Parameters

        character_ids : `torch.Tensor`
            `(batch_size, num_tokens, 50)` ids from the `elmo_characters` indexer, or
            `(batch_size, ..., num_tokens, 50)` (e.g. passages of sentences), as AllenNLP's
            `Elmo` accepts; the outputs then keep the leading dimensions.

        # Returns

        `{"elmo_representations": [(batch_size, num_tokens, dim)] * num_output_representations,
        "mask": (batch_size, num_tokens)}` (two more positions with `keep_sentence_boundaries`).
        """
        if self._missing_weights is not None:
            raise ConfigurationError(
                f"{self._missing_weights} No loaded model state brought the biLM weights either."
            )
        if self._loaded_weights is not None:
            self._check_weights_as_loaded(self._loaded_weights)
        if character_ids.dim() > 3:
            return self._forward_nested(character_ids)
        if self._activation_cache is not None:
            activations, mask = self._cached_activations(character_ids, self._activation_cache)
        else:
            output = self._bilm(character_ids)
            activations, mask = output["activations"], output["mask"]
        representations = []
        for scalar_mix in self._scalar_mixes:
            mixed = scalar_mix(activations, mask)
            if not self._keep_sentence_boundaries:
                mixed, mixed_mask = remove_sentence_boundaries(
                    mixed, cast(torch.BoolTensor, mask)  # a bool tensor, typed Tensor by torch
                )
            representations.append(mixed)
        if not self._keep_sentence_boundaries:
            mask = mixed_mask
        return {"elmo_representations": representations, "mask": mask}

    def _check_weights_as_loaded(self, loaded: Dict[str, bytes]) -> None:
        self._loaded_weights = None  # once: from here on training may change them
        changed = [
            name for name, digest in self._bilm.weight_digests().items() if loaded[name] != digest
        ]
        if changed:
            raise ConfigurationError(
                f"the biLM's weights {', '.join(changed)} changed between loading "
                f"{self._weight_file} and ELMo's first forward pass: a model initializer whose "
                f"regexes match them replaced the pretrained weights (e.g. '.*_encoder.*weight' "
                f'matches the biLM\'s character_encoder). Add "prevent_regexes": '
                f'["{BILM_PARAMETERS_REGEX}"] to the model\'s initializer (in jsonnet: '
                "elmo.libsonnet's bilm_parameters_regex)"
            )

    def _forward_nested(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        leading = character_ids.shape[:-2]
        output = self.forward(character_ids.reshape(-1, *character_ids.shape[-2:]))
        return {
            "elmo_representations": [
                r.view(*leading, *r.shape[1:]) for r in output["elmo_representations"]
            ],
            "mask": output["mask"].view(*leading, -1),
        }

    def _cached_activations(
        self, character_ids: torch.Tensor, cache: ActivationCache
    ) -> Tuple[List[torch.Tensor], torch.Tensor]:
        if self._bilm_digest is None:
            self._bilm_digest = self._bilm.digest()
        cache.bind(self._bilm_digest)
        lengths = (character_ids > 0).any(dim=-1).sum(dim=1).tolist()
        keys = [
            character_ids[row, :length].to(torch.int16).cpu().numpy().tobytes()
            for row, length in enumerate(lengths)
        ]
        found = [self._checked(cache.get(key), length) for key, length in zip(keys, lengths)]
        missing = [row for row, value in enumerate(found) if value is None]
        if missing:
            longest = max(lengths[row] for row in missing)
            computed = self._bilm(character_ids[missing, :longest])
            stacked = torch.stack(computed["activations"])
            for i, row in enumerate(missing):
                value = stacked[:, i, : lengths[row] + 2]
                found[row] = value
                cache.put(keys[row], value)
        # Every row is found now: from the cache or just computed.
        return self._pad_activations(cast(List[torch.Tensor], found), lengths, character_ids)

    def _checked(self, value: Optional[torch.Tensor], length: int) -> Optional[torch.Tensor]:
        expected = (self._bilm.num_layers, length + 2, self.get_output_dim())
        if value is not None and tuple(value.shape) != expected:
            raise ConfigurationError(
                f"an activation cache entry has shape {tuple(value.shape)} but this biLM gives "
                f"{expected}; is the cache corrupt? delete its directory to start afresh"
            )
        return value

    def _pad_activations(
        self, per_sentence: List[torch.Tensor], lengths: List[int], like: torch.Tensor
    ) -> Tuple[List[torch.Tensor], torch.Tensor]:
        batch_size, num_tokens = like.shape[:2]
        num_layers = self._bilm.num_layers
        padded = torch.zeros(
            num_layers, batch_size, num_tokens + 2, self.get_output_dim(), device=like.device
        )
        for row, value in enumerate(per_sentence):
            padded[:, row, : value.size(1)] = value.to(device=like.device, dtype=padded.dtype)
        positions = torch.arange(num_tokens + 2, device=like.device)
        mask = positions.unsqueeze(0) < (torch.tensor(lengths, device=like.device) + 2).unsqueeze(1)
        return list(padded.unbind(0)), mask


def _options(
    options_file: Optional[str],
    known_options: Dict[str, Dict[str, Any]],
    vocab: Optional[Vocabulary],
) -> Dict:
    """The options given inline, else those recorded in the model's vocabulary (its archive's),
    else the file's."""
    if options_file is None:
        raise ConfigurationError("Elmo needs an options_file")
    if options_file in known_options:
        return check_options(known_options[options_file], f"known_options[{options_file!r}]")
    recorded = recorded_options(vocab, options_file) if vocab is not None else None
    if recorded is not None:
        return check_options(recorded, f"the options recorded for {options_file!r}")
    return read_options(options_file)


def recorded_options(vocab: Vocabulary, options_file: str) -> Optional[Dict[str, Any]]:
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


def record_options(vocab: Vocabulary, options_file: str, options: Dict[str, Any]) -> None:
    """Keeps `options` for `options_file` in `vocab`, once per file name."""
    if recorded_options(vocab, options_file) is None:
        record = json.dumps({"options_file": options_file, "options": options}, sort_keys=True)
        vocab.add_token_to_namespace(record, OPTIONS_NAMESPACE)
