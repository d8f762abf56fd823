"""
The ELMoForManyLangs (EFML) format without EFML installed: the directory recognised by its
files, the architecture JSON found where EFML looks, the tables read as EFML reads them, the
ids made as EFML makes them, the fast paths either exact or refused. Parity with EFML's own
outputs: tests/elmo/test_efml_parity.py.
"""

import json
import os
import shutil

import pytest
import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.efml import EfmlIds, is_efml_directory, load_efml_bilm
from elmo_plugin.elmo.formats.efml.directory import STRIPPED_TOKEN, read_architecture, read_table
from elmo_plugin.elmo.formats.efml.embedder_order import efml_batches, embed_in_efml_order
from elmo_plugin.elmo.modules.activation_cache import ActivationCache
from elmo_plugin.elmo.modules.cached_bilm import CachedBiLm
from tests.paths import FIXTURES

MODEL = str(FIXTURES / "efml" / "model")
SENTENCES = [["the", "city", "of", "мама"], ["Zwölf", "", "x" * 70], ["one"]]


@pytest.fixture
def model_copy(tmp_path) -> str:
    copy = str(tmp_path / "model")
    shutil.copytree(MODEL, copy)
    return copy


def _layers(bilm, sentences=SENTENCES) -> torch.Tensor:
    with torch.no_grad():
        return torch.stack(bilm(bilm.batch_to_ids(sentences))["activations"])


def test_an_efml_directory_is_recognised_by_its_files(model_copy):
    assert is_efml_directory(model_copy)
    assert not is_efml_directory(str(FIXTURES / "elmo"))
    os.remove(os.path.join(model_copy, "encoder.pkl"))
    assert not is_efml_directory(model_copy)
    with pytest.raises(ConfigurationError, match="lacks encoder.pkl"):
        load_efml_bilm(model_copy)


def test_the_architecture_is_found_as_efml_finds_it(model_copy, tmp_path):
    # The fixture's config_path is an absolute path from the machine that trained it.
    with open(os.path.join(model_copy, "config.json")) as arguments_file:
        arguments = json.load(arguments_file)
    assert os.path.isabs(arguments["config_path"])
    assert read_architecture(model_copy)["encoder"]["dim"] == 32
    # Relative to the model directory first.
    os.makedirs(os.path.join(model_copy, "configs"))
    shutil.move(os.path.join(model_copy, "cnn_tiny.json"), os.path.join(model_copy, "configs"))
    arguments["config_path"] = "configs/cnn_tiny.json"
    with open(os.path.join(model_copy, "config.json"), "w") as arguments_file:
        json.dump(arguments, arguments_file)
    assert read_architecture(model_copy)["encoder"]["dim"] == 32
    # Then EFML's packaged configs; else an error that says where it looked.
    packaged = str(tmp_path / "efml_configs")
    shutil.move(os.path.join(model_copy, "configs"), packaged)
    assert read_architecture(model_copy, packaged)["encoder"]["n_layers"] == 2
    with pytest.raises(ConfigurationError, match="is in none of: .*configs/cnn_tiny.json, .*"):
        read_architecture(model_copy)


def test_a_table_line_that_strips_to_one_field_is_the_ideographic_space(tmp_path):
    path = tmp_path / "char.dic"
    path.write_text("a\t0\n\u3000\t1\nb\t2\n", encoding="utf-8")
    assert read_table(str(path)) == {"a": 0, STRIPPED_TOKEN: 1, "b": 2}
    path.write_text("a\t0\nb\tc\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="line 2: expected 'token<TAB>id'"):
        read_table(str(path))


def test_a_model_whose_table_has_the_ideographic_space_reads_it_so(model_copy):
    # EFML writes "\u3000\t53" and reads back a line that strips to "53": that id is U+3000's.
    path = os.path.join(model_copy, "char.dic")
    with open(path, encoding="utf-8") as table:
        lines = [line.replace("z\t53", "\u3000\t53") for line in table]
    with open(path, "w", encoding="utf-8") as table:
        table.writelines(lines)
    original, changed = load_efml_bilm(MODEL), load_efml_bilm(model_copy)
    assert torch.equal(_layers(changed, [["a\u3000b"]]), _layers(original, [["azb"]]))
    assert not torch.equal(_layers(changed, [["azb"]]), _layers(original, [["azb"]]))


def test_ids_are_efmls():
    characters = {c: i for i, c in enumerate("ab")}
    for special in ["<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>"]:
        characters[special] = len(characters)
    words = {"<oov>": 0, "<bos>": 1, "<eos>": 2, "<pad>": 3, "ab": 4, "a" * 3: 5}
    ids = EfmlIds(characters, words, max_characters_per_token=5)
    # Ids shifted by one: a0 b1 <bos>2 <eos>3 <oov>4 <pad>5 <bow>6 <eow>7, then the word id.
    # The table's <eow> starts a word and its <bow> ends it (EFML's swap).
    assert ids.token_row("ab").tolist() == [8, 1, 2, 7, 6, 1, 5]
    # Unknown characters and words; tokens cut to max - 2 characters, the word id too.
    assert ids.token_row("zb").tolist() == [8, 5, 2, 7, 6, 1, 1]
    assert ids.token_row("aaaaaa").tolist() == [8, 1, 1, 1, 7, 1, 6]
    assert ids.token_row("").tolist() == [8, 7, 6, 6, 6, 1, 1]
    # The markers hold their own table entry, not their characters; a token "<bos>" is cut.
    assert ids.markers()[0].tolist() == [8, 3, 7, 6, 6, 1, 2]
    assert ids.token_row("<bos>").tolist() == [8, 5, 2, 5, 7, 1, 1]
    batch = ids.batch_to_ids([["ab"], []])
    assert batch.shape == (2, 1, 7) and not batch[1].any()


def test_word_ids_beyond_int16_are_split_into_two_columns():
    characters = {"<bos>": 0, "<eos>": 1, "<oov>": 2, "<pad>": 3, "<bow>": 4, "<eow>": 5}
    words = {"<oov>": 0, "<pad>": 1, "big": 100_000}
    row = EfmlIds(characters, words, 50).token_row("big")
    assert row.max() < 2**15 and ((row[-2] - 1) << 14) + row[-1] - 1 == 100_000


def test_a_weight_of_the_wrong_shape_or_an_unknown_one_is_refused(model_copy):
    path = os.path.join(model_copy, "token_embedder.pkl")
    state = torch.load(path)
    state["projection.bias"] = torch.zeros(3)
    torch.save(state, path)
    with pytest.raises(ConfigurationError, match="'projection.bias' has shape \\(3,\\)"):
        load_efml_bilm(model_copy)
    state["projection.bias"] = torch.zeros(16)
    state["extra.weight"] = torch.zeros(1)
    torch.save(state, path)
    with pytest.raises(ConfigurationError, match="holds extra.weight"):
        load_efml_bilm(model_copy)


def test_bilm_tf_character_ids_are_refused_clearly():
    from elmo_plugin.elmo import batch_to_ids

    with pytest.raises(ConfigurationError, match=r"ids of shape \(batch, tokens, 52\)"):
        load_efml_bilm(MODEL)(batch_to_ids(SENTENCES))


def _relative_difference(layers: torch.Tensor, exact: torch.Tensor) -> float:
    return float((layers - exact).abs().max() / exact.abs().max())


def test_bfloat16_reduces_the_lstm_and_keeps_the_token_layer_float32():
    exact = _layers(load_efml_bilm(MODEL))
    bilm = load_efml_bilm(MODEL, compute_dtype=torch.bfloat16)
    assert bilm.compute_dtype == torch.bfloat16
    reduced = _layers(bilm)
    assert torch.equal(reduced[0], exact[0])
    for layer in (1, 2):
        assert 0 < _relative_difference(reduced[layer], exact[layer]) < 2e-2
    bilm.set_compute_dtype(torch.float32)
    assert torch.equal(_layers(bilm), exact)
    bilm.set_compute_dtype(torch.bfloat16)
    assert torch.equal(_layers(bilm), reduced)


def test_the_fast_paths_give_the_same_layers():
    plain = _layers(load_efml_bilm(MODEL, char_cnn_cache_size=0))
    every_token = load_efml_bilm(MODEL, execution=Execution(deduplicates=False))
    # Every position's whole row: other convolution shapes, the same numbers to rounding.
    torch.testing.assert_close(_layers(every_token), plain, rtol=0, atol=1e-5)
    cached = load_efml_bilm(MODEL).requires_grad_(False)
    assert torch.equal(_layers(cached), plain)
    assert torch.equal(_layers(cached), plain)  # now from the character-type cache
    behind_cache = CachedBiLm(load_efml_bilm(MODEL).requires_grad_(False), ActivationCache())
    for _ in range(2):  # computed, then remembered
        ids = behind_cache.bilm.batch_to_ids(SENTENCES)
        assert torch.equal(torch.stack(behind_cache(ids)["activations"]), plain)


def test_a_sentence_gets_the_same_layers_in_any_batch():
    bilm = load_efml_bilm(MODEL)
    together = _layers(bilm)
    alone = _layers(bilm, SENTENCES[2:])
    torch.testing.assert_close(alone[:, 0, :3], together[:, 2, :3], rtol=0, atol=1e-6)


def test_efmls_order_is_longest_first_in_shuffled_batches():
    sentences = [["a"], ["a", "b", "c"], ["a", "b"], [], ["a", "b", "c"]]
    assert efml_batches(sentences, 2, shuffle=lambda order: None) == [[1, 4], [2, 0], [3]]
    assert efml_batches(sentences, 2, shuffle=lambda order: order.reverse()) == [
        [3],
        [2, 0],
        [1, 4],
    ]


def test_carried_states_change_the_layers():
    # What the stateful parity test checks is no accident of the order: without the carried
    # states the same order gives other vectors.
    sentences = SENTENCES + [["one", "more"], ["and", "the", "last", "one"]]
    stateful = load_efml_bilm(MODEL, stateful=True)
    carried = embed_in_efml_order(stateful, sentences, 2, shuffle=lambda order: None)
    fresh = embed_in_efml_order(load_efml_bilm(MODEL), sentences, 2, shuffle=lambda o: None)
    assert max(abs(a - b).max() for a, b in zip(carried, fresh)) > 1e-3


@pytest.mark.gpu
def test_the_gpu_gives_the_cpus_layers():
    cpu = _layers(load_efml_bilm(MODEL))
    bilm = load_efml_bilm(MODEL).cuda()
    with torch.no_grad():
        ids = bilm.batch_to_ids(SENTENCES).cuda()
        gpu = torch.stack(bilm(ids)["activations"]).cpu()
    torch.testing.assert_close(gpu, cpu, rtol=0, atol=1e-5)
