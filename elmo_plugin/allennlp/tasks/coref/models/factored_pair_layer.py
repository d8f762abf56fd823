"""
The first layer of Lee et al.'s antecedent scorer, `W [g_i; g_j; g_i * g_j; phi_ij] + b` over
every (span, antecedent) pair, computed without building the pairs' concatenation.
"""

import torch


class FactoredPairLayer(torch.nn.Module):
    """
    One linear layer over pair vectors `[target; antecedent; target * antecedent; feature]`,
    with its weight split by those four parts: `W_t target + W_a antecedent + W_p (target *
    antecedent) + W_f feature + b`. The target and antecedent parts are computed once a span
    (not once a pair) and the feature part once a feature, so a pair costs one `span_dim x
    output_dim` product instead of `(3 span_dim + feature_dim) x output_dim`, and no pair
    vector of `3 span_dim + feature_dim` is built; the result is the same linear function (the
    weight is one `torch.nn.Linear`'s, initialised as that layer would be).

    # Parameters

    span_dim : `int`
    feature_dim : `int`
    output_dim : `int`
    """

    def __init__(self, span_dim: int, feature_dim: int, output_dim: int) -> None:
        super().__init__()
        self.span_dim = span_dim
        self.feature_dim = feature_dim
        self.linear = torch.nn.Linear(3 * span_dim + feature_dim, output_dim)

    def get_output_dim(self) -> int:
        return self.linear.out_features

    def forward(
        self,
        spans: torch.Tensor,
        antecedent_indices: torch.Tensor,
        features: torch.Tensor,
    ) -> torch.Tensor:
        """
        # Parameters

        spans : `torch.Tensor`
            `(batch_size, num_spans, span_dim)`.
        antecedent_indices : `torch.LongTensor`
            `(batch_size, num_spans, num_antecedents)`: each span's antecedents, indices into
            `spans`.
        features : `torch.Tensor`
            `(batch_size, num_spans, num_antecedents, feature_dim)`, or any shape that
            broadcasts to it (e.g. `(num_antecedents, feature_dim)`).

        # Returns

        `(batch_size, num_spans, num_antecedents, output_dim)`: the layer on each pair's
        `[span; antecedent; span * antecedent; feature]`.
        """
        target_weight, antecedent_weight, product_weight, feature_weight = self.linear.weight.split(
            [self.span_dim, self.span_dim, self.span_dim, self.feature_dim], dim=1
        )
        batch_size, num_spans, num_antecedents = antecedent_indices.shape
        offsets = torch.arange(batch_size, device=spans.device).view(-1, 1, 1) * num_spans
        flat_indices = (antecedent_indices + offsets).reshape(-1)
        flat_spans = spans.reshape(batch_size * num_spans, -1)
        antecedents = flat_spans.index_select(0, flat_indices).view(
            batch_size, num_spans, num_antecedents, -1
        )
        antecedent_part = torch.nn.functional.linear(flat_spans, antecedent_weight)
        antecedent_part = antecedent_part.index_select(0, flat_indices).view(
            batch_size, num_spans, num_antecedents, -1
        )
        target_part = torch.nn.functional.linear(spans, target_weight, self.linear.bias)
        product_part = torch.nn.functional.linear(spans.unsqueeze(2) * antecedents, product_weight)
        feature_part = torch.nn.functional.linear(features, feature_weight)
        return target_part.unsqueeze(2) + antecedent_part + product_part + feature_part
