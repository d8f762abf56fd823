from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple, Union, cast

import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import AUTO, Execution
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.options_record import OptionsRecord
from elmo_plugin.elmo.modules.activation_cache import ActivationCache
from elmo_plugin.elmo.modules.bilm_inputs import EFML_TABLES, bilm_ids, check_tables
from elmo_plugin.elmo.modules.cached_bilm import CachedBiLm
from elmo_plugin.elmo.modules.scalar_mix import ScalarMix

__all__ = ["ELMO_INDEXER_KEY", "Elmo", "LAYER_WEIGHTS_REGEX"]

# The text field key of the `elmo_characters` indexer (the readers and configs name it so):
# models that read the character ids themselves find them under it.
ELMO_INDEXER_KEY = "elmo"

# Names the pre-softmax layer weights of every scalar mix (`..._scalar_mixes.<i>.
# scalar_parameters`), e.g. for AllenNLP's `regularizer`: it follows `Elmo._scalar_mixes` and
# `ScalarMix.scalar_parameters`, so whoever renames those changes it (a test checks it matches).
LAYER_WEIGHTS_REGEX = ".*scalar_mixes.*scalar_parameters"


class Elmo(torch.nn.Module):
    """
    ELMo representations (Peters et al. 2018): one biLM run, mixed into
    `num_output_representations` task-specific combinations of its layers, e.g. one for the
    input and one for the output of a task model.

    Build it in a config wherever a model takes an `Elmo`; the `elmo` token embedder wraps it
    for use in a `TextFieldEmbedder`. Its biLM comes from `load_bilm` (the options, the
    weights and their provenance), behind a `CachedBiLm` when it has an `activation_cache`;
    `Elmo` itself takes the inputs and makes the mixes.

    # Parameters

    options_file : `str`, optional
        bilm-tf `options.json`: a path, a URL, or `elmo_plugin://pretrained/...` for the shipped
        biLM (from any working directory); or a whole biLM, whose weights come with it (leave
        out `weight_file`): a published biLM's short name, e.g. `"original"`, a folder
        holding one or a ZIP of one, read in place (`elmo_plugin.elmo.formats.naming.names`).
    weight_file : `str`, optional
        bilm-tf `weights.hdf5`; random weights when not given (for tests and pretraining).
        When the file is missing, the weights must come from a loaded state dict (a trained
        model archive, which holds them), else the first forward pass raises. So does a biLM
        whose weights changed between loading them and the first forward pass, which is what
        a model initializer with a regex matching the biLM's parameters does (AllenNLP runs it
        after the modules are built): see `formats.weight_provenance.BILM_PARAMETERS_REGEX`.
    known_options : `Dict[str, Dict[str, Any]]`, optional
        The contents of bilm-tf `options.json` files by name: when `options_file` is one of
        these names, its contents come from here and no file is read. A trained model archive
        (its `config.json`) then carries the biLM's sizes and loads with no biLM file at all;
        an override of `options_file` to another name simply reads that file. The `elmo`
        config block gives the shipped biLM's options so.
    vocab : `OptionsRecord`, optional
        The model's vocabulary (an AllenNLP `Vocabulary`), which AllenNLP passes when it builds
        the model from a config:
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
        `stateful: false`); a cache or its config block (`ActivationCache`'s arguments).
    compute_dtype : `str`, optional (default = `"float32"`)
        The same as `execution.compute_dtype` (either way, or both if they agree):
        `"float32"` is exact; `"bfloat16"` runs the biLM's matrix products and convolutions in
        bfloat16 on weights cast once per batch (kept while frozen), with float32 gate math,
        states, outputs and trainable weights: layers within ~1e-2 relative of float32 (see
        `elmo_plugin.elmo.execution.compute_dtype`).
    execution : `Execution` or its config, optional (default = `"auto"`)
        How the biLM runs: its compute dtype, LSTM path, CUDA graphs, sorted inference, the
        character CNN's deduplication and TF32 (`elmo_plugin.elmo.execution.settings`);
        `"auto"` chooses by device.
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
        activation_cache: Optional[Union[ActivationCache, Dict[str, Any]]] = None,
        known_options: Optional[Dict[str, Dict[str, Any]]] = None,
        compute_dtype: Optional[str] = None,
        vocab: Optional[OptionsRecord] = None,
        execution: Union[str, Dict[str, Any], Execution] = AUTO,
    ) -> None:
        super().__init__()
        if num_output_representations < 1:
            raise ConfigurationError(
                f"num_output_representations must be at least 1, got {num_output_representations}"
            )
        if options_file is None:
            raise ConfigurationError("Elmo needs an options_file")
        setting = Execution.resolve(execution, compute_dtype)
        bilm = load_bilm(
            options_file,
            weight_file,
            stateful,
            char_cnn_cache_size,
            compute_dtype=setting.dtype,
            known_options=known_options,
            vocab=vocab,
            in_model=True,
            execution=setting,
        )
        bilm.requires_grad_(requires_grad)
        self._bilm = bilm
        self._bilm_name = str(options_file)
        # The modes (training or not) whose first batch had its EFML tables checked.
        self._tables_checked: Set[bool] = set()
        # What `forward` runs: the biLM, or the cache in front of it. Not a submodule, so that
        # the biLM's parameters keep the names trained archives hold (`_bilm.*`).
        self._run_bilm: Callable[[torch.Tensor], Dict[str, Any]] = (
            bilm.__call__
            if activation_cache is None
            else CachedBiLm(bilm, ActivationCache.from_config(activation_cache))
        )
        self._keep_sentence_boundaries = keep_sentence_boundaries
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

    def ids(self, indexed: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """
        What `forward` takes, from one token indexer's tensors (a text field's under its ELMo
        key): the ids this biLM's format reads (`bilm_inputs`), refused when they are the other
        format's. Ids of another ELMoForManyLangs model's tables are refused at the first batch
        of training and the first of evaluation (their readers may differ).
        """
        ids = bilm_ids(self._bilm, indexed, self._bilm_name)
        tables = indexed.get(EFML_TABLES)
        if tables is not None and self.training not in self._tables_checked:
            check_tables(self._bilm, tables, self._bilm_name)
            self._tables_checked.add(self.training)
        return ids

    def forward(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        """
        # Parameters

        character_ids : `torch.Tensor`
            `(batch_size, num_tokens, 50)` ids from the `elmo_characters` indexer, or
            `(batch_size, ..., num_tokens, 50)` (e.g. passages of sentences), as AllenNLP's
            `Elmo` accepts; the outputs then keep the leading dimensions. An ELMoForManyLangs
            biLM's are its own (`ids` picks either from an indexer's tensors).

        # Returns

        `{"elmo_representations": [(batch_size, num_tokens, dim)] * num_output_representations,
        "mask": (batch_size, num_tokens)}` (two more positions with `keep_sentence_boundaries`).
        """
        if character_ids.dim() > 3:
            return self._forward_nested(character_ids)
        output = self._run_bilm(character_ids)
        activations, mask = output["activations"], output["mask"]
        representations = []
        for scalar_mix in self._scalar_mixes:
            mixed = scalar_mix(activations, mask)
            if not self._keep_sentence_boundaries:
                mixed, mixed_mask = remove_sentence_boundaries(mixed, mask)
            representations.append(mixed)
        if not self._keep_sentence_boundaries:
            mask = mixed_mask
        return {"elmo_representations": representations, "mask": mask}

    def span_representations(
        self, character_ids: torch.Tensor, spans: torch.Tensor, num_rows: int
    ) -> List[torch.Tensor]:
        """
        The representations of one span of each sentence: `forward`'s
        `elmo_representations`, each cut to the `num_rows` rows from its span's start, zero
        past the span's (inclusive) end, `(batch_size, num_rows, dim)`.

        The layers are cut before they are mixed: a sentence's representation costs its span's
        rows, not its length, in the mix and in its backward pass (e.g. SST's training phrases,
        4 words on average, each in its sentence of 19). A layer-normalising mix takes its
        statistics over whole sentences, so with `do_layer_norm` the sentences are mixed first.

        # Parameters

        character_ids : `torch.Tensor`
            `(batch_size, num_tokens, 50)`, as for `forward`.
        spans : `torch.Tensor`
            `(batch_size, 2)` start and end token of each span, inclusive (a `SpanField`'s).
        num_rows : `int`
            How many rows each representation has (at least the longest span).
        """
        if any(mix.do_layer_norm for mix in self.scalar_mixes):
            # With `keep_sentence_boundaries` the representations start with `<S>`.
            shifted = spans + int(self._keep_sentence_boundaries)
            return [
                span_rows(r, shifted, num_rows)
                for r in self.forward(character_ids)["elmo_representations"]
            ]
        activations = self._run_bilm(character_ids)["activations"]
        # The activations start with `<S>`: token i is row i + 1.
        layers = [span_rows(layer, spans + 1, num_rows) for layer in activations]
        return [scalar_mix(layers) for scalar_mix in self._scalar_mixes]

    def _forward_nested(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        leading = character_ids.shape[:-2]
        output = self.forward(character_ids.reshape(-1, *character_ids.shape[-2:]))
        return {
            "elmo_representations": [
                r.view(*leading, *r.shape[1:]) for r in output["elmo_representations"]
            ],
            "mask": output["mask"].view(*leading, -1),
        }


def span_rows(sequence: torch.Tensor, spans: torch.Tensor, num_rows: int) -> torch.Tensor:
    """
    The rows of each `(batch_size, length, dim)` `sequence` from its span's start, `num_rows`
    of them, zero past the span's end (inclusive): `(batch_size, num_rows, dim)`.
    """
    starts, ends = spans[:, :1], spans[:, 1:]
    positions = starts + torch.arange(num_rows, device=spans.device).unsqueeze(0)
    inside = positions <= ends
    indices = positions.clamp(max=sequence.size(1) - 1)
    rows = sequence.gather(1, indices.unsqueeze(-1).expand(-1, -1, sequence.size(-1)))
    return rows * inside.unsqueeze(-1).to(rows.dtype)


def remove_sentence_boundaries(
    sequence: torch.Tensor, mask: torch.Tensor
) -> Tuple[torch.Tensor, torch.Tensor]:
    """`(batch, length, dim)` rows without each sentence's first (`<S>`) and last (`</S>`)
    position, `(batch, length - 2, dim)` zero past each sentence, and their mask: AllenNLP's
    `remove_sentence_boundaries`, the same numbers, with no read of the lengths to the host."""
    new_mask = mask[:, 2:]
    inner = sequence[:, 1:-1].masked_fill(~new_mask.unsqueeze(-1), 0.0)
    return inner, new_mask
