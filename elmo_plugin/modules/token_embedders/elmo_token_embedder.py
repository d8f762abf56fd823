from typing import Any, Dict, List, Optional, Union

import torch
from allennlp.data import Vocabulary
from allennlp.modules.time_distributed import TimeDistributed
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder
from overrides import overrides

from elmo_plugin.elmo.execution.settings import AUTO, Execution
from elmo_plugin.elmo.modules.activation_cache import ActivationCache
from elmo_plugin.elmo.modules.elmo import Elmo


@TokenEmbedder.register("elmo")
class ElmoTokenEmbedder(TokenEmbedder):
    """
    ELMo as a token embedder: takes the ids of AllenNLP's `elmo_characters` indexer and
    returns the first ELMo representation, optionally projected.

    A model that uses ELMo at several places (its input and its output) takes an `Elmo`
    instead, whose one biLM run gives a representation for each.

    Registered as a `TokenEmbedder` with name "elmo".

    # Parameters

    options_file : `str`, optional
        bilm-tf `options.json` (ours, exported by `allennlp elmo-export`, or a published one);
        `elmo_plugin://pretrained/elmo_wikipedia_512x128/options.json` is the shipped biLM.
    weight_file : `str`, optional
        bilm-tf `weights.hdf5`; random weights when not given. A missing file is fine when a
        model archive's state dict brings the weights (see `Elmo`).
    num_output_representations : `int`, optional (default = `1`)
        The mixes the `Elmo` inside makes; the embedder returns the first.
    requires_grad : `bool`, optional (default = `False`)
        Fine-tune the biLM with the task.
    do_layer_norm : `bool`, optional (default = `False`)
    dropout : `float`, optional (default = `0.5`)
    scalar_mix_parameters : `List[float]`, optional
        Fixed pre-softmax layer weights (then not trained).
    keep_sentence_boundaries : `bool`, optional (default = `False`)
    stateful : `bool`, optional (default = `False`)
    char_cnn_cache_size : `int`, optional (default = `50000`)
        The vocabulary cache of the character CNN: token types remembered while frozen.
    activation_cache : `ActivationCache`, optional
        Remember each sentence's biLM activations (frozen, stateless biLM only).
    projection_dim : `int`, optional
        A linear projection of the output to this size.
    known_options : `Dict[str, Dict[str, Any]]`, optional
        The contents of options files by name, read instead of the file `options_file` names,
        so that an archive travels without biLM files (see `Elmo`).
    compute_dtype : `str`, optional (default = `"float32"`)
        `"float32"` (exact) or `"bfloat16"`: the biLM's products in bfloat16, everything it
        returns float32 (see `Elmo`).
    vocab : `Vocabulary`, optional
        The model's vocabulary (AllenNLP passes it): the biLM's options are recorded in it,
        so the model's archive carries them (see `Elmo`).
    execution : `Execution` or its config, optional (default = `"auto"`)
        How the biLM runs (see `Elmo`), e.g. `{"cuda_graphs": true}`.
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
        projection_dim: Optional[int] = None,
        known_options: Optional[Dict[str, Dict[str, Any]]] = None,
        compute_dtype: str = "float32",
        vocab: Optional[Vocabulary] = None,
        execution: Union[str, Dict[str, Any], Execution] = AUTO,
    ) -> None:
        super().__init__()
        self._elmo = Elmo(
            options_file,
            weight_file,
            num_output_representations=num_output_representations,
            requires_grad=requires_grad,
            do_layer_norm=do_layer_norm,
            dropout=dropout,
            scalar_mix_parameters=scalar_mix_parameters,
            keep_sentence_boundaries=keep_sentence_boundaries,
            stateful=stateful,
            char_cnn_cache_size=char_cnn_cache_size,
            activation_cache=activation_cache,
            known_options=known_options,
            compute_dtype=compute_dtype,
            vocab=vocab,
            execution=execution,
        )
        self._projection = None
        self._output_dim = projection_dim or self._elmo.get_output_dim()
        if projection_dim:
            self._projection = TimeDistributed(
                torch.nn.Linear(self._elmo.get_output_dim(), projection_dim)
            )

    @property
    def elmo(self) -> Elmo:
        return self._elmo

    @overrides
    def get_output_dim(self) -> int:
        return self._output_dim

    @overrides(check_signature=False)
    def forward(
        self, elmo_tokens: torch.Tensor, word_inputs: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """
        # Parameters

        elmo_tokens : `torch.Tensor`
            `(batch_size, num_tokens, 50)` character ids.
        word_inputs : `torch.Tensor`, optional
            Ignored; accepted so configs written for AllenNLP's embedder work unchanged.

        # Returns

        `(batch_size, num_tokens, output_dim)`.
        """
        representation = self._elmo(elmo_tokens)["elmo_representations"][0]
        if self._projection is not None:
            representation = self._projection(representation)
        return representation
