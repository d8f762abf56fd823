import json

import h5py
import numpy
import pytest
import torch
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import ElmoBiLm, load_bilm, read_options, save_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.bilm_tf import read_weights


def test_write_then_read_gives_the_same_biLM(elmo_options, elmo_weights, sentences, tmp_path):
    original = load_bilm(elmo_options, elmo_weights).eval()
    save_bilm(original, str(tmp_path))
    reloaded = load_bilm(str(tmp_path / "options.json"), str(tmp_path / "weights.hdf5")).eval()
    for (name, a), (_, b) in zip(original.state_dict().items(), reloaded.state_dict().items()):
        if name != "character_encoder.char_embedding":  # the unused 262nd row is not stored
            assert torch.equal(a, b), name
    ids = batch_to_ids(sentences[:5])
    with torch.no_grad():
        for a, b in zip(original(ids)["activations"], reloaded(ids)["activations"]):
            assert torch.equal(a, b)


def test_written_weights_have_the_published_layout(elmo_options, elmo_weights, tmp_path):
    save_bilm(load_bilm(elmo_options, elmo_weights), str(tmp_path))
    with h5py.File(elmo_weights, "r") as published, h5py.File(
        tmp_path / "weights.hdf5", "r"
    ) as ours:
        names = []
        published.visititems(
            lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None
        )
        for name in names:
            assert ours[name].shape == published[name].shape, name
            assert abs(ours[name][...] - published[name][...]).max() < 1e-6, name


def test_char_embedding_with_262_rows_is_read(elmo_options, elmo_weights, tmp_path):
    path = tmp_path / "weights.hdf5"
    with h5py.File(elmo_weights, "r") as source, h5py.File(path, "w") as target:
        for key in source:
            source.copy(key, target)
        rows = target["char_embed"][...]
        del target["char_embed"]
        target["char_embed"] = torch.cat(
            [torch.from_numpy(rows), torch.ones(1, rows.shape[1])]
        ).numpy()
    bilm = load_bilm(elmo_options, str(path))
    assert torch.equal(bilm.character_encoder.char_embedding[262], torch.ones(rows.shape[1]))


def test_options_that_disagree_with_weights_name_the_tensor_and_shapes(
    elmo_options, elmo_weights, tmp_path
):
    options = json.load(open(elmo_options))
    options["lstm"]["dim"] = 128
    changed = tmp_path / "options.json"
    changed.write_text(json.dumps(options))
    with pytest.raises(ConfigurationError) as error:
        load_bilm(str(changed), elmo_weights)
    message = str(error.value)
    assert "RNN_0/RNN/MultiRNNCell/Cell0/LSTMCell/W_0" in message
    assert "(32, 256)" in message and "(32, 512)" in message


def test_missing_tensor_is_named(elmo_options, elmo_weights, tmp_path):
    options = json.load(open(elmo_options))
    options["char_cnn"]["n_highway"] = 3
    changed = tmp_path / "options.json"
    changed.write_text(json.dumps(options))
    with pytest.raises(ConfigurationError, match="no tensor 'CNN_high_2/W_transform'"):
        load_bilm(str(changed), elmo_weights)


def test_missing_weight_file(elmo_options, tmp_path):
    with pytest.raises((ConfigurationError, FileNotFoundError), match="weights.hdf5"):
        load_bilm(elmo_options, str(tmp_path / "weights.hdf5"))


def test_truncated_weight_file(elmo_options, elmo_weights, tmp_path):
    truncated = tmp_path / "weights.hdf5"
    truncated.write_bytes(open(elmo_weights, "rb").read()[:5000])
    with pytest.raises(ConfigurationError, match="truncated"):
        load_bilm(elmo_options, str(truncated))


def test_a_truncated_download_names_the_cached_file_and_how_to_fetch_it_again(
    elmo_options, elmo_weights, tmp_path, monkeypatch
):
    from elmo_plugin.elmo.formats import bilm_tf
    from elmo_plugin.elmo.formats.naming import package_files

    cached = tmp_path / "cache" / "0123abcd"
    cached.parent.mkdir()
    cached.write_bytes(open(elmo_weights, "rb").read()[:5000])
    monkeypatch.setattr(bilm_tf, "CACHE_DIRECTORY", str(cached.parent))
    monkeypatch.setattr(package_files, "fetch", lambda url, what: str(cached))
    with pytest.raises(ConfigurationError) as error:
        read_weights(load_bilm(elmo_options, None), "elmo_plugin://published/small/weights.hdf5")
    message = str(error.value)
    assert f"(the local file {cached})" in message
    assert f"delete {cached} (and {cached}.json)" in message


def test_options_that_are_not_json_name_file_and_line(tmp_path):
    broken = tmp_path / "options.json"
    broken.write_text('{\n  "lstm": {\n    "dim": 64,,\n  }\n}\n')
    with pytest.raises(ConfigurationError, match=r"options.json, line 3"):
        read_options(str(broken))


def test_options_missing_a_section(tmp_path):
    partial = tmp_path / "options.json"
    partial.write_text('{"lstm": {"dim": 8, "projection_dim": 4, "n_layers": 1}}')
    with pytest.raises(ConfigurationError, match="missing the 'char_cnn' section"):
        read_options(str(partial))


def test_reading_resets_the_token_cache(elmo_options, elmo_weights, sentences):
    bilm = load_bilm(elmo_options, elmo_weights).eval()
    for parameter in bilm.parameters():
        parameter.requires_grad_(False)
    ids = batch_to_ids(sentences[:2])
    with torch.no_grad():
        bilm(ids)
        assert len(bilm.character_encoder._type_cache) > 0
        read_weights(bilm, elmo_weights)
    assert len(bilm.character_encoder._type_cache) == 0


def test_random_biLM_of_any_size_roundtrips(tmp_path):
    options = {
        "char_cnn": {
            "embedding": {"dim": 3},
            "filters": [[1, 2], [3, 5]],
            "n_highway": 1,
            "activation": "tanh",
        },
        "lstm": {
            "dim": 12,
            "projection_dim": 6,
            "n_layers": 3,
            "cell_clip": 1.5,
            "proj_clip": 2,
            "use_skip_connections": False,
        },
    }
    bilm = ElmoBiLm.from_options(options)
    save_bilm(bilm, str(tmp_path))
    assert read_options(str(tmp_path / "options.json"))["lstm"]["n_layers"] == 3
    again = load_bilm(str(tmp_path / "options.json"), str(tmp_path / "weights.hdf5"))
    ids = batch_to_ids([["a", "b"], ["c"]])
    with torch.no_grad():
        for a, b in zip(bilm(ids)["activations"], again(ids)["activations"]):
            torch.testing.assert_close(a, b)


def _weights_with(elmo_weights, path, name, value):
    with h5py.File(elmo_weights, "r") as source, h5py.File(path, "w") as target:
        for key in source:
            source.copy(key, target)
        if name in target:
            del target[name]
        target[name] = value
    return str(path)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_weights_with_nan_or_inf_are_refused_naming_the_tensor(
    elmo_options, elmo_weights, tmp_path, bad
):
    with h5py.File(elmo_weights, "r") as source:
        value = source["CNN_proj/W_proj"][...]
    value[1, 2] = bad
    path = _weights_with(elmo_weights, tmp_path / "w.hdf5", "CNN_proj/W_proj", value)
    with pytest.raises(
        ConfigurationError, match=r"w.hdf5: tensor 'CNN_proj/W_proj' has 1 non-finite"
    ):
        load_bilm(elmo_options, path)


def test_weights_dataset_of_strings_names_the_tensor_and_type(elmo_options, elmo_weights, tmp_path):
    path = _weights_with(
        elmo_weights, tmp_path / "w.hdf5", "CNN_proj/b_proj", numpy.array([b"x"] * 16)
    )
    with pytest.raises(
        ConfigurationError, match=r"w.hdf5: tensor 'CNN_proj/b_proj'.*expected floating"
    ):
        load_bilm(elmo_options, path)


@pytest.mark.parametrize(
    "change,match",
    [
        (
            lambda o: o["lstm"].update(projection_dim="16"),
            r"'lstm'.'projection_dim'.*expected a positive integer, got '16'",
        ),
        (
            lambda o: o["lstm"].update(n_layers=-1),
            r"'lstm'.'n_layers'.*expected a positive integer",
        ),
        (
            lambda o: o["lstm"].update(cell_clip="3"),
            r"'lstm'.'cell_clip'.*expected a positive number",
        ),
        (
            lambda o: o["char_cnn"].update(filters=[[1, 4], [2]]),
            r"'char_cnn'.'filters'.*expected a list of \[width, count\]",
        ),
        (
            lambda o: o["char_cnn"].update(filters="[[1, 4]]"),
            r"'char_cnn'.'filters'.*expected a list of \[width, count\]",
        ),
        (
            lambda o: o["char_cnn"].update(embedding=4),
            r"'char_cnn'.'embedding'.*expected .*\"dim\"",
        ),
        (
            lambda o: o["char_cnn"].update(activation="gelu"),
            r"'char_cnn'.'activation'.*expected one of",
        ),
        (
            lambda o: o["lstm"].update(use_skip_connections="yes"),
            r"'lstm'.'use_skip_connections'.*expected true or false",
        ),
    ],
)
def test_malformed_options_name_the_field_and_the_expected_type(
    elmo_options, tmp_path, change, match
):
    options = json.load(open(elmo_options))
    change(options)
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(ConfigurationError, match="options.json: " + match):
        load_bilm(str(path), None)


def test_options_that_are_a_json_array(tmp_path):
    path = tmp_path / "options.json"
    path.write_text("[1, 2]")
    with pytest.raises(
        ConfigurationError, match=r"options.json: expected a JSON object.*got a list"
    ):
        read_options(str(path))


@pytest.mark.parametrize(
    "key,value",
    [
        ("cell_clip", float("nan")),
        ("cell_clip", float("inf")),
        ("proj_clip", -3),
        ("proj_clip", 0),
        ("cell_clip", True),
    ],
)
def test_clip_values_must_be_positive_finite_numbers_or_null(elmo_options, tmp_path, key, value):
    options = json.load(open(elmo_options))
    options["lstm"][key] = value
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))  # NaN and Infinity as Python's json writes them
    with pytest.raises(
        ConfigurationError, match=f"options.json: 'lstm'.'{key}' expected a positive number or null"
    ):
        load_bilm(str(path), None)


def test_a_filter_wider_than_a_token_is_refused(elmo_options, tmp_path):
    options = json.load(open(elmo_options))
    options["char_cnn"]["filters"].append([51, 4])
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(ConfigurationError, match=r"'char_cnn'.'filters'.*width 51.*50 characters"):
        load_bilm(str(path), None)


@pytest.mark.parametrize(
    "section,key,value,extra",
    [
        ("lstm", "n_layers", 1, "RNN_0/RNN/MultiRNNCell/Cell1/LSTMCell/W_0"),
        ("char_cnn", "n_highway", 1, "CNN_high_1/W_carry"),
        ("char_cnn", "n_highway", 0, "CNN_high_0/W_carry"),
    ],
)
def test_weights_the_options_do_not_describe_are_refused(
    elmo_options, elmo_weights, tmp_path, section, key, value, extra
):
    options = json.load(open(elmo_options))
    options[section][key] = value
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(
        ConfigurationError, match=f"lm_weights.hdf5: .*the options do not describe.*'{extra}'"
    ):
        load_bilm(str(path), elmo_weights)


def test_an_extra_layer_in_the_weights_is_refused(elmo_options, elmo_weights, tmp_path):
    path = _weights_with(
        elmo_weights,
        tmp_path / "w.hdf5",
        "RNN_0/RNN/MultiRNNCell/Cell2/LSTMCell/W_0",
        numpy.zeros((32, 256), numpy.float32),
    )
    with pytest.raises(ConfigurationError, match=r"w.hdf5: .*Cell2/LSTMCell/W_0"):
        load_bilm(elmo_options, path)


def test_an_unknown_option_in_a_section_is_warned_about(elmo_options, tmp_path, caplog):
    options = json.load(open(elmo_options))
    options["lstm"]["cell_clp"] = 3  # a typo: without a warning, no cell clipping
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    load_bilm(str(path), None)
    assert "options.json: 'lstm' has 'cell_clp', which is not a bilm-tf option" in caplog.text


def test_a_huge_bad_option_is_quoted_bounded(elmo_options, tmp_path):
    options = json.load(open(elmo_options))
    options["char_cnn"]["filters"] = [[1, "x"]] * 100_000
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    with pytest.raises(ConfigurationError, match="'char_cnn'.'filters'") as caught:
        load_bilm(str(path), None)
    assert len(str(caught.value)) < 1000
