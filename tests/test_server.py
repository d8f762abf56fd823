"""`elmo-serve` (`elmo_plugin.embedding.server`) in process, on aiohttp's test server:
concurrent requests batched into shared runs and answered as `ElmoEmbedder` answers each alone,
two biLMs by name, and 200 malformed requests each a 4xx saying what was wrong, the server
serving on."""

import asyncio
import base64
import json
import threading
from typing import Any, Awaitable, Callable, List, Tuple

import numpy
import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.embedding.pooling import PRESETS

aiohttp = pytest.importorskip("aiohttp")

from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from elmo_plugin.embedding.server import Limits, build_app, encode_response  # noqa: E402


@pytest.fixture
def embedders(elmo_options, elmo_weights):
    return {
        "fixture": ElmoEmbedder(elmo_options, elmo_weights),
        "second": ElmoEmbedder(elmo_options, elmo_weights),
    }


def _serve(embedders, limits: Limits, scenario: Callable[[Any], Awaitable[Any]]) -> Any:
    async def run():
        async with TestClient(TestServer(build_app(embedders, limits))) as client:
            return await scenario(client)

    return asyncio.run(run())


def _metrics(text: str) -> dict:
    return {line.split()[0]: float(line.split()[1]) for line in text.splitlines()}


def test_concurrent_requests_share_runs_and_get_their_own_vectors(embedders, sentences):
    reference = ElmoEmbedder.from_bilm(embedders["fixture"].elmo_bilm)

    async def scenario(client):
        async def one(sentence, **extra):
            response = await client.post("/embed", json={"sentences": [sentence], **extra})
            assert response.status == 200, await response.text()
            return (await response.json())["embeddings"][0]

        answers = await asyncio.gather(*(one(" ".join(s)) for s in sentences[:16]))
        pooled = await one(sentences[0], model="second", pool="tfhub-default")
        unknown = await client.post("/embed", json={"sentences": ["a"], "model": "third"})
        health = await (await client.get("/health")).json()
        return answers, pooled, unknown.status, health, await (await client.get("/metrics")).text()

    limits = Limits(max_wait=0.2)
    answers, pooled, unknown, health, metrics = _serve(embedders, limits, scenario)
    for answer, sentence in zip(answers, sentences[:16]):
        expected = reference.embed_sentence(sentence).mean(axis=0)
        numpy.testing.assert_allclose(numpy.array(answer), expected, rtol=0, atol=1e-6)
    expected = PRESETS["tfhub-default"](reference.embed_sentence(sentences[0]))
    numpy.testing.assert_allclose(numpy.array(pooled), expected, rtol=0, atol=1e-6)
    assert unknown == 404 and health == {"status": "ok", "models": ["fixture", "second"]}
    counted = _metrics(metrics)
    assert counted["elmo_batched_requests_total"] == 17
    assert counted["elmo_batches_total"] < 16  # the 16 concurrent ones shared runs


def test_json_floats_parse_back_to_the_float32_bit_for_bit():
    values = numpy.random.RandomState(0).standard_normal((3, 7, 5)).astype(numpy.float32)
    extremes = [numpy.finfo(numpy.float32).tiny / 3, 3.4e38, -0.0, 1e-45]
    values[0, 0, :4] = numpy.array(extremes, dtype=numpy.float32)
    parsed = json.loads(encode_response("m", [values, values[1, 2]], "json"))
    for array, expected in zip(parsed["embeddings"], [values, values[1, 2]]):
        back = numpy.array(array, dtype=numpy.float32)
        assert back.shape == expected.shape
        assert back.tobytes() == expected.tobytes()


def test_base64_answers_the_json_answers_arrays_bit_for_bit(embedders, sentences):
    reference = ElmoEmbedder.from_bilm(embedders["fixture"].elmo_bilm)

    async def scenario(client):
        answers = []
        for encoding in ("json", "base64"):
            request = {"sentences": [sentences[3]], "layers": "all", "encoding": encoding}
            response = await client.post("/embed", json=request)
            assert response.status == 200, await response.text()
            answers.append((await response.json())["embeddings"][0])
        return answers

    listed, encoded = _serve(embedders, Limits(), scenario)
    decoded = numpy.frombuffer(base64.b64decode(encoded["base64"]), "<f4")
    decoded = decoded.reshape(encoded["shape"])
    assert decoded.tobytes() == numpy.array(listed, dtype=numpy.float32).tobytes()
    expected = reference.embed_sentence(sentences[3])
    numpy.testing.assert_allclose(decoded, expected, rtol=0, atol=1e-6)


def test_a_lone_request_waits_for_no_company(embedders):
    async def scenario(client):
        response = await client.post("/embed", json={"sentences": ["alone"]})
        return response.status

    async def run():
        async with TestClient(TestServer(build_app(embedders, Limits(max_wait=60)))) as client:
            return await asyncio.wait_for(scenario(client), 20)

    assert asyncio.run(run()) == 200


def test_the_clients_a_run_answered_are_awaited_together(embedders):
    async def scenario(client):
        async def one(sentence):
            response = await client.post("/embed", json={"sentences": [sentence]})
            assert response.status == 200

        async def late(sentence, delay):
            await asyncio.sleep(delay)
            await one(sentence)

        await asyncio.gather(*(one(f"first {n}") for n in range(4)))
        before = _metrics(await (await client.get("/metrics")).text())
        await asyncio.gather(*(late(f"again {n}", 0.05 * n) for n in range(4)))
        after = _metrics(await (await client.get("/metrics")).text())
        return after["elmo_batches_total"] - before["elmo_batches_total"]

    assert _serve(embedders, Limits(max_wait=2.0), scenario) < 4


MALFORMED = [
    (b"not json", 400, "not JSON"),
    (b'{"sentences": ["caf\xe9"]}', 400, "not UTF-8"),
    (b"[1, 2]", 400, "expected a JSON object"),
    (b'{"sentences": "a b"}', 400, "non-empty list"),
    (b'{"sentences": []}', 400, "non-empty list"),
    (b'{"sentences": [1]}', 400, "sentence 0 is neither"),
    (b'{"sentences": [["a", ""]]}', 400, "sentence 0 is neither"),
    (b'{"sentences": ["a", " "]}', 400, "sentence 1 has no tokens"),
    (b'{"sentences": ["a"], "pool": 3}', 400, '"pool" must be one of'),
    (b'{"sentences": ["a"], "layers": "middle"}', 400, '"layers" must be one of'),
    (b'{"sentences": ["a"], "layers": "top", "pool": "seqvec-protein"}', 400, "leave output"),
    (b'{"sentences": ["a"], "encoding": "hex"}', 400, '"encoding" must be one of'),
    (json.dumps({"sentences": ["a"] * 9}).encode(), 413, "9 sentences; max_sentences is 8"),
    (json.dumps({"sentences": ["a " * 40]}).encode(), 413, "40 tokens; max_tokens is 32"),
    (json.dumps({"sentences": ["a" * 600]}).encode(), 413, "max_bytes is 512"),
]


def test_malformed_requests_get_a_4xx_saying_what_and_the_server_serves_on(embedders):
    async def scenario(client):
        seen: List[Tuple[int, str, int, str]] = []
        for round_number in range(200 // len(MALFORMED) + 1):
            for body, status, message in MALFORMED:
                if len(seen) == 200:
                    break
                response = await client.post("/embed", data=body)
                seen.append((response.status, (await response.json())["error"], status, message))
        valid = await client.post("/embed", json={"sentences": ["still serving"]})
        return seen, valid.status, await (await client.get("/metrics")).text()

    limits = Limits(max_bytes=512, max_sentences=8, max_tokens=32)
    seen, valid, metrics = _serve(embedders, limits, scenario)
    assert len(seen) == 200
    for got, error, status, message in seen:
        assert got == status and message in error, (got, error)
    assert valid == 200 and _metrics(metrics)["elmo_request_errors_total"] == 200


def test_the_client_example_gets_the_servers_vectors(embedders):
    import runpy

    from tests.paths import PROJECT_ROOT

    client_embed = runpy.run_path(str(PROJECT_ROOT / "docs" / "examples" / "serve_client.py"))
    expected = embedders["fixture"].embed_sentence(["Hello", "world", "."]).mean(axis=0)

    async def scenario(client):
        server = str(client.server.make_url("")).rstrip("/")
        return await asyncio.to_thread(client_embed["embed"], server, ["Hello world ."])

    (vectors,) = _serve(embedders, Limits(), scenario)
    numpy.testing.assert_allclose(numpy.array(vectors), expected, rtol=0, atol=1e-6)
    guide = (PROJECT_ROOT / "docs" / "scale.md").read_text()
    assert "python docs/examples/serve_client.py http://127.0.0.1:8000" in guide


def test_every_bilm_is_loaded_and_run_on_one_thread(monkeypatch, elmo_options, elmo_weights):
    """Two threads running torch made each parallel region wait for libgomp's sleeping
    workers (`BilmThread`): the biLMs load and run where nothing else runs torch."""
    from aiohttp import web

    from elmo_plugin.embedding import server

    threads_seen: List[Tuple[str, int]] = []

    def recording_embedder(bilm):
        threads_seen.append(("load", threading.get_ident()))
        embedder = ElmoEmbedder(elmo_options, elmo_weights)
        real_batch = embedder.embed_batch

        def embed_batch(batch):
            threads_seen.append(("run", threading.get_ident()))
            return real_batch(batch)

        embedder.embed_batch = embed_batch  # type: ignore[method-assign]
        return embedder

    async def scenario(app):
        async with TestClient(TestServer(app)) as client:
            for model in ("one", "two", "one"):
                response = await client.post("/embed", json={"sentences": ["a b"], "model": model})
                assert response.status == 200

    monkeypatch.setattr(server, "ElmoEmbedder", recording_embedder)
    monkeypatch.setattr(web, "run_app", lambda app, **_: asyncio.run(scenario(app)))
    server.main(["--model", "one=first", "--model", "two=second"])
    assert [what for what, _ in threads_seen] == ["load", "load", "run", "run", "run"]
    assert len({thread for _, thread in threads_seen}) == 1
    assert threads_seen[0][1] != threading.get_ident()
