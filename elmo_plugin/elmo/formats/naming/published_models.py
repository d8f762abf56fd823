"""
The ELMo biLMs AllenNLP published, by short name: `elmo_plugin://published/<name>/options.json`
and `.../weights.hdf5` name their files (downloaded once into AllenNLP's cache), and
`ElmoEmbedder("<name>")` loads one. ELMoForManyLangs' 44 languages, as NLPL's repository hosts
them (one ZIP each, the URLs of ELMoForManyLangs' README), are `efml-<code>`
(`PUBLISHED_ARCHIVES`): `elmo_plugin://published/efml-<code>/model.zip` names the ZIP, read in
place once downloaded. docs/elmo.md shows the same tables (a test checks).

The sizes are those allennlp.org/elmo states; no public source gives file sizes or checksums,
so a downloaded `options.json` is checked against the sizes here, and the weights against the
options (every tensor's shape), as any biLM is.
"""

from typing import Any, Dict, NamedTuple, Optional

from elmo_plugin.elmo.errors import ConfigurationError

BASE_URL = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo/"
PREFIX = "published/"
# ELMoForManyLangs' models, as its README links them (NLPL's repository, version 11).
NLPL_EFML_URL = "http://vectors.nlpl.eu/repository/11/{}.zip"
EFML_PREFIX = "efml-"
ARCHIVE_NAME = "model.zip"


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


class PublishedArchive(NamedTuple):
    """A biLM published as one ZIP archive (ELMoForManyLangs' format, in NLPL's repository)."""

    url: str
    language: str
    nlpl_id: int


# ELMoForManyLangs' 44 languages (README, "Downloads"), by the codes of the CoNLL 2018 shared
# task they were trained for: language and NLPL repository id. Its simplified-Chinese model is
# left out: its only link is a bare IP address, not a stable public URL.
_EFML_LANGUAGES = {
    "ar": ("Arabic", 136),
    "bg": ("Bulgarian", 137),
    "ca": ("Catalan", 138),
    "cs": ("Czech", 139),
    "cu": ("Old Church Slavonic", 140),
    "da": ("Danish", 141),
    "de": ("German", 142),
    "el": ("Greek", 143),
    "en": ("English", 144),
    "es": ("Spanish", 145),
    "et": ("Estonian", 146),
    "eu": ("Basque", 147),
    "fa": ("Persian", 148),
    "fi": ("Finnish", 149),
    "fr": ("French", 150),
    "ga": ("Irish", 151),
    "gl": ("Galician", 152),
    "grc": ("Ancient Greek", 153),
    "he": ("Hebrew", 154),
    "hi": ("Hindi", 155),
    "hr": ("Croatian", 156),
    "hu": ("Hungarian", 157),
    "id": ("Indonesian", 158),
    "it": ("Italian", 159),
    "ja": ("Japanese", 160),
    "ko": ("Korean", 161),
    "la": ("Latin", 162),
    "lv": ("Latvian", 163),
    "nl": ("Dutch", 164),
    "nb": ("Norwegian Bokmål", 165),
    "nn": ("Norwegian Nynorsk", 166),
    "pl": ("Polish", 167),
    "pt": ("Portuguese", 168),
    "ro": ("Romanian", 169),
    "ru": ("Russian", 170),
    "sk": ("Slovak", 171),
    "sl": ("Slovene", 172),
    "sv": ("Swedish", 173),
    "tr": ("Turkish", 174),
    "ug": ("Uyghur", 175),
    "uk": ("Ukrainian", 176),
    "ur": ("Urdu", 177),
    "vi": ("Vietnamese", 178),
    "zh": ("Chinese (traditional)", 179),
}

PUBLISHED_ARCHIVES: Dict[str, PublishedArchive] = {
    EFML_PREFIX + code: PublishedArchive(NLPL_EFML_URL.format(nlpl_id), language, nlpl_id)
    for code, (language, nlpl_id) in _EFML_LANGUAGES.items()
}

_FILES = {"options.json": "options_url", "weights.hdf5": "weights_url"}


def short_names() -> str:
    """Every short name, for an error or a help text."""
    return (
        f"{', '.join(PUBLISHED_MODELS)}, and ELMoForManyLangs' {len(PUBLISHED_ARCHIVES)} "
        f"languages {', '.join(PUBLISHED_ARCHIVES)}"
    )


def published_archive(relative: str) -> Optional[str]:
    """`published/<name>/model.zip` when `relative` is `published/<name>` (with or without
    `/model.zip`) and `<name>` a published ZIP, else None."""
    if not relative.startswith(PREFIX):
        return None
    short, _, file_name = relative[len(PREFIX) :].strip("/").partition("/")
    if short in PUBLISHED_ARCHIVES and file_name in ("", ARCHIVE_NAME):
        return f"{PREFIX}{short}/{ARCHIVE_NAME}"
    return None


def published_url(relative: str) -> str:
    """The URL of `published/<name>/options.json` or `.../weights.hdf5`, or of
    `published/<name>/model.zip` for a published ZIP."""
    name, _, file_name = relative[len(PREFIX) :].partition("/")
    if name in PUBLISHED_ARCHIVES:
        if file_name != ARCHIVE_NAME:
            raise ConfigurationError(
                f"elmo_plugin://{relative}: the published biLM {name!r} is one ZIP archive, "
                f"{ARCHIVE_NAME}, not {file_name!r}"
            )
        return PUBLISHED_ARCHIVES[name].url
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
            f"{short_names()}; or name a biLM's folder, ZIP or options file"
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
