"""
Where the weights of a biLM inside a model come from, checked at its first forward pass: the
weight file as read, or a state dict loaded since (a trained archive's). A model initializer
can otherwise replace the pretrained weights silently.
"""

from typing import Any, Dict, Optional, Tuple

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.bilm_tf import read_weights

# Names the pretrained biLM's parameters inside any model (`..._bilm.<...>`: `Elmo` and the
# `bilm` model hold their biLM as `_bilm`), for an initializer's `prevent_regexes`: a task's
# initializer regex can match them too (SRL's ".*_encoder.*weight" matches the biLM's
# `character_encoder`) and would silently replace the pretrained weights with random ones.
BILM_PARAMETERS_REGEX = r"(^|\.)_bilm\."


def read_weights_in_model(bilm: ElmoBiLm, weight_file: str, in_model: bool) -> None:
    """Reads `weight_file` into `bilm`; for a biLM inside a model (`in_model`), a missing file
    is left to a state dict to bring, and where the weights came from is checked at the first
    forward pass (`WeightProvenance`)."""
    missing: Optional[MissingFileError] = None
    try:
        read_weights(bilm, weight_file)
    except MissingFileError as error:
        if not in_model:
            raise
        missing = error  # a trained archive's state dict may still bring the weights
    if in_model:
        WeightProvenance(bilm, weight_file, missing)


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
