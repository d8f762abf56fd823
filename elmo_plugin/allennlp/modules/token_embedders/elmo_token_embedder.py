import inspect
from typing import Any, Callable, Optional

import torch
from allennlp.modules.time_distributed import TimeDistributed
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder
from overrides import overrides

from elmo_plugin.elmo.modules.bilm_inputs import EFML_TABLES, EFML_TOKENS, ELMO_TOKENS
from elmo_plugin.elmo.modules.elmo import Elmo


@TokenEmbedder.register("elmo")
class ElmoTokenEmbedder(TokenEmbedder):
    """
    ELMo as a token embedder: takes the ids of AllenNLP's `elmo_characters` indexer (for a
    bilm-tf biLM) or of the `elmo_efml_characters` indexer (for an ELMoForManyLangs model) and
    returns the first ELMo representation, optionally projected.

    A model that uses ELMo at several places (its input and its output) takes an `Elmo`
    instead, whose one biLM run gives a representation for each.

    Registered as a `TokenEmbedder` with name "elmo".

    # Parameters

    options_file : `str`, optional
        As `Elmo`'s: bilm-tf `options.json` (ours, exported by `allennlp elmo-export`, or a
        published one), or a whole biLM with its weights, leaving out `weight_file`: a short
        name (`"original"`) or a folder (`elmo_plugin://pretrained/elmo_wikipedia_512x128`, the
        shipped biLM, an `elmo-export`, or an ELMoForManyLangs model, whose tokens the
        `elmo_efml_characters` indexer of the same model indexes).
    weight_file : `str`, optional
        As `Elmo`'s: bilm-tf `weights.hdf5`.
    projection_dim : `int`, optional
        A linear projection of the output to this size.
    **elmo_parameters :
        Every other parameter of `Elmo` (`elmo_plugin.elmo.Elmo`), by name, with its default:
        `num_output_representations` (the embedder returns the first), `requires_grad`,
        `dropout` (0.5), `activation_cache`, `compute_dtype`, `execution`, ... The constructor's
        signature shows them (`__signature__`), so configs and AllenNLP's `from_params` see
        each with its type; `vocab` is the model's vocabulary, which AllenNLP passes.
    """

    def __init__(
        self,
        options_file: Optional[str] = None,
        weight_file: Optional[str] = None,
        projection_dim: Optional[int] = None,
        **elmo_parameters: Any,
    ) -> None:
        super().__init__()
        self._elmo = Elmo(options_file, weight_file, **elmo_parameters)
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
        self,
        elmo_tokens: Optional[torch.Tensor] = None,
        word_inputs: Optional[torch.Tensor] = None,
        efml_tokens: Optional[torch.Tensor] = None,
        efml_tables: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """
        # Parameters

        elmo_tokens : `torch.Tensor`, optional
            `(batch_size, num_tokens, 50)` character ids of the `elmo_characters` indexer, for
            a bilm-tf biLM.
        word_inputs : `torch.Tensor`, optional
            Ignored; accepted so configs written for AllenNLP's embedder work unchanged.
        efml_tokens : `torch.Tensor`, optional
            `(batch_size, num_tokens, max_characters_per_token + 2)` ids of the
            `elmo_efml_characters` indexer, for an ELMoForManyLangs biLM.
        efml_tables : `torch.Tensor`, optional
            The digest of the tables that indexer read, which must be the biLM's.

        # Returns

        `(batch_size, num_tokens, output_dim)`.
        """
        indexed = {ELMO_TOKENS: elmo_tokens, EFML_TOKENS: efml_tokens, EFML_TABLES: efml_tables}
        ids = self._elmo.ids({key: value for key, value in indexed.items() if value is not None})
        representation = self._elmo(ids)["elmo_representations"][0]
        if self._projection is not None:
            representation = self._projection(representation)
        return representation


def _with_elmo_parameters(init: Callable[..., None]) -> inspect.Signature:
    """`init`'s signature with `Elmo`'s other parameters in place of `**elmo_parameters`, so
    that `from_params` (which reads the signature) builds and types each of them."""
    own = [p for p in inspect.signature(init).parameters.values() if p.kind != p.VAR_KEYWORD]
    taken = {parameter.name for parameter in own}
    elmo = [
        parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for parameter in inspect.signature(Elmo.__init__).parameters.values()
        if parameter.name not in taken
    ]
    return inspect.Signature(own + elmo, return_annotation=None)


setattr(
    ElmoTokenEmbedder.__init__,
    "__signature__",
    _with_elmo_parameters(ElmoTokenEmbedder.__init__),
)
