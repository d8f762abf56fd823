"""
CUDA graphs of the fused LSTM path's step loops: a captured graph launches a whole loop at
once, with no Python and no launch per kernel. `GraphCache` keeps one per input shape (and per
training or inference), captured the second time a shape comes (a shape seen once, as most
are in embedding batches of every length, is not worth the capture). It knows nothing of the
LSTM: the fused layer (`elmo_plugin.elmo.bilm.lstm.fused_layer`) hands it the step loop and its
backward pass.
"""

from typing import Callable, Dict, Hashable, Optional, Sequence, Tuple

import torch

from elmo_plugin.elmo.execution import devices


class CapturedGraph:
    """One captured CUDA graph of `function` over static copies of its tensor inputs: a call
    copies the new inputs in, replays, and returns the static outputs."""

    def __init__(self, function: Callable, inputs: Sequence[torch.Tensor]) -> None:
        self.function = function
        self.inputs = [t.detach().clone() for t in inputs]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up: kernels compiled, workspaces made
            function(*self.inputs)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.outputs = function(*self.inputs)

    def __call__(self, *inputs: torch.Tensor):
        for static, given in zip(self.inputs, inputs):
            static.copy_(given)
        self.graph.replay()
        return self.outputs


class ForwardGraph(CapturedGraph):
    """A forward step loop's graph, its backward's (captured on first need) and whether its
    buffers are in use: a forward pass's buffers are its backward pass's inputs, so until that
    has run a second forward pass of the shape takes the eager path.

    `backward(outputs, state_weight, projection_weight, lengths, *grads)` is the loop's
    backward pass over the forward graph's static outputs and weights (its inputs 2 and 3)."""

    def __init__(
        self, function: Callable, inputs: Sequence[torch.Tensor], backward: Callable
    ) -> None:
        super().__init__(function, inputs)
        self.busy = False
        self._backward_function = backward
        self._backward: Optional[CapturedGraph] = None

    def __call__(self, *inputs: torch.Tensor):
        self.busy = True
        return super().__call__(*inputs)

    def release(self) -> None:
        self.busy = False

    def backward_graph(self, lengths: torch.Tensor, grads: Sequence[torch.Tensor]) -> CapturedGraph:
        if self._backward is None:
            run, (state_weight, projection_weight) = self.outputs, self.inputs[2:4]

            def backward(lengths, *grads):
                return self._backward_function(
                    run, state_weight, projection_weight, lengths, *grads
                )

            self._backward = CapturedGraph(backward, [lengths, *grads])
        return self._backward


class GraphCache:
    """
    The CUDA graphs of one layer's step loops, at most `MAX_SHAPES` of them, keyed by the
    caller's key and the inputs' shapes, dtypes and devices.
    """

    MAX_SHAPES = 16

    def __init__(self) -> None:
        self._graphs: Dict[Tuple, ForwardGraph] = {}
        self._seen: set = set()

    def forward_graph(
        self,
        key: Hashable,
        inputs: Sequence[torch.Tensor],
        steps: Callable,
        backward: Callable,
    ) -> Optional[ForwardGraph]:
        """The graph of `steps` over inputs like `inputs`, or None: off CUDA, the first time
        a shape comes, past `MAX_SHAPES`, or while the graph's buffers are in use."""
        if not devices.captures_cuda_graphs(inputs[0]):
            return None
        full_key = (key,) + tuple((t.shape, t.dtype, t.device) for t in inputs)
        graph = self._graphs.get(full_key)
        if graph is not None:
            return None if graph.busy else graph
        if full_key not in self._seen or len(self._graphs) >= self.MAX_SHAPES:
            self._seen.add(full_key)
            return None
        graph = self._graphs[full_key] = ForwardGraph(steps, inputs, backward)
        return graph

    def clear(self) -> None:
        self._graphs.clear()
        self._seen.clear()
