"""
ELMo at the input and/or the output of a task model (Peters et al. 2018, section 3.3 and
Table 3), written once for every model that offers both places.
"""

from typing import Callable, NamedTuple, Optional

import torch
from allennlp.data import TextFieldTensors
from allennlp.nn.util import get_text_field_mask

from elmo_plugin.elmo import ELMO_INDEXER_KEY, Elmo
from elmo_plugin.elmo.errors import ConfigurationError


class PlacedElmo(NamedTuple):
    """What `ElmoPlaces` gives for one text field."""

    text: TextFieldTensors
    """The field for the `text_field_embedder`: every indexer's tensors but the ELMo ids."""
    input: Optional[torch.Tensor]
    """The representation to concatenate to the embeddings, None without `use_input_elmo`."""
    output: Optional[torch.Tensor]
    """The representation to concatenate at the output, None without `use_output_elmo`."""


class ElmoPlaces:
    """
    Runs a model's `Elmo` once per text field and hands out its representations by place:
    representation 0 is the input's and the next the output's, so the `Elmo` needs one
    `num_output_representations` per place switched on (checked here, once, at construction).

    The key `ELMO_INDEXER_KEY` is the model's `Elmo`'s, as in AllenNLP's BCN: the ids of the
    `elmo_characters` indexer under it (or of `elmo_efml_characters` for an ELMoForManyLangs
    biLM: `Elmo.ids` picks the biLM's) never reach the `text_field_embedder` (so a model
    without an `Elmo` also reads data indexed for ELMo). They are left out of a copy of the
    field, never out of the caller's dict: a batch stays whole for whoever reads it after the
    model (BCN puts the key back for the same reason).

    It holds the `Elmo` without registering it: the model keeps it as its own submodule, so
    parameter names (and archives) stay the model's.

    # Parameters

    model_name : `str`
        The registered name of the model, for error messages.
    elmo : `Elmo`, optional
    use_input_elmo : `bool`
    use_output_elmo : `bool`
    """

    def __init__(
        self, model_name: str, elmo: Optional[Elmo], use_input_elmo: bool, use_output_elmo: bool
    ) -> None:
        _check_places(model_name, elmo, use_input_elmo, use_output_elmo)
        self._model_name = model_name
        self._elmo = elmo
        # A place is switched on only with an `Elmo` (`_check_places`).
        self._elmo_dim = elmo.get_output_dim() if elmo is not None else 0
        self._use_input_elmo = use_input_elmo
        self._use_output_elmo = use_output_elmo

    @property
    def use_input_elmo(self) -> bool:
        return self._use_input_elmo

    @property
    def use_output_elmo(self) -> bool:
        return self._use_output_elmo

    @property
    def input_dim(self) -> int:
        """The size ELMo adds to the embeddings: the ELMo size with `use_input_elmo`, else 0."""
        return self._elmo_dim if self._use_input_elmo else 0

    @property
    def output_dim(self) -> int:
        """The size ELMo adds at the output: the ELMo size with `use_output_elmo`, else 0."""
        return self._elmo_dim if self._use_output_elmo else 0

    def __call__(
        self,
        text: TextFieldTensors,
        context: Optional[TextFieldTensors] = None,
        spans: Optional[torch.Tensor] = None,
        rows: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
    ) -> PlacedElmo:
        """
        ELMo of `text`, or with `context` and `spans`, ELMo of each `context` (e.g. a phrase's
        sentence) cut to the rows of its `(start, end)` span (inclusive, as a `SpanField`'s),
        which are the `text`'s tokens; rows past a span are zero. `rows` rearranges the ids
        before the biLM reads them (e.g. documents into their sentences).
        """
        other_indexers = {key: value for key, value in text.items() if key != ELMO_INDEXER_KEY}
        if self._elmo is None:
            return PlacedElmo(other_indexers, None, None)
        source = text if context is None else context
        if ELMO_INDEXER_KEY not in source:
            raise ConfigurationError(
                f"{self._model_name} has an elmo module but the text field has no "
                f'"{ELMO_INDEXER_KEY}" token indexer (an "elmo_characters" indexer under the key '
                f'"{ELMO_INDEXER_KEY}", or "elmo_efml_characters" for an ELMoForManyLangs biLM); '
                f"it has {sorted(source)}"
            )
        character_ids = self._elmo.ids(source[ELMO_INDEXER_KEY])
        if rows is not None:
            character_ids = rows(character_ids)
        if context is None:
            representations = iter(self._elmo(character_ids)["elmo_representations"])
        elif spans is None:
            raise ValueError(f"{self._model_name}: an ELMo context needs its spans")
        else:
            num_tokens = get_text_field_mask(text).size(1)
            representations = iter(
                self._elmo.span_representations(character_ids, spans, num_tokens)
            )
        input_elmo = next(representations) if self._use_input_elmo else None
        output_elmo = next(representations) if self._use_output_elmo else None
        return PlacedElmo(other_indexers, input_elmo, output_elmo)


def _check_places(
    model_name: str, elmo: Optional[Elmo], use_input_elmo: bool, use_output_elmo: bool
) -> None:
    num_places = int(use_input_elmo) + int(use_output_elmo)
    if elmo is None:
        if num_places:
            raise ConfigurationError(
                f"{model_name}: use_input_elmo/use_output_elmo need an `elmo` module"
            )
        return
    num_mixes = len(elmo.scalar_mixes)
    if num_mixes != num_places:
        raise ConfigurationError(
            f"{model_name}: elmo.num_output_representations is {num_mixes} but {num_places} "
            f"ELMo places (use_input_elmo={use_input_elmo}, use_output_elmo={use_output_elmo}) "
            f"are switched on; set num_output_representations to {num_places}"
        )
