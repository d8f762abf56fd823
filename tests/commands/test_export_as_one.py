"""An export (options, weights, softmax, vocabulary) is replaced as one set: killed at any file
boundary, or written by two exports at once, its readers get the old export whole, the new one
whole, or an error naming the file; never one's weights with the other's softmax."""

import copy
import os
import threading

import pytest
import torch

import elmo_plugin.allennlp.commands  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files import file_sets
from elmo_plugin.elmo.formats import exports
from elmo_plugin.allennlp.lm import export as export_module
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.export import export_bilm
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from elmo_plugin.allennlp.lm.perplexity import language_model_from_export
from tests.lm.conftest import run_allennlp

KILLED = 9
WRITERS = ["options", "weights", "softmax", "vocabulary"]
MIXED = "not the file written with the others"


@pytest.fixture
def old_and_new(tmp_path, elmo_options, elmo_weights):
    vocab_file = tmp_path / "words.txt"
    vocab_file.write_text("<S>\n</S>\n<UNK>\nthe\ncat\nsat\n", encoding="utf-8")
    vocabulary = CorpusVocabulary.from_corpus(vocab_file=str(vocab_file))
    old = BilmLanguageModel(vocabulary, options_file=elmo_options, weight_file=elmo_weights)
    new = copy.deepcopy(old)
    with torch.no_grad():
        for parameter in new.parameters():
            parameter.add_(0.5)
    return old, new


def _which(directory, old, new):
    """ "old" or "new" when the export in `directory` reads back as that model, whole."""
    read = language_model_from_export(str(directory))
    for name, model in (("old", old), ("new", new)):
        same_bilm = torch.allclose(_first_lstm_weight(read), _first_lstm_weight(model))
        same_softmax = torch.allclose(read.softmax.bias, model.softmax.bias)
        if same_bilm and same_softmax:
            return name
        assert not (same_bilm or same_softmax), f"a mix of the {name} export and another"
    raise AssertionError("neither export")


def _first_lstm_weight(model):
    return model.bilm.lstm.layers[0].input_weight


def _visible(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir() if not p.name.startswith(".")}


def _killed_export(model, directory, arm) -> int:
    """Exports `model` in a forked process that `arm` sets up to die (`os._exit`, as kill -9:
    nothing cleans up) at one file boundary; its exit code."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            arm()
            export_bilm(model, str(directory), include_softmax=True)
        finally:
            os._exit(0)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _dying(function, calls_before_dying: int, after: bool):
    count = [0]

    def wrapped(*args, **kwargs):
        count[0] += 1
        if not after and count[0] > calls_before_dying:
            os._exit(KILLED)
        result = function(*args, **kwargs)
        if after and count[0] > calls_before_dying:
            os._exit(KILLED)
        return result

    return wrapped


def _die_after_writer(index: int):
    def arm():
        # The set's writers in order: options, weights (exports), softmax, vocabulary.
        softmax_files = export_module.softmax_files

        def dying_softmax_files(*args):
            writers = softmax_files(*args)
            names = list(writers)
            for position, name in enumerate(names):
                if position + 2 == index:
                    writers[name] = _dying(writers[name], 0, after=True)
            return writers

        export_module.softmax_files = dying_softmax_files
        if index == 0:
            exports._write_json = _dying(exports._write_json, 0, after=True)
        if index == 1:
            exports.write_weights = _dying(exports.write_weights, 0, after=True)

    return arm


@pytest.mark.parametrize("index", range(len(WRITERS)), ids=WRITERS)
def test_killed_after_a_file_is_written_leaves_the_old_export_whole(tmp_path, old_and_new, index):
    old, new = old_and_new
    out = tmp_path / "export"
    export_bilm(old, str(out), include_softmax=True)
    before = _visible(out)
    assert _killed_export(new, out, _die_after_writer(index)) == KILLED
    assert _visible(out) == before
    assert _which(out, old, new) == "old"


@pytest.mark.parametrize("renamed", range(5))
def test_killed_between_two_renames_is_an_error_never_a_mix(tmp_path, old_and_new, renamed):
    """`renamed` files of the four renamed onto their names, then killed (4: all but the
    manifest). Before the first rename the old export is whole; after it, the files no longer
    match the manifest, and readers say so."""
    old, new = old_and_new
    out = tmp_path / "export"
    export_bilm(old, str(out), include_softmax=True)

    def arm():
        if renamed < 4:
            file_sets.commit_partial = _dying(file_sets.commit_partial, renamed, after=False)
        else:
            file_sets._write_manifest = _dying(file_sets._write_manifest, 0, after=False)

    assert _killed_export(new, out, arm) == KILLED
    # options.json is the same bytes in both (same sizes): renamed, it changes nothing.
    expected = "old" if renamed < 2 else "refused"
    assert _read_or_refused(out, old, new) == expected

    export_bilm(new, str(out), include_softmax=True)  # exporting again mends it
    assert _which(out, old, new) == "new"
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json",
        "options.json",
        "softmax.hdf5",
        "vocab.txt",
        "weights.hdf5",
    ]


def _read_or_refused(directory, old, new):
    try:
        return _which(directory, old, new)
    except ConfigurationError as error:
        assert MIXED in str(error)
        return "refused"


def test_ctrl_c_during_the_renames_waits_until_they_are_done(tmp_path, old_and_new):
    import signal

    old, new = old_and_new
    out = tmp_path / "export"
    export_bilm(old, str(out), include_softmax=True)
    commit = file_sets.commit_partial

    def interrupted_commit(*args):
        os.kill(os.getpid(), signal.SIGINT)  # held back until the set is renamed
        commit(*args)

    # Another thread, as torch's and gloo's are in a real process: the kernel may hand it the
    # signal, which a signal mask on the main thread alone does not hold.
    other = threading.Event()
    threading.Thread(target=other.wait, daemon=True).start()

    file_sets.commit_partial = interrupted_commit
    # Ctrl-C as in a terminal: a process started in the background by a non-interactive shell
    # (`nohup ... &`) inherits SIGINT ignored, and then it stays ignored, held or not.
    ignored_or_not = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            export_bilm(new, str(out), include_softmax=True)
    finally:
        signal.signal(signal.SIGINT, ignored_or_not)
        file_sets.commit_partial = commit
        other.set()
    assert _which(out, old, new) == "new"


def test_two_exports_at_once_leave_one_of_them_whole(tmp_path, old_and_new):
    old, new = old_and_new
    out = tmp_path / "export"
    export_bilm(old, str(out), include_softmax=True)
    for _ in range(4):
        read_end, write_end = os.pipe()
        children = []
        for model in (old, new):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                try:
                    os.read(read_end, 1)  # both start together
                    export_bilm(model, str(out), include_softmax=True)
                finally:
                    os._exit(0)
            children.append(pid)
        os.write(write_end, b"go")
        for pid in children:
            assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        os.close(read_end)
        os.close(write_end)
        assert _which(out, old, new) in ("old", "new")


def test_an_export_without_softmax_over_one_with_it_leaves_no_silent_mix(tmp_path, old_and_new):
    old, new = old_and_new
    out = tmp_path / "export"
    export_bilm(old, str(out), include_softmax=True)
    export_bilm(new, str(out))
    with pytest.raises(ConfigurationError, match=r"(vocab\.txt|softmax\.hdf5) is not one of"):
        language_model_from_export(str(out))
    with pytest.raises(ConfigurationError, match=r"it is left from an earlier export"):
        BilmLanguageModel(
            new.vocab,
            options_file=str(out / "options.json"),
            weight_file=str(out / "weights.hdf5"),
            softmax_file=str(out / "softmax.hdf5"),
        )


def test_perplexity_output_in_a_missing_directory_fails_before_the_work(tmp_path, monkeypatch):
    from elmo_plugin.allennlp.lm import perplexity

    def evaluated(*args):
        raise AssertionError("evaluated before the output was checked")

    monkeypatch.setattr(perplexity, "export_perplexity", evaluated)
    output = tmp_path / "missing" / "metrics.json"
    with pytest.raises(ConfigurationError, match=r"the directory .*missing does not exist"):
        run_allennlp(
            "elmo-perplexity",
            "elmo_plugin://pretrained/elmo_wikipedia_512x128",
            "fixtures/lm/sentences.txt",
            "--output-file",
            str(output),
        )


def test_export_into_a_directory_below_a_file_fails_before_loading(tmp_path, monkeypatch):
    def loaded(*args, **kwargs):
        raise AssertionError("loaded before the output was checked")

    monkeypatch.setattr(export_module, "load_checked_archive", loaded)
    (tmp_path / "file").write_text("mine")
    with pytest.raises(ConfigurationError, match=r"file is not a directory"):
        export_bilm(str(tmp_path / "model.tar.gz"), str(tmp_path / "file" / "out"))
    assert (tmp_path / "file").read_text() == "mine"
