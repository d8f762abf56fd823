"""
ELMo in a Ray Data pipeline: `ElmoBatches` is the callable class for `Dataset.map_batches`, so
that each actor loads the biLM once and embeds every block it is given in the token-budget
batches of `elmo-embed` (`arrow_embedding`). Runnable example: docs/examples/ray_embed.py;
when to use it: docs/scale.md.

    dataset.map_batches(
        ElmoBatches,
        fn_constructor_kwargs={"model": "small", "pool": "tfhub-default"},
        batch_format="pyarrow",
        concurrency=2,
        num_cpus=1,
    )
"""

from typing import Any

from elmo_plugin.embedding.arrow_embedding import ArrowEmbedder


class ElmoBatches(ArrowEmbedder):
    """`ArrowEmbedder` as Ray Data calls it: a block (a `pyarrow.Table`, with
    `batch_format="pyarrow"`) in, the block with its embedding column out. Takes
    `ArrowEmbedder`'s parameters (`fn_constructor_kwargs`)."""

    def __call__(self, block: Any) -> Any:
        return self.embed_table(block)
