import pytest
import torch
from allennlp.data import Batch, Vocabulary
from allennlp.data.fields import SequenceLabelField
from allennlp.modules.seq2seq_encoders import PytorchSeq2SeqWrapper
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding
from allennlp.nn.util import viterbi_decode

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.srl.bio_transitions import bio_transition_constraints
from elmo_plugin.allennlp.tasks.srl.dataset_readers import UniversalPropbankSrlReader
from elmo_plugin.allennlp.tasks.srl.models import DeepSrl
from tests import paths
from tests.fields import field_of

FIXTURES = paths.FIXTURES / "srl"
FIXTURE = FIXTURES / "up_english_ewt_train_slice.conllu"
SPAN_TAGS = ["O", "B-V", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-ARGM-TMP", "I-ARGM-TMP"]


def is_valid_bio(tags):
    previous = "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            return False
        previous = tag
    return True


def favour_inside_tags(num_steps, labels, generator):
    # Random scores where I- tags usually win: an argmax decode is then invalid BIO.
    scores = torch.randn(num_steps, len(labels), generator=generator)
    for index, tag in labels.items():
        if tag.startswith("I-"):
            scores[:, index] += 3.0
    return torch.log_softmax(scores, dim=-1)


def test_constrained_viterbi_never_emits_invalid_bio():
    labels = dict(enumerate(SPAN_TAGS))
    transitions, start = bio_transition_constraints(labels)
    generator = torch.Generator().manual_seed(0)
    argmax_invalid = 0
    for _ in range(200):
        num_steps = int(torch.randint(1, 12, (1,), generator=generator))
        log_probs = favour_inside_tags(num_steps, labels, generator)
        path, _ = viterbi_decode(log_probs, transitions, allowed_start_transitions=start)
        assert is_valid_bio([labels[i] for i in path])
        argmax_invalid += not is_valid_bio([labels[int(i)] for i in log_probs.argmax(-1)])
    assert argmax_invalid > 150  # the constraint, not the scores, makes the paths valid


def make_model(label_mode, instances):
    vocab = Vocabulary.from_instances(instances)
    embedder = BasicTextFieldEmbedder(
        {"tokens": Embedding(embedding_dim=6, num_embeddings=vocab.get_vocab_size("tokens"))}
    )
    encoder = PytorchSeq2SeqWrapper(torch.nn.LSTM(6 + 2, 4, batch_first=True, bidirectional=True))
    return DeepSrl(vocab, embedder, encoder, predicate_embedding_dim=2, label_mode=label_mode)


def test_model_decodes_valid_bio_and_scores_the_decode():
    instances = list(UniversalPropbankSrlReader().read(str(FIXTURE)))
    model = make_model("span", instances)
    labels = model.vocab.get_index_to_token_vocabulary("span_labels")
    with torch.no_grad():
        for index, tag in labels.items():
            model._tag_projection._module.bias[index] = 5.0 if tag.startswith("I-") else 0.0
    batch = Batch(instances[:16])
    batch.index_instances(model.vocab)
    output = model.make_output_human_readable(model(**batch.as_tensor_dict()))
    assert len(output["tags"]) == 16
    for tags, words in zip(output["tags"], output["words"]):
        assert len(tags) == len(words) and is_valid_bio(tags)
    assert torch.isfinite(output["loss"])
    metrics = model.get_metrics(reset=True)
    assert {"precision-overall", "recall-overall", "f1-measure-overall"} <= set(metrics)


def test_head_mode_uses_the_dependency_metric():
    instances = list(UniversalPropbankSrlReader(label_mode="head").read(str(FIXTURE)))
    model = make_model("head", instances)
    batch = Batch(instances[:8])
    batch.index_instances(model.vocab)
    model(**batch.as_tensor_dict())
    metrics = model.get_metrics()
    assert 0.0 <= metrics["f1-measure-overall"] <= 1.0
    assert model._metric._num_gold == sum(
        t not in ("O", "V", "C-V")
        for i in instances[:8]
        for t in field_of(i, "tags", SequenceLabelField).labels
    )


def test_label_mode_mismatches_are_refused():
    span_instances = list(UniversalPropbankSrlReader().read(str(FIXTURE)))
    with pytest.raises(ConfigurationError, match="expects the tag 'V'"):
        make_model("head", span_instances)
    head_instances = list(UniversalPropbankSrlReader(label_mode="head").read(str(FIXTURE)))
    vocab_instances = span_instances + head_instances  # both namespaces, as the configs do
    model = make_model("span", vocab_instances)
    batch = Batch(head_instances[:2])
    batch.index_instances(model.vocab)
    with pytest.raises(ConfigurationError, match="same label_mode"):
        model(**batch.as_tensor_dict())
