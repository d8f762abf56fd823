"""
`elmo-serve`: ELMo over HTTP, on aiohttp's server (already among the dependencies of both
profiles). Requests that arrive together are embedded together: each biLM has a queue, and one
batcher a biLM takes the waiting requests (up to `max_batch_tokens` token positions, waiting at
most `max_wait` seconds for company) into one stateless biLM run, which gives each sentence the
vectors it gets alone. Several biLMs stay loaded, by name, all loaded and run on one thread of
their own (`BilmThread`).

Routes: `POST /embed` with `{"sentences": [...], "model": name, "layers": "all|top|average",
"pool": "none|mean|<preset>"}` (a sentence a whitespace-tokenised string or a list of tokens)
answers `{"model": name, "embeddings": [...]}`; `GET /health`; `GET /metrics` (Prometheus
text). A request over a limit (bytes, sentences, tokens) is a 413 naming the limit; malformed
JSON, bad UTF-8, wrong types or no sentences a 400 saying what was expected; an unknown model
a 404. Example client: docs/examples/serve_client.py.
"""

import argparse
import asyncio
import base64
import concurrent.futures
import json
import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import numpy

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder
from elmo_plugin.embedding.embeddings_file import OUTPUT_FORMATS
from elmo_plugin.embedding.outputs import EmbeddingOutput
from elmo_plugin.embedding.pooling import NO_POOL, POOL_CHOICES, PRESETS, check_pool

logger = logging.getLogger(__name__)

JSON_ENCODING = "json"
BASE64_ENCODING = "base64"
ENCODINGS = (JSON_ENCODING, BASE64_ENCODING)


@dataclass(frozen=True)
class Limits:
    """What one request may hold, and how long a batch waits for more requests."""

    max_bytes: int = 1 << 20
    max_sentences: int = 256
    max_tokens: int = 8192
    max_batch_tokens: int = 4096
    max_wait: float = 0.005


class RequestError(Exception):
    """A request the server refuses: the HTTP status and what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Waiting:
    sentences: List[List[str]]
    future: "asyncio.Future[List[numpy.ndarray]]"


class BilmThread(concurrent.futures.ThreadPoolExecutor):
    """The one thread that loads and runs every biLM of a server, while the event loop answers.

    Why one, and why loading too: torch's CPU kernels run on OpenMP (GNU libgomp), which keeps
    a team of worker threads for each thread that ever ran a parallel region; once the teams'
    threads outnumber the CPUs, libgomp's workers stop spinning between regions and sleep, and
    every region pays their wake-up. The LSTM's steps are thousands of short regions, so a biLM
    loaded on the main thread and run on another ran far slower (docs/scale.md, "The server
    under load", has the figures)."""

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="elmo-bilm")

    def load(self, bilm: Optional[str] = None) -> ElmoEmbedder:
        """`ElmoEmbedder(bilm)` (the shipped biLM if None), loaded on this thread."""
        return self.submit(lambda: ElmoEmbedder(bilm) if bilm else ElmoEmbedder()).result()


class Batcher:
    """One biLM's queue and the task that embeds what waits in it, a run at a time, on the
    server's `BilmThread` (the event loop keeps answering meanwhile)."""

    def __init__(
        self,
        embedder: ElmoEmbedder,
        limits: Limits,
        metrics: Dict[str, float],
        thread: BilmThread,
    ):
        self.embedder = embedder
        self.limits = limits
        self.metrics = metrics
        self.queue: "asyncio.Queue[_Waiting]" = asyncio.Queue()
        self.thread = thread
        self.expected = 1  # the requests of the clients active lately

    async def embed(self, sentences: List[List[str]]) -> List[numpy.ndarray]:
        future = asyncio.get_running_loop().create_future()
        await self.queue.put(_Waiting(sentences, future))
        return await future

    async def run(self) -> None:
        while True:
            taken = await self._take()
            sentences = [sentence for waiting in taken for sentence in waiting.sentences]
            self.metrics["elmo_batches_total"] += 1
            self.metrics["elmo_batched_requests_total"] += len(taken)
            try:
                layers = await asyncio.get_running_loop().run_in_executor(
                    self.thread, self.embedder.embed_batch, sentences
                )
            except Exception as error:  # noqa: B902 - each waiting request gets the failure
                for waiting in taken:
                    waiting.future.set_exception(error)
                continue
            start = 0
            for waiting in taken:
                end = start + len(waiting.sentences)
                waiting.future.set_result(layers[start:end])
                start = end
            self.expected = len(taken) + self.queue.qsize()

    async def _take(self) -> List[_Waiting]:
        """The first request and those waiting behind it, within `max_batch_tokens`; and, up
        to `max_wait`, those of the clients the last run answered, which come back together.
        A lone client waits for no one: it would pay `max_wait` on every call."""
        loop = asyncio.get_running_loop()
        taken = [await self.queue.get()]
        tokens = _positions(taken[0].sentences)
        deadline = loop.time() + self.limits.max_wait
        while tokens < self.limits.max_batch_tokens:
            left = deadline - loop.time()
            try:
                if left <= 0 or len(taken) >= self.expected:
                    waiting = self.queue.get_nowait()
                else:
                    waiting = await asyncio.wait_for(self.queue.get(), left)
            except (asyncio.QueueEmpty, asyncio.TimeoutError):
                return taken
            taken.append(waiting)
            tokens += _positions(waiting.sentences)
        return taken


def _positions(sentences: List[List[str]]) -> int:
    return sum(len(sentence) + 2 for sentence in sentences)


@dataclass(frozen=True)
class Parsed:
    """What a valid request asks for."""

    model: str
    sentences: List[List[str]]
    layers: str
    pool: str
    encoding: str


def parse_request(body: bytes, limits: Limits, models: List[str]) -> Parsed:
    """What a request body asks for, or the `RequestError` saying which limit or field is
    wrong."""
    if len(body) > limits.max_bytes:
        raise RequestError(
            413, f"the request has {len(body)} bytes; max_bytes is {limits.max_bytes}"
        )
    try:
        request = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise RequestError(400, f"the body is not UTF-8 ({error.reason} at byte {error.start})")
    except ValueError as error:
        raise RequestError(400, f"the body is not JSON: {error}")
    if not isinstance(request, dict):
        raise RequestError(400, 'expected a JSON object such as {"sentences": ["Hello world ."]}')
    model = request.get("model", models[0])
    if model not in models:
        raise RequestError(404, f"no model {model!r}; this server holds {models}")
    sentences = _sentences(request.get("sentences"), limits)
    pool = _choice(request, "pool", POOL_CHOICES, NO_POOL)
    layers = _choice(request, "layers", OUTPUT_FORMATS, "all" if pool in PRESETS else "average")
    try:
        check_pool(pool, layers)
    except ConfigurationError as error:
        raise RequestError(400, str(error))
    encoding = _choice(request, "encoding", ENCODINGS, JSON_ENCODING)
    return Parsed(model, sentences, layers, pool, encoding)


def _choice(request: Dict[str, Any], key: str, choices: Sequence[str], default: str) -> str:
    """The request's `key`, one of `choices` (`default` where not given), or a 400."""
    value = request.get(key, default)
    if not isinstance(value, str) or value not in choices:
        raise RequestError(400, f'"{key}" must be one of {tuple(choices)}, got {value!r}')
    return value


def encode_response(model: str, vectors: List[numpy.ndarray], encoding: str) -> bytes:
    """The response body: float32 written by orjson, the shortest text that parses back to
    the same float32 (fewer bytes than Python's 17 digits, and faster: docs/scale.md), or
    base64."""
    orjson = _orjson()
    if encoding == BASE64_ENCODING:
        embeddings: List[Any] = [
            {
                "shape": list(array.shape),
                "base64": base64.b64encode(array.astype("<f4").tobytes()).decode("ascii"),
            }
            for array in vectors
        ]
    else:
        embeddings = [numpy.ascontiguousarray(array, numpy.float32) for array in vectors]
    response = {"model": model, "encoding": encoding, "embeddings": embeddings}
    return orjson.dumps(response, option=orjson.OPT_SERIALIZE_NUMPY)


def _orjson() -> Any:
    try:
        import orjson
    except ImportError:
        raise ConfigurationError(
            "elmo-serve writes its responses with orjson: pip install 'elmo_plugin[serve]'"
        )
    return orjson


def _sentences(value: Any, limits: Limits) -> List[List[str]]:
    if not isinstance(value, list) or not value:
        raise RequestError(400, '"sentences" must be a non-empty list of strings or token lists')
    if len(value) > limits.max_sentences:
        raise RequestError(413, f"{len(value)} sentences; max_sentences is {limits.max_sentences}")
    sentences = []
    for number, sentence in enumerate(value):
        tokens = sentence.split() if isinstance(sentence, str) else sentence
        if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
            raise RequestError(
                400, f"sentence {number} is neither a string nor a list of non-empty strings"
            )
        if not tokens:
            raise RequestError(400, f"sentence {number} has no tokens")
        sentences.append(tokens)
    total = sum(len(tokens) for tokens in sentences)
    if total > limits.max_tokens:
        raise RequestError(413, f"{total} tokens; max_tokens is {limits.max_tokens}")
    return sentences


def build_app(
    embedders: Dict[str, ElmoEmbedder],
    limits: Limits = Limits(),
    thread: Optional[BilmThread] = None,
):
    """The aiohttp application serving `embedders` by name (the first the default), run on
    `thread` (best the one that loaded them: `BilmThread.load`; a new one if None), which
    the application shuts down when it stops."""
    from aiohttp import web

    _orjson()  # refused at start, not at the first request
    metrics: Dict[str, float] = {
        "elmo_requests_total": 0,
        "elmo_request_errors_total": 0,
        "elmo_sentences_total": 0,
        "elmo_batches_total": 0,
        "elmo_batched_requests_total": 0,
    }
    batchers: Dict[str, Batcher] = {}
    tasks: List["asyncio.Task[None]"] = []
    bilm_thread = thread or BilmThread()

    async def start(app: "web.Application") -> None:
        for name, embedder in embedders.items():
            batchers[name] = Batcher(embedder, limits, metrics, bilm_thread)
        tasks.extend(asyncio.create_task(b.run()) for b in batchers.values())

    async def stop(app: "web.Application") -> None:
        for task in tasks:
            task.cancel()
        # No thread outlives the app: a process forked later must not inherit a stuck one.
        bilm_thread.shutdown(wait=True)

    async def embed(request: "web.Request") -> "web.Response":
        metrics["elmo_requests_total"] += 1
        try:
            body = await request.content.read(limits.max_bytes + 1)
            parsed = parse_request(body, limits, list(embedders))
        except RequestError as error:
            metrics["elmo_request_errors_total"] += 1
            return web.json_response({"error": str(error)}, status=error.status)
        embedded = await batchers[parsed.model].embed(parsed.sentences)
        output = EmbeddingOutput(pool=parsed.pool)
        vectors = [
            output.format(one, parsed.layers, "request", row) for row, one in enumerate(embedded)
        ]
        metrics["elmo_sentences_total"] += len(parsed.sentences)
        body = encode_response(parsed.model, vectors, parsed.encoding)
        return web.Response(body=body, content_type="application/json")

    async def health(request: "web.Request") -> "web.Response":
        return web.json_response({"status": "ok", "models": list(embedders)})

    async def prometheus(request: "web.Request") -> "web.Response":
        text = "".join(f"{name} {value:g}\n" for name, value in metrics.items())
        return web.Response(text=text, content_type="text/plain")

    app = web.Application(client_max_size=limits.max_bytes + 1)
    app.router.add_post("/embed", embed)
    app.router.add_get("/health", health)
    app.router.add_get("/metrics", prometheus)
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    return app


def main(argv: Optional[List[str]] = None) -> None:
    from aiohttp import web

    parser = argparse.ArgumentParser(prog="elmo-serve", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=BILM",
        help="a biLM to serve under NAME: what ElmoEmbedder takes (a published name, a folder, "
        "a ZIP); repeat for several; default: the shipped biLM as 'default'",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-sentences", type=int, default=Limits.max_sentences)
    parser.add_argument("--max-tokens", type=int, default=Limits.max_tokens)
    parser.add_argument("--max-bytes", type=int, default=Limits.max_bytes)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    specs = [spec.split("=", 1) for spec in args.model] or [["default", None]]
    if any(len(spec) != 2 for spec in specs):
        parser.exit(2, "elmo-serve: error: --model takes NAME=BILM\n")
    thread = BilmThread()
    embedders = {name: thread.load(bilm) for name, bilm in specs}
    limits = Limits(args.max_bytes, args.max_sentences, args.max_tokens)
    web.run_app(build_app(embedders, limits, thread), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
