"""
An ELMoForManyLangs (EFML) model in the AllenNLP plugin: the `elmo_efml_characters` indexer
makes the model's own ids, the `elmo` embedder reads them (and refuses the other format's
indexer, and another EFML model's tables, naming both), frozen or fine-tuned, and each fast
path of the embedder either gives the plain path's vectors or is refused naming the option.
The core's EFML biLM alone: tests/elmo/test_efml_format.py.
"""

import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple, cast

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Instance, Token, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, TokenIndexer
from allennlp.modules.text_field_embedders import TextFieldEmbedder
from allennlp.modules.token_embedders import TokenEmbedder

import elmo_plugin.allennlp.modules  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from elmo_plugin.elmo.formats.efml.token_encoder import EfmlTokenEncoder
from elmo_plugin.elmo.formats.naming.package_files import SHIPPED_BILM
from elmo_plugin.allennlp.modules import ElmoTokenEmbedder
from tests.paths import FIXTURES

MODEL = str(FIXTURES / "efml" / "model")
# Unseen characters and words, an empty token and one past the model's token length.
SENTENCES = [["the", "city", "of", "мама"], ["Zwölf", "", "x" * 70], ["one"]]
INDEXER = {"type": "elmo_efml_characters", "model": MODEL}


def embedder(**parameters: Any) -> ElmoTokenEmbedder:
    config = {"type": "elmo", "options_file": MODEL, "dropout": 0.0, **parameters}
    return cast(ElmoTokenEmbedder, TokenEmbedder.from_params(Params(config)))


def efml_parts(elmo: ElmoTokenEmbedder) -> Tuple[EfmlBiLm, EfmlTokenEncoder]:
    """The embedder's EFML biLM and its token layer."""
    bilm = elmo.elmo.bilm
    assert isinstance(bilm, EfmlBiLm)
    return bilm, cast(EfmlTokenEncoder, bilm.character_encoder)


def indexed(sentences: List[List[str]], indexer: TokenIndexer) -> Dict[str, torch.Tensor]:
    """The text field tensors of `sentences` under the key `elmo`, as a data loader makes
    them."""
    instances = [
        Instance({"tokens": TextField([Token(t) for t in s], {"elmo": indexer})}) for s in sentences
    ]
    batch = Batch(instances)
    batch.index_instances(Vocabulary())
    return cast(Dict[str, Dict[str, torch.Tensor]], batch.as_tensor_dict()["tokens"])["elmo"]


def efml_inputs(sentences: List[List[str]] = SENTENCES) -> Dict[str, torch.Tensor]:
    return indexed(sentences, TokenIndexer.from_params(Params(dict(INDEXER))))


def test_the_indexer_makes_the_models_own_ids_for_the_embedder_in_a_text_field():
    inputs = efml_inputs()
    text_field_embedder = TextFieldEmbedder.from_params(
        Params({"token_embedders": {"elmo": {"type": "elmo", "options_file": MODEL}}})
    )
    bilm, _ = efml_parts(cast(ElmoTokenEmbedder, text_field_embedder.token_embedder_elmo))
    assert torch.equal(inputs["efml_tokens"], bilm.batch_to_ids(SENTENCES))
    output = text_field_embedder({"elmo": inputs})
    assert output.shape == (3, 4, 32)  # 2 * the fixture's projection_dim
    assert output[2, 1:].abs().sum() == 0  # past the sentence
    assert output[2, 0].abs().sum() > 0


def test_the_embedder_gives_the_biLMs_top_layer():
    top_only = embedder(scalar_mix_parameters=[-9e10, -9e10, 1.0])
    bilm, _ = efml_parts(top_only)
    with torch.no_grad():
        output = top_only(**efml_inputs())
        top = bilm(bilm.batch_to_ids(SENTENCES))["activations"][-1][:, 1:-1]
    mask = efml_inputs()["efml_tokens"].gt(0).any(-1, keepdim=True)
    torch.testing.assert_close(output, top * mask, rtol=0, atol=1e-6)


def test_an_efml_biLM_refuses_the_elmo_characters_indexers_ids_naming_both():
    bilm_tf_ids = indexed(SENTENCES, ELMoTokenCharactersIndexer())
    with pytest.raises(ConfigurationError, match="ELMoForManyLangs.*elmo_characters") as error:
        embedder()(**bilm_tf_ids)
    assert f'{{"type": "elmo_efml_characters", "model": "{MODEL}"}}' in str(error.value)


def test_a_bilm_tf_biLM_refuses_the_efml_indexers_ids_naming_both(elmo_options, elmo_weights):
    bilm_tf = TokenEmbedder.from_params(
        Params({"type": "elmo", "options_file": elmo_options, "weight_file": elmo_weights})
    )
    with pytest.raises(ConfigurationError, match="bilm-tf.*elmo_efml_characters.*elmo_characters"):
        bilm_tf(**efml_inputs())


def copy_of_the_model(tmp_path: Path, swapped: bool) -> str:
    """The fixture model in another folder; with `swapped`, the ids of "t" and "e" in its table
    are swapped: the same sizes and weights, but other ids for words with those characters."""
    copy = tmp_path / ("swapped" if swapped else "copy")
    shutil.copytree(MODEL, copy)
    if swapped:
        table = copy / "char.dic"
        rows = dict(line.split("\t") for line in table.read_text(encoding="utf-8").splitlines())
        rows["t"], rows["e"] = rows["e"], rows["t"]
        table.write_text("".join(f"{c}\t{i}\n" for c, i in rows.items()), encoding="utf-8")
    return str(copy)


def test_ids_of_another_models_tables_are_refused_naming_both_models(tmp_path):
    other = copy_of_the_model(tmp_path, swapped=True)
    ids = indexed(SENTENCES, TokenIndexer.from_params(Params({**INDEXER, "model": other})))
    right = efml_inputs()["efml_tokens"]
    assert ids["efml_tokens"].shape == right.shape and not torch.equal(ids["efml_tokens"], right)
    for elmo in (embedder(), embedder().elmo):  # the embedder and a model's `Elmo`
        with pytest.raises(ConfigurationError, match="tables differ") as error:
            elmo(**ids) if isinstance(elmo, ElmoTokenEmbedder) else elmo.ids(ids)
        assert f"tables of {other}, but the biLM {MODEL!r} is the model {MODEL}" in str(error.value)


def test_the_same_tables_in_another_folder_are_the_same_model(tmp_path):
    copy = copy_of_the_model(tmp_path, swapped=False)
    ids = indexed(SENTENCES, TokenIndexer.from_params(Params({**INDEXER, "model": copy})))
    with torch.no_grad():
        assert torch.equal(embedder()(**ids), embedder()(**efml_inputs()))


def test_the_indexer_refuses_a_bilm_tf_model():
    with pytest.raises(ConfigurationError, match="no ELMoForManyLangs model.*elmo_characters"):
        TokenIndexer.from_params(Params({"type": "elmo_efml_characters", "model": SHIPPED_BILM}))


@pytest.mark.parametrize("requires_grad", [False, True])
def test_frozen_or_fine_tuned(requires_grad):
    elmo = embedder(requires_grad=requires_grad)
    elmo(**efml_inputs()).sum().backward()
    bilm, encoder = efml_parts(elmo)
    trained = [encoder.char_embedding, encoder.word_embedding, encoder.projection.weight]
    trained += list(bilm.lstm.parameters())
    for parameter in trained:
        if requires_grad:
            assert parameter.grad is not None and parameter.grad.abs().sum() > 0
        else:
            assert parameter.grad is None and not parameter.requires_grad


def test_bfloat16_runs_the_lstm_reduced_within_the_tolerance():
    reduced = embedder(compute_dtype="bfloat16")
    assert efml_parts(reduced)[0].compute_dtype == torch.bfloat16
    with torch.no_grad():
        output = reduced(**efml_inputs())
    exact = _plain_output()
    assert 0 < float((output - exact).abs().max() / exact.abs().max()) < 2e-2


def _plain_output() -> torch.Tensor:
    with torch.no_grad():
        return embedder(char_cnn_cache_size=0)(**efml_inputs())


def test_the_character_type_cache_gives_the_same_vectors():
    plain = _plain_output()
    cached = embedder()
    with torch.no_grad():
        assert torch.equal(cached(**efml_inputs()), plain)
        assert len(efml_parts(cached)[1]._type_cache) > 0
        assert torch.equal(cached(**efml_inputs()), plain)  # now from the cache


def test_the_activation_cache_gives_the_same_vectors_and_skips_the_biLM():
    plain = _plain_output()
    cached = embedder(activation_cache={"max_memory_mb": 16})
    runs = []
    cached.elmo.bilm.register_forward_hook(lambda *args: runs.append(1))
    with torch.no_grad():
        assert torch.equal(cached(**efml_inputs()), plain)
        assert torch.equal(cached(**efml_inputs()), plain)
    assert len(runs) == 1


@pytest.mark.parametrize(
    "execution",
    [{"fused": True}, {"fused": True, "sorted_inference": True}, {"deduplicates": False}],
)
def test_every_execution_path_gives_the_plain_paths_vectors(execution):
    with torch.no_grad():
        output = embedder(execution=execution)(**efml_inputs())
    torch.testing.assert_close(output, _plain_output(), rtol=0, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("requires_grad", [False, True])
def test_the_gpu_path_gives_the_cpus_vectors_frozen_or_fine_tuned(requires_grad):
    plain = _plain_output()
    elmo = embedder(requires_grad=requires_grad).cuda()  # the fused path, CUDA's default
    inputs = {key: value.cuda() for key, value in efml_inputs().items()}
    output = elmo(**inputs)
    torch.testing.assert_close(output.detach().cpu(), plain, rtol=0, atol=1e-5)
    if requires_grad:
        output.sum().backward()
        gradient = efml_parts(elmo)[1].word_embedding.grad
        assert gradient is not None and gradient.abs().sum() > 0
