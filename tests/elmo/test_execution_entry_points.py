"""Every entry point that builds a biLM takes the same execution keys, the compute dtype among
them, and the older top-level `compute_dtype` beside them: the same setting reaches the biLM
whichever way it is given, and two that disagree are one error naming both."""

import argparse
import re
from typing import Any, Callable, Dict, Optional

import pytest
from allennlp.common import Params
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder

from elmo_plugin import ElmoEmbedder
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from elmo_plugin.allennlp.modules import ElmoTokenEmbedder
from elmo_plugin.elmo import ConfigurationError, Elmo, ElmoBiLm, Execution
from elmo_plugin.embedding import cli

SETTING: Dict[str, Any] = {"fused": True, "deduplicates": False, "compute_dtype": "bfloat16"}
WITHOUT_DTYPE = {key: value for key, value in SETTING.items() if key != "compute_dtype"}
EXPECTED = Execution(fused=True, deduplicates=False, compute_dtype="bfloat16")
# An entry point: (options file, weight file, execution, compute_dtype or None) to its biLM.
Build = Callable[[str, str, Any, Optional[str]], ElmoBiLm]


def _keywords(execution: Any, compute_dtype: Optional[str]) -> Dict[str, Any]:
    given = {"execution": execution}
    return given if compute_dtype is None else {**given, "compute_dtype": compute_dtype}


def _elmo(options: str, weights: str, execution: Any, dtype: Optional[str]) -> ElmoBiLm:
    return Elmo(options, weights, **_keywords(execution, dtype)).bilm


def _elmo_embedder(options: str, weights: str, execution: Any, dtype: Optional[str]) -> ElmoBiLm:
    return ElmoEmbedder(options, weights, **_keywords(execution, dtype)).elmo_bilm


def _token_embedder(options: str, weights: str, execution: Any, dtype: Optional[str]) -> ElmoBiLm:
    config = {"type": "elmo", "options_file": options, "weight_file": weights}
    embedder = TokenEmbedder.from_params(Params({**config, **_keywords(execution, dtype)}))
    assert isinstance(embedder, ElmoTokenEmbedder)
    return embedder.elmo.bilm


def _bilm_model(options: str, weights: str, execution: Any, dtype: Optional[str]) -> ElmoBiLm:
    vocabulary = CorpusVocabulary.from_corpus(corpus="fixtures/lm/sentences.txt")
    config = {"type": "bilm", "options_file": options, "weight_file": weights, "num_samples": 4}
    params = Params({**config, **_keywords(execution, dtype)})
    model = Model.from_params(vocab=vocabulary, params=params)
    assert isinstance(model, BilmLanguageModel)
    return model.bilm


def _command_text(execution: Any) -> str:
    if isinstance(execution, str):
        return execution
    words = {True: "true", False: "false", None: "null"}
    return ",".join(f"{key}={words.get(value, value)}" for key, value in execution.items())


def _elmo_embed(options: str, weights: str, execution: Any, dtype: Optional[str]) -> ElmoBiLm:
    """`elmo-embed`'s options, up to the biLM it would embed with."""
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser, parser)
    argv = ["in.txt", "out.hdf5", "--options-file", options, "--weight-file", weights]
    argv += ["--threads", "1", "--execution", _command_text(execution)]
    args = parser.parse_args(argv + ([] if dtype is None else ["--compute-dtype", dtype]))
    args.archive = None
    built = []
    original = cli.embed_file
    cli.embed_file = lambda bilm, *rest, **keywords: built.append(bilm)  # type: ignore
    try:
        cli.embed(args)
    finally:
        cli.embed_file = original
    return built[0]


ENTRY_POINTS: Dict[str, Build] = {
    "Elmo": _elmo,
    "ElmoEmbedder": _elmo_embedder,
    "elmo token embedder": _token_embedder,
    "bilm model": _bilm_model,
    "elmo-embed": _elmo_embed,
}
WAYS = {
    "in execution": (SETTING, None),
    "top-level compute_dtype": (WITHOUT_DTYPE, "bfloat16"),
    "both, agreeing": (SETTING, "bfloat16"),
}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_every_entry_point_builds_the_same_setting_from_the_same_keys(
    entry_point, way, elmo_options, elmo_weights
):
    execution, compute_dtype = WAYS[way]
    bilm = ENTRY_POINTS[entry_point](elmo_options, elmo_weights, execution, compute_dtype)
    assert bilm.execution == EXPECTED
    assert not bilm.character_encoder.deduplicates
    assert all(layer.compute_dtype == EXPECTED.dtype for layer in bilm.lstm.bilstm_layers)


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_every_entry_point_defaults_to_auto_in_float32(entry_point, elmo_options, elmo_weights):
    bilm = ENTRY_POINTS[entry_point](elmo_options, elmo_weights, "auto", None)
    assert bilm.execution == Execution(compute_dtype="float32")


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_a_compute_dtype_given_both_ways_and_disagreeing_is_one_error_naming_both(
    entry_point, elmo_options, elmo_weights
):
    build = ENTRY_POINTS[entry_point]
    with pytest.raises(ConfigurationError) as error:
        build(elmo_options, elmo_weights, {"compute_dtype": "float32"}, "bfloat16")
    message = str(error.value)
    both = (
        r"(compute_dtype|--compute-dtype) 'bfloat16' and (--)?execution's compute_dtype 'float32'"
    )
    assert re.search(both + " disagree", message)
    assert "\n" not in message


@pytest.mark.parametrize(
    "text, expected",
    [
        ("auto", Execution(compute_dtype="float32")),
        ('{"fused": true, "cuda_graphs": "auto"}', Execution(True, None, compute_dtype="float32")),
        ("fused=true, cuda_graphs=null", Execution(True, None, compute_dtype="float32")),
        ("compute_dtype=bfloat16", Execution(compute_dtype="bfloat16")),
    ],
)
def test_the_command_line_takes_auto_json_or_key_value_pairs(text, expected, elmo_files_arguments):
    from elmo_plugin.embedding.execution_arguments import execution_of

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser, parser)
    args = parser.parse_args(["in.txt", "out.hdf5", *elmo_files_arguments, "--execution", text])
    assert execution_of(args) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("fast", '--execution fast: expected "auto", a JSON object or key=value'),
        ("{fused: true}", "--execution {fused: true}: not a JSON object"),
        ("fast=true", "--execution fast=true: execution has no key 'fast'; its keys are fused"),
        ("fused=maybe", "execution.fused must be true or false or null/'auto', got 'maybe'"),
    ],
)
def test_a_wrong_execution_on_the_command_line_is_one_line_naming_it(
    text, expected, sentences_file, tmp_path, elmo_files_arguments, capsys
):
    output = tmp_path / "out.hdf5"
    with pytest.raises(SystemExit) as exit_status:
        arguments = [str(sentences_file([["a", "b"]])), str(output), *elmo_files_arguments]
        cli.main(arguments + ["--execution", text])
    assert exit_status.value.code == 2
    error = capsys.readouterr().err
    assert expected in error and error.count("\n") == 1
    assert not output.exists()
