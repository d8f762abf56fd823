import pytest
import torch
from allennlp.data import Batch, Vocabulary
from allennlp.modules.seq2seq_encoders import PytorchSeq2SeqWrapper
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.srl.dataset_readers import (
    ConllSrlColumnsReader,
    UniversalPropbankSrlReader,
)
from elmo_plugin.allennlp.tasks.srl.label_modes import (
    HEAD_LABELS,
    LABEL_MODES,
    SPAN_LABELS,
    LabelMode,
    label_mode,
)
from elmo_plugin.allennlp.tasks.srl.models import DeepSrl
from tests import paths

FIXTURES = paths.FIXTURES / "srl"
FIXTURE = FIXTURES / "up_english_ewt_train_slice.conllu"
OVERALL = {"precision-overall", "recall-overall", "f1-measure-overall"}


@pytest.fixture(scope="module")
def instances():
    """Each mode's instances of the fixture's first predicates, and a vocabulary of both."""
    by_mode = {
        name: list(UniversalPropbankSrlReader(label_mode=name).read(str(FIXTURE)))[:8]
        for name in LABEL_MODES
    }
    vocab = Vocabulary.from_instances([i for mode in by_mode.values() for i in mode])
    return by_mode, vocab


def make_model(vocab, mode_name):
    embedder = BasicTextFieldEmbedder(
        {"tokens": Embedding(embedding_dim=6, num_embeddings=vocab.get_vocab_size("tokens"))}
    )
    encoder = PytorchSeq2SeqWrapper(torch.nn.LSTM(6 + 2, 4, batch_first=True, bidirectional=True))
    return DeepSrl(vocab, embedder, encoder, predicate_embedding_dim=2, label_mode=mode_name)


def test_an_unknown_mode_is_a_configuration_error_naming_the_modes(instances):
    _, vocab = instances
    builders = (
        label_mode,
        lambda name: UniversalPropbankSrlReader(label_mode=name),
        lambda name: make_model(vocab, name),
    )
    for build in builders:
        with pytest.raises(ConfigurationError, match=r"one of \('span', 'head'\), found 'bio'"):
            build("bio")


def test_modes_by_name_and_their_namespaces():
    assert label_mode("span") is SPAN_LABELS and label_mode("head") is HEAD_LABELS
    assert [mode.namespace() for mode in (SPAN_LABELS, HEAD_LABELS)] == [
        "span_labels",
        "head_labels",
    ]
    assert SPAN_LABELS.namespace("my_labels") == "my_labels"
    assert ConllSrlColumnsReader()._label_namespace == SPAN_LABELS.namespace()


def test_readers_make_the_mode_tags_in_the_mode_namespace(instances):
    by_mode, _ = instances
    for name, mode_instances in by_mode.items():
        mode = LABEL_MODES[name]
        for instance in mode_instances:
            assert instance["metadata"]["label_mode"] == name
            assert instance["tags"]._label_namespace == mode.namespace()
        predicates = [i["tags"].labels[i["metadata"]["predicate_index"]] for i in mode_instances]
        assert set(predicates) == {mode.predicate_tag}


def test_the_model_has_the_same_attributes_and_outputs_in_both_modes(instances):
    by_mode, vocab = instances
    models = {name: make_model(vocab, name) for name in LABEL_MODES}
    span, head = models["span"], models["head"]
    assert set(vars(span)) == set(vars(head))
    assert dict(span.named_buffers()).keys() == dict(head.named_buffers()).keys()
    assert span.state_dict().keys() == head.state_dict().keys()
    for name, model in models.items():
        assert isinstance(model._label_mode, LabelMode) and model._label_mode.name == name
        batch = Batch(by_mode[name])
        batch.index_instances(vocab)
        output = model(**batch.as_tensor_dict())
        assert set(output) == {
            "logits",
            "class_probabilities",
            "mask",
            "predicted_tag_ids",
            "loss",
            "words",
            "predicate_index",
        }
        assert set(model.get_metrics(reset=True)) == OVERALL


def test_head_mode_decodes_the_argmax_and_span_mode_the_best_valid_bio_path():
    labels = dict(enumerate(["O", "B-V", "B-ARG0", "I-ARG0"]))
    # The argmax is "O I-ARG0", which BIO forbids; Viterbi gives the best valid path.
    log_probabilities = torch.log_softmax(torch.tensor([[2.0, 0, 0, 0], [0, 0, 0, 3.0]]), -1)
    for mode, expected in ((HEAD_LABELS, [0, 3]), (SPAN_LABELS, [2, 3])):
        transitions, start = mode.transition_constraints(labels)
        assert transitions.shape == (4, 4) and start.shape == (4,)
        assert mode.decode(log_probabilities, transitions, start) == expected
