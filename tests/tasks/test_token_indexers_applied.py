"""Every reader makes its `TextField`s without token indexers and attaches them in
`apply_token_indexers` (what AllenNLP's data loader with workers needs), and every predictor,
the two that skip `Predictor.predict_instance` included, predicts through them."""

import copy

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Vocabulary
from allennlp.data.fields import TextField
from allennlp.models import Model
from allennlp.modules.seq2seq_encoders import PytorchSeq2SeqWrapper
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.modules.token_embedders import Embedding

from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.allennlp.tasks.coref.dataset_readers import LitbankCorefReader
from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader
from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.allennlp.tasks.snli.dataset_readers import SnliJsonlReader
from elmo_plugin.allennlp.tasks.squad.dataset_readers import SquadV1Reader
from elmo_plugin.allennlp.tasks.squad.predictors.squad_answer import SquadAnswerPredictor
from elmo_plugin.allennlp.tasks.srl.dataset_readers import (
    ConllSrlColumnsReader,
    UniversalPropbankSrlReader,
)
from elmo_plugin.allennlp.tasks.srl.models import DeepSrl
from elmo_plugin.allennlp.tasks.srl.predictors.deep_srl import DeepSrlPredictor
from tests.fields import metadata_of
from tests.paths import FIXTURES

PASSAGE = "The Broncos beat the Panthers 24 to 10 in Santa Clara ."


def _text_fields(instance):
    return [field for field in instance.fields.values() if isinstance(field, TextField)]


@pytest.mark.parametrize(
    "reader,arguments",
    [
        (Conll2003NerReader(), (["Peter", "lives", "here"],)),
        (SnliJsonlReader(), ("A dog runs .", "An animal moves .")),
        (SstTreesReader(), (["A", "lovely", "film"],)),
        (SquadV1Reader(), ("Who won ?", PASSAGE)),
        (UniversalPropbankSrlReader(), (["Bush", "nominated", "them"], 1)),
        (ConllSrlColumnsReader(), (["Bush", "nominated", "them"], 1)),
        (BilmCorpusReader(), (["a", "b"],)),
        (LitbankCorefReader(), ([["He", "came"], ["She", "left"]],)),
    ],
)
def test_text_to_instance_leaves_the_indexers_to_apply_token_indexers(reader, arguments):
    instance = reader.text_to_instance(*arguments)
    assert _text_fields(instance) and all(f._token_indexers is None for f in _text_fields(instance))
    reader.apply_token_indexers(instance)
    assert all(f._token_indexers for f in _text_fields(instance))


def _outputs_of(model, instances):
    batch = Batch(copy.deepcopy(instances))
    batch.index_instances(model.vocab)
    with torch.no_grad():
        return model.make_output_human_readable(model(**batch.as_tensor_dict()))


def test_the_srl_predictor_applies_the_token_indexers():
    reader = UniversalPropbankSrlReader()
    instances = list(reader.read(str(FIXTURES / "srl" / "up_english_ewt_train_slice.conllu")))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    embedder = BasicTextFieldEmbedder(
        {"tokens": Embedding(embedding_dim=6, num_embeddings=vocab.get_vocab_size("tokens"))}
    )
    encoder = PytorchSeq2SeqWrapper(torch.nn.LSTM(8, 4, batch_first=True, bidirectional=True))
    model = DeepSrl(vocab, embedder, encoder, predicate_embedding_dim=2).eval()
    words = metadata_of(instances[0])["words"]
    index = metadata_of(instances[0])["predicate_index"]
    predicted = DeepSrlPredictor(model, reader).predict_json(
        {"tokens": words, "predicate_indices": [index]}
    )
    expected = _outputs_of(model, [instances[0]])["tags"][0]
    assert predicted["verbs"][0]["tags"] == list(expected)


def test_the_squad_predictor_applies_the_token_indexers():
    reader = SquadV1Reader(passage_length_limit=60, skip_answers_outside_passage=True)
    instances = list(reader.read(str(FIXTURES / "squad" / "tiny_train.json")))
    vocab = Vocabulary.from_instances(instances)
    lstm = {"type": "lstm", "hidden_size": 5, "bidirectional": True}
    torch.manual_seed(0)
    model = Model.from_params(
        vocab=vocab,
        params=Params(
            {
                "type": "bidaf_rc",
                "text_field_embedder": {
                    "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}
                },
                "phrase_layer": lstm,
                "modeling_layer": lstm,
                "span_end_encoder": lstm,
                "dropout": 0.0,
            }
        ),
    ).eval()
    metadata = metadata_of(instances[0])
    question = " ".join(metadata["question_tokens"])
    predictor = SquadAnswerPredictor(model, reader)
    one = predictor.predict(question, metadata["passage"])
    both = predictor.predict_batch_json(
        [{"question": question, "passage": metadata["passage"]}] * 2
    )
    instance = reader.text_to_instance(question, metadata["passage"])
    reader.apply_token_indexers(instance)
    expected = _outputs_of(model, [instance])
    assert one["best_span_str"] == expected["best_span_str"][0] == both[1]["best_span_str"]
