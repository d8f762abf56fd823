"""
The ELMo biLMs AllenNLP published, by short name: `elmo_plugin://published/<name>/options.json`
and `.../weights.hdf5` name their files (downloaded once into AllenNLP's cache), and
`ElmoEmbedder("<name>")` loads one. docs/elmo.md shows the same table (a test checks).

The sizes are those allennlp.org/elmo states; no public source gives file sizes or checksums,
so a downloaded `options.json` is checked against the sizes here, and the weights against the
options (every tensor's shape), as any biLM is.
"""

from typing import Any, Dict, NamedTuple, Optional

from elmo_plugin.elmo.errors import ConfigurationError

BASE_URL = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo/"
PREFIX = "published/"


class PublishedModel(NamedTuple):
    options_url: str
    weights_url: str
    corpus: str
    parameters_millions: Optional[float]
    cells: Optional[int]
    projection: Optional[int]
    highway: Optional[int]

    @property
    def output_dim(self) -> Optional[int]:
        return 2 * self.projection if self.projection else None


def _english(directory: str, parameters: float, cells: int, projection: int, highway: int):
    stem = f"{BASE_URL}{directory}/elmo_{directory}"
    corpus = (
        "5.5B tokens: Wikipedia (1.9B) and WMT 2008-2012 news crawl (3.6B)"
        if directory.endswith("5.5B")
        else "1 Billion Word Benchmark (WMT 2011 news crawl, about 800M tokens)"
    )
    return PublishedModel(
        f"{stem}_options.json",
        f"{stem}_weights.hdf5",
        corpus,
        parameters,
        cells,
        projection,
        highway,
    )


PUBLISHED_MODELS: Dict[str, PublishedModel] = {
    "small": _english("2x1024_128_2048cnn_1xhighway", 13.6, 1024, 128, 1),
    "medium": _english("2x2048_256_2048cnn_1xhighway", 28.0, 2048, 256, 1),
    "original": _english("2x4096_512_2048cnn_2xhighway", 93.6, 4096, 512, 2),
    "original_5.5B": _english("2x4096_512_2048cnn_2xhighway_5.5B", 93.6, 4096, 512, 2),
    "pubmed": PublishedModel(
        f"{BASE_URL}contributed/pubmed/elmo_2x4096_512_2048cnn_2xhighway_options.json",
        f"{BASE_URL}contributed/pubmed/elmo_2x4096_512_2048cnn_2xhighway_weights_PubMed_only.hdf5",
        "PubMed (biomedical abstracts)",
        None,
        4096,
        512,
        2,
    ),
    "portuguese": PublishedModel(
        f"{BASE_URL}contributed/pt/elmo_pt_options.json",
        f"{BASE_URL}contributed/pt/elmo_pt_weights.hdf5",
        "Portuguese (contributed)",
        None,
        None,
        None,
        None,
    ),
}

_FILES = {"options.json": "options_url", "weights.hdf5": "weights_url"}


def published_url(relative: str) -> str:
    """The URL of `published/<name>/options.json` or `.../weights.hdf5`."""
    name, _, file_name = relative[len(PREFIX) :].partition("/")
    model = published_model(name)
    if file_name not in _FILES:
        raise ConfigurationError(
            f"elmo_plugin://{relative}: a published biLM has the files "
            f"{' and '.join(_FILES)}, not {file_name!r}"
        )
    return getattr(model, _FILES[file_name])


def published_model(name: str) -> PublishedModel:
    if name not in PUBLISHED_MODELS:
        raise ConfigurationError(
            f"no published ELMo biLM is named {name!r}; the names are "
            f"{', '.join(PUBLISHED_MODELS)} (docs/elmo.md, 'Published biLMs')"
        )
    return PUBLISHED_MODELS[name]


def check_published_options(relative: str, options: Dict[str, Any]) -> None:
    """Checks the downloaded options of `published/<name>/...` against the sizes stated for
    `name`: a file that describes another biLM stops here, naming what differs."""
    name = relative[len(PREFIX) :].partition("/")[0]
    model = published_model(name)
    stated = {
        "lstm.dim": (model.cells, options["lstm"]["dim"]),
        "lstm.projection_dim": (model.projection, options["lstm"]["projection_dim"]),
        "char_cnn.n_highway": (model.highway, options["char_cnn"]["n_highway"]),
    }
    for key, (expected, found) in stated.items():
        if expected is not None and expected != found:
            raise ConfigurationError(
                f"the options downloaded from {model.options_url} give {key} {found}, but the "
                f"published {name!r} biLM has {expected}: a wrong or changed file; delete it "
                "from AllenNLP's cache (~/.allennlp/cache) to download it again"
            )
