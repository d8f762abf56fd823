import pytest
import torch
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import Elmo
from elmo_plugin.elmo.modules.elmo import span_rows


@pytest.mark.parametrize("keep_sentence_boundaries", [False, True])
@pytest.mark.parametrize("do_layer_norm", [False, True])
def test_span_representations_are_the_sentences_representations_cut_to_the_spans(
    elmo_options, elmo_weights, sentences, do_layer_norm, keep_sentence_boundaries
):
    elmo = Elmo(
        elmo_options,
        elmo_weights,
        2,
        dropout=0.0,
        do_layer_norm=do_layer_norm,
        keep_sentence_boundaries=keep_sentence_boundaries,
    ).eval()
    with torch.no_grad():  # distinct mixes, so that a mix-up between them shows
        for index, mix in enumerate(elmo.scalar_mixes):
            mix.scalar_parameters[index].fill_(1.0)
    ids = batch_to_ids(sentences)
    lengths = [len(sentence) for sentence in sentences]
    spans = torch.tensor([[1, 2], [0, lengths[1] - 1]] + [[0, 0]] * (len(sentences) - 2))
    whole = elmo(ids)["elmo_representations"]
    if keep_sentence_boundaries:  # the spans are the tokens', after `<S>`
        whole = [r[:, 1:] for r in whole]
    cut = elmo.span_representations(ids, spans, num_rows=max(lengths))
    assert len(cut) == 2
    for mine, sentence_rows in zip(cut, whole):
        torch.testing.assert_close(mine, span_rows(sentence_rows, spans, max(lengths)))
    assert not torch.allclose(cut[0], cut[1])
    # The layer weights learn through the cut.
    (cut[0][0, :2].sum()).backward()
    assert elmo.scalar_mixes[0].scalar_parameters.grad is not None
