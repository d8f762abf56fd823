import torch

from elmo_plugin.elmo import ElmoBiLstm


def autograd_nodes(tensor):
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return [type(node).__name__ for node in seen]


def test_the_backward_pass_has_no_per_step_slices_of_the_gate_inputs():
    """A slice per step of the precomputed gate inputs makes the backward pass fill a zero
    tensor of every step's size at every step: training time quadratic in sentence length
    (it was 70% of a training step). With sentences of one length no state is ever cut
    either, so the graph must hold no slice at all."""
    torch.manual_seed(0)
    lstm = ElmoBiLstm(8, 4, 16, num_layers=2, cell_clip=3, proj_clip=3)
    inputs = torch.randn(3, 40, 8, requires_grad=True)
    outputs, _ = lstm(inputs, torch.ones(3, 40, dtype=torch.bool))
    nodes = autograd_nodes(outputs[-1].sum())
    assert nodes.count("BaddbmmBackward0") >= 2 * 40  # one per step and layer
    assert "SliceBackward0" not in nodes


def test_gradients_match_a_step_by_step_reference_with_ragged_lengths():
    torch.manual_seed(0)
    lstm = ElmoBiLstm(6, 4, 10, num_layers=1, cell_clip=1.0, proj_clip=1.0)
    inputs = torch.randn(2, 5, 6, requires_grad=True)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    outputs, _ = lstm(inputs, mask)
    (outputs[0] ** 2).sum().backward()
    assert inputs.grad is not None
    ours = inputs.grad.clone()

    layer = lstm.bilstm_layers[0]
    inputs.grad = None
    total = torch.zeros(())
    for row, length in enumerate(mask.sum(dim=1).tolist()):
        for direction, steps in ((0, range(length)), (1, reversed(range(length)))):
            hidden, memory = torch.zeros(4), torch.zeros(10)
            for t in steps:
                gates = (
                    inputs[row, t] @ layer.input_weight[direction]
                    + hidden @ layer.state_weight[direction]
                    + layer.bias[direction, 0]
                )
                i, f, o, c = gates.split(10)
                memory = (torch.sigmoid(f) * memory + torch.sigmoid(i) * torch.tanh(c)).clamp(-1, 1)
                hidden = (
                    torch.sigmoid(o) * torch.tanh(memory) @ layer.projection_weight[direction]
                ).clamp(-1, 1)
                total = total + (hidden**2).sum()
    total.backward()
    torch.testing.assert_close(ours, inputs.grad, atol=1e-5, rtol=1e-4)
