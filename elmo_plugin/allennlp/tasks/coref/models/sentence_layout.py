"""
A batch of documents, each a run of sentences, seen two ways: as documents `(batch_size,
num_words, dim)`, where spans index the words, and as sentences `(num_sentences, max_length,
dim)`, one row a sentence of any document, which is how Lee et al. (2017) run their biLSTM and
how the biLM reads its input (a sentence at a time, as it was trained and as its activation
cache keys it).
"""

import torch


class SentenceLayout:
    """
    Moves tensors between the document and the sentence layout of one batch.

    # Parameters

    sentence_lengths : `torch.LongTensor`
        `(batch_size, max_num_sentences)`: the number of words of each sentence of each
        document, in order, padded with 0 (the `litbank_coref` reader's `sentence_lengths`).
    num_words : `int`
        The padded number of words of the documents (the text field's length).
    """

    def __init__(self, sentence_lengths: torch.Tensor, num_words: int) -> None:
        lengths = sentence_lengths.long()
        batch_size = lengths.size(0)
        totals = lengths.sum(dim=1)
        if bool((totals > num_words).any()):
            raise ValueError(
                f"the sentence lengths add up to {totals.tolist()} words, more than the "
                f"{num_words} words of the text"
            )
        real = lengths > 0
        # Each sentence's document and first word there, sentences of every document in order.
        document = torch.arange(batch_size, device=lengths.device).unsqueeze(1).expand_as(lengths)
        starts = lengths.cumsum(dim=1) - lengths
        self.lengths = lengths[real]
        self.num_sentences = int(self.lengths.numel())
        self.max_length = int(self.lengths.max()) if self.num_sentences else 0
        self.batch_size = batch_size
        self.num_words = num_words
        positions = torch.arange(self.max_length, device=lengths.device).unsqueeze(0)
        # Shape: (num_sentences, max_length)
        self.mask = positions < self.lengths.unsqueeze(1)
        flat = (document[real] * num_words + starts[real]).unsqueeze(1) + positions
        self._flat_index = torch.where(self.mask, flat, torch.zeros_like(flat))
        self._word_index = self._flat_index[self.mask]
        # Which document words some sentence holds (all of a document's words, normally).
        words = torch.zeros(batch_size * num_words, dtype=torch.bool, device=lengths.device)
        words[self._word_index] = True
        self.word_mask = words.view(batch_size, num_words)

    def to_sentences(self, document: torch.Tensor) -> torch.Tensor:
        """`(batch_size, num_words, ...)` -> `(num_sentences, max_length, ...)`, zero past each
        sentence's end."""
        flat = document.reshape(self.batch_size * self.num_words, *document.shape[2:])
        sentences = flat[self._flat_index]
        mask = self.mask.view(*self.mask.shape, *([1] * (document.dim() - 2)))
        return sentences * mask.to(sentences.dtype)

    def to_documents(self, sentences: torch.Tensor) -> torch.Tensor:
        """`(num_sentences, max_length, ...)` -> `(batch_size, num_words, ...)`, zero at the
        padding words."""
        values = sentences[self.mask]
        flat = values.new_zeros(self.batch_size * self.num_words, *sentences.shape[2:])
        flat = flat.index_copy(0, self._word_index, values)
        return flat.view(self.batch_size, self.num_words, *sentences.shape[2:])
