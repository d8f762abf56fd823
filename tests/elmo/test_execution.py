"""One execution setting (`Execution`), reachable from a config and from `ElmoEmbedder`: each
choice runs and gives the default's numbers on the CPU, and choices that cannot run together
are refused with every reason."""

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo import ConfigurationError, Execution
from elmo_plugin.allennlp.modules import ElmoTokenEmbedder

SHIPPED = "elmo_plugin://pretrained/elmo_wikipedia_512x128"
SENTENCES = [["The", "cat", "sat", "."], ["A", "dog", "barked", "at", "the", "cat", "."], ["Hi"]]


@pytest.fixture(scope="module")
def default_vectors():
    return ElmoEmbedder().embed_batch(SENTENCES)


SETTINGS = [
    {"fused": True},
    {"fused": True, "sorted_inference": True},
    {"fused": True, "sorted_inference": False},
    {"deduplicates": False},
    {"fused": False},
    # "auto" serves a CPU and a GPU with one config (CUDA graphs where the input is on CUDA),
    # and tf32 is a permission with nothing to permit elsewhere.
    {"cuda_graphs": "auto"},
    {"fused": True, "cuda_graphs": "auto"},
    {"tf32": True},
]


@pytest.mark.parametrize(
    "setting", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items())
)
def test_each_setting_from_elmo_embedder_gives_the_defaults_numbers(setting, default_vectors):
    embedder = ElmoEmbedder(execution=setting)
    assert embedder.elmo_bilm.execution == Execution.resolve(setting)
    assert embedder.elmo_bilm.character_encoder.deduplicates == setting.get("deduplicates", True)
    for expected, actual in zip(default_vectors, embedder.embed_batch(SENTENCES)):
        np_close = abs(expected - actual).max()
        assert np_close < 1e-5


def test_the_setting_reaches_the_bilm_from_a_jsonnet_config():
    params = Params(
        {
            "type": "elmo",
            "options_file": f"{SHIPPED}/options.json",
            "weight_file": f"{SHIPPED}/weights.hdf5",
            "execution": {"fused": True, "deduplicates": False},
        }
    )
    embedder = TokenEmbedder.from_params(params)
    assert isinstance(embedder, ElmoTokenEmbedder)
    bilm = embedder.elmo.bilm
    assert bilm.execution == Execution(fused=True, deduplicates=False, compute_dtype="float32")
    assert bilm.lstm.runs_fused(torch.zeros(1))
    assert not bilm.character_encoder.deduplicates


def test_auto_is_the_default_and_chooses_by_device():
    assert Execution.parse("auto") == Execution.parse(None) == Execution()
    assert not Execution().runs_fused(torch.device("cpu"))
    assert Execution().runs_fused(torch.device("cuda"))


def test_choices_that_cannot_run_together_are_refused_with_every_reason():
    with pytest.raises(ConfigurationError) as error:
        ElmoEmbedder(execution={"fused": False, "cuda_graphs": True, "sorted_inference": True})
    message = str(error.value)
    assert "cannot run: (1) cuda_graphs" in message
    assert "(2) sorted_inference is a mode of the fused path" in message
    assert "(3) sorted_inference runs outside CUDA graphs" in message


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"fast": True}, "execution has no key 'fast'; its keys are fused, cuda_graphs"),
        ({"tf32": "yes"}, "execution.tf32 must be true or false, got 'yes'"),
        ({"deduplicates": None}, "execution.deduplicates must be true or false, got None"),
        ({"cuda_graphs": "yes"}, "execution.cuda_graphs must be true or false or null/'auto'"),
        ({"compute_dtype": "float16"}, "execution.compute_dtype must be one of"),
        ("quick", 'execution must be "auto" or an object'),
    ],
)
def test_a_wrong_setting_names_the_key_and_what_is_expected(value, expected):
    with pytest.raises(ConfigurationError, match=expected):
        Execution.parse(value)


def test_tf32_is_on_inside_the_bilms_forward_pass_only():
    embedder = ElmoEmbedder(execution={"tf32": True})
    seen = []
    embedder.elmo_bilm.lstm.register_forward_hook(
        lambda *_: seen.append(torch.backends.cuda.matmul.allow_tf32)
    )
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        embedder.embed_sentence(["Hello"])
        assert seen == [True]
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (
            False,
            False,
        )
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_an_execution_built_directly_is_checked_as_a_config_is():
    """`Execution(fused="false")` was taken, and a non-empty string is true: fused."""
    with pytest.raises(ConfigurationError, match="execution.fused must be true or false or null"):
        Execution(fused="false")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="execution.deduplicates must be true or false"):
        Execution(deduplicates=1)  # type: ignore[arg-type]


def test_load_bilm_takes_an_execution_config_as_the_other_entry_points_do(
    elmo_options, elmo_weights
):
    from elmo_plugin.elmo import load_bilm

    assert load_bilm(elmo_options, elmo_weights, execution={"fused": True}).execution.fused
    auto = load_bilm(elmo_options, elmo_weights, execution="auto").execution
    assert auto == Execution(compute_dtype="float32")
    with pytest.raises(ConfigurationError, match="execution has no key 'fast'"):
        load_bilm(elmo_options, elmo_weights, execution={"fast": True})
