"""ELMo on Arrow blocks (`arrow_embedding`: per token and pooled, float32 and float16), and the
runnable Ray Data and PySpark examples of docs/examples, each run as a user runs it (a local Ray
of 2 CPUs, Spark `local[2]`):
rows in the input's order, equal to `ElmoEmbedder`'s to 1e-6."""

import os
import pathlib
import subprocess
import sys
from typing import Any, List

import numpy
import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.pooling import PRESETS
from tests.paths import PROJECT_ROOT

pyarrow = pytest.importorskip("pyarrow")
EXAMPLES = PROJECT_ROOT / "docs" / "examples"
EXAMPLE_SECONDS = 600


@pytest.fixture
def lines(sentences) -> List[str]:
    return [" ".join(sentence) for sentence in sentences[:12]] + ["", "x " * 70]


@pytest.fixture
def text_file(tmp_path, lines) -> pathlib.Path:
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture
def reference(elmo_options, elmo_weights, lines) -> List[numpy.ndarray]:
    embedder = ElmoEmbedder(elmo_options, elmo_weights)
    return [embedder.embed_sentence(line.split()) for line in lines]


def _rows(folder: pathlib.Path) -> Any:
    import pyarrow.parquet

    files = sorted(str(p) for p in folder.rglob("*.parquet"))
    return pyarrow.concat_tables([pyarrow.parquet.read_table(f) for f in files])


def _arrays(table) -> List[numpy.ndarray]:
    from elmo_plugin.embedding.parquet_output import row_array

    column = table.column("embedding").combine_chunks()
    return [row_array(column, row) for row in range(len(column))]


def _assert_close(ours: List[numpy.ndarray], theirs: List[numpy.ndarray], atol=1e-6) -> None:
    assert len(ours) == len(theirs)
    for mine, expected in zip(ours, theirs):
        if expected.size == 0:  # Spark's plain lists cannot tell the width of no tokens
            assert mine.size == 0 and mine.shape[0] == expected.shape[0]
            continue
        assert mine.shape == expected.shape
        numpy.testing.assert_allclose(mine, expected, rtol=0, atol=atol)


def test_a_block_runs_in_token_budget_batches_rows_in_order(
    elmo_options, elmo_weights, lines, reference
):
    from elmo_plugin.embedding.arrow_embedding import ArrowEmbedder

    embedder = ArrowEmbedder(elmo_options, elmo_weights, batch_size=4, max_tokens=64)
    runs: List[int] = []
    embedder.embedder.elmo_bilm.lstm.register_forward_pre_hook(
        lambda _, args: runs.append(args[0].size(0) * args[0].size(1))
    )
    table = embedder.embed_table(pyarrow.table({"text": lines, "id": range(len(lines))}))
    assert table.column_names == ["text", "id", "embedding"]
    assert max(runs) <= 64
    _assert_close(_arrays(table), reference)
    with pytest.raises(ConfigurationError, match="no column 'text' .*: value"):
        embedder.embed_table(pyarrow.table({"value": lines}))
    empty = embedder.embed_table(pyarrow.table({"text": pyarrow.array([], pyarrow.string())}))
    assert empty.num_rows == 0 and "embedding" in empty.column_names


def test_pooled_float16_blocks_are_the_presets_of_elmo_embedders_layers(
    elmo_options, elmo_weights, lines, reference
):
    from elmo_plugin.embedding.arrow_embedding import ArrowEmbedder

    embedder = ArrowEmbedder(elmo_options, elmo_weights, pool="seqvec-protein", dtype="float16")
    vectors = _arrays(embedder.embed_table(pyarrow.table({"text": lines})))
    assert vectors[0].dtype == numpy.float16 and numpy.isnan(vectors[12]).all()
    expected = [PRESETS["seqvec-protein"](layers).astype(numpy.float16) for layers in reference]
    assert [v.tobytes() for v in vectors[:12]] == [e.tobytes() for e in expected[:12]]


def _run_example(name: str, *arguments: str) -> None:
    """Runs a docs/examples script as a user would, in a process of its own: Ray's and Spark's
    processes and threads end with it, whatever they leave running, and a hang is a failure
    after `EXAMPLE_SECONDS`, not a suite that never ends."""
    paths = [str(PROJECT_ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    environment = {
        **os.environ,
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": os.pathsep.join(paths),
    }
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *arguments],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_SECONDS,
    )
    assert result.returncode == 0, result.stderr[-5000:]


@pytest.mark.slow
@pytest.mark.parametrize("name,engine", [("ray_embed.py", "ray"), ("spark_embed.py", "pyspark")])
def test_the_examples_give_elmo_embedders_rows_in_order(
    name, engine, tmp_path, text_file, lines, reference, elmo_options, elmo_weights
):
    pytest.importorskip(engine)
    model = ["--model", elmo_options, "--weight-file", elmo_weights]
    _run_example(name, str(text_file), str(tmp_path / "tokens"), *model)
    tokens = _rows(tmp_path / "tokens")
    if "order" in tokens.column_names:  # Spark's partitions come back in any order
        tokens = tokens.sort_by("order")
        # Both cores embedded: a small file still makes one partition (one file) a core.
        assert len(list((tmp_path / "tokens").glob("*.parquet"))) == 2
    assert tokens.column("text").to_pylist() == lines
    _assert_close(_arrays(tokens), reference)


@pytest.mark.slow
def test_the_ray_example_joins_a_running_ray(
    tmp_path, text_file, lines, reference, elmo_options, elmo_weights
):
    pytest.importorskip("ray")
    from tests.running_ray import running_ray

    model = ["--model", elmo_options, "--weight-file", elmo_weights]
    with running_ray(cpus=2) as address:
        _run_example(
            "ray_embed.py", str(text_file), str(tmp_path / "tokens"), *model, "--address", address
        )
    tokens = _rows(tmp_path / "tokens")
    assert tokens.column("text").to_pylist() == lines
    _assert_close(_arrays(tokens), reference)


def test_scale_md_runs_the_examples_these_tests_run():
    guide = (PROJECT_ROOT / "docs" / "scale.md").read_text()
    for name in ("ray_embed.py", "spark_embed.py"):
        assert f"python docs/examples/{name} corpus.txt corpus_parquet/" in guide
        assert (EXAMPLES / name).is_file()
