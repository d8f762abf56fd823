"""
The gate math of one step of ELMo's LSTM, forward and backward, for both directions at once:
one Triton kernel each way on CUDA, the same arithmetic in plain torch everywhere else.

Why a kernel: between the two matrix products of a step (the recurrent one and the projection)
sit the sum of the gate inputs, three sigmoids, two tanhs, the memory update, the cell clipping
and the output gate: about a dozen elementwise torch operations forward and twice that backward,
each a kernel launch that reads and writes the whole `(2, rows, 4 * cell)` gate block. On a GPU
those launches, not the arithmetic, set the step's pace (AllenNLP's and our unfused step issue
thousands of launches per batch); fused, each direction of each step is one launch forward and
one backward, and the gate block is read once.

The layout is the one `BiLstmLayer` keeps: gates in the order input, forget, output, candidate;
index 0 of the first dimension is the forward direction. Step tensors are views `buffer[:, t]`
of `(2, timesteps, rows, width)` buffers, so the kernels take the stride of the direction
dimension and need rows contiguous.

Forward (`gates_forward`): `gates = step_input + product + bias` in float32 (`step_input` is
the input's product, `product` the recurrent one, in the compute dtype on the fused path; the
bias is added here rather than to a float32 copy of every step's input product, which cost a
1.3 GB block a layer at 512 lanes of the paper's biLM, written, copied into a CUDA graph's
inputs and converted back in the backward pass; docs/performance.md has the profile), the
activations `i, f, o = sigmoid(...)`, `g = tanh(...)`, `memory = clip(f * memory_prev + i * g)`,
`cell_output = o * tanh(memory)` in the compute dtype.
The activated gates are kept (float32) for the backward pass when asked.

Backward (`gates_backward`): from the kept activations, `memory_prev`, the gradient of the
memory (the next step's and the final state's) and of the cell output: the gradient of the
pre-activation gates (float32, and in the compute dtype for the next recurrent product) and of
`memory_prev`. The clipping passes the gradient where `-clip <= memory <= clip`, as
`torch.clamp` does.

`TRITON_INTERPRET=1` runs the kernels on CPU tensors (how CI tests them).
"""

from typing import List, Optional, Tuple

import torch

from elmo_plugin.elmo.bilm.lstm.gate_math import step_gates
from elmo_plugin.elmo.execution import devices

try:
    import triton
    import triton.language as tl
except ImportError:  # the allennlp-2.10 profile's torch 1.12 has no Triton
    triton = None

TRITON_INSTALLED = triton is not None
BLOCK_SIZE = 1024


def uses_triton(tensor: torch.Tensor) -> bool:
    """Whether the gate math of `tensor`'s steps runs as a Triton kernel: on CUDA, or on the
    CPU under `TRITON_INTERPRET=1`."""
    return devices.runs_triton(tensor, TRITON_INSTALLED)


if triton is not None:

    @triton.jit
    def _sigmoid(x):
        return 1.0 / (1.0 + tl.exp(-x))

    @triton.jit
    def _tanh(x):
        # 2 * sigmoid(2x) - 1, stable at both ends (tl.exp overflows to inf, giving -1 or 1).
        return 2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0

    @triton.jit
    def _gate_sum(step_input_ptrs, product_ptrs, bias_ptrs, column, valid, HAS_BIAS: tl.constexpr):
        """The float32 pre-activation of the gate whose block starts at `column`."""
        step_input = tl.load(step_input_ptrs + column, mask=valid, other=0.0).to(tl.float32)
        total = step_input + tl.load(product_ptrs + column, mask=valid, other=0.0).to(tl.float32)
        if HAS_BIAS:
            total += tl.load(bias_ptrs + column, mask=valid, other=0.0)
        return total

    @triton.jit
    def _gates_forward_kernel(
        step_input_ptr,
        product_ptr,
        bias_ptr,
        memory_prev_ptr,
        memory_ptr,
        cell_output_ptr,
        kept_ptr,
        step_input_stride,
        product_stride,
        bias_stride,
        memory_prev_stride,
        memory_stride,
        cell_output_stride,
        kept_stride,
        rows,
        cell,
        cell_clip,
        HAS_BIAS: tl.constexpr,
        HAS_CLIP: tl.constexpr,
        KEEP: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        # Program (block, direction); each `*_stride` is a tensor's stride between directions.
        direction = tl.program_id(1)
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        valid = offsets < rows * cell
        gate = (offsets // cell) * 4 * cell + offsets % cell
        step_input_ptr += direction * step_input_stride + gate
        product_ptr += direction * product_stride + gate
        # The bias is one row a direction: the gate's column.
        bias_ptr += direction * bias_stride + offsets % cell
        inputs, products, biases = step_input_ptr, product_ptr, bias_ptr
        input_gate = _sigmoid(_gate_sum(inputs, products, biases, 0, valid, HAS_BIAS))
        forget_gate = _sigmoid(_gate_sum(inputs, products, biases, cell, valid, HAS_BIAS))
        output_gate = _sigmoid(_gate_sum(inputs, products, biases, 2 * cell, valid, HAS_BIAS))
        candidate = _tanh(_gate_sum(inputs, products, biases, 3 * cell, valid, HAS_BIAS))
        memory_prev = tl.load(
            memory_prev_ptr + direction * memory_prev_stride + offsets, mask=valid, other=0.0
        )
        memory = forget_gate * memory_prev + input_gate * candidate
        if HAS_CLIP:
            memory = tl.minimum(tl.maximum(memory, -cell_clip), cell_clip)
        cell_output = output_gate * _tanh(memory)
        tl.store(memory_ptr + direction * memory_stride + offsets, memory, mask=valid)
        cell_output_ptr += direction * cell_output_stride + offsets
        tl.store(cell_output_ptr, cell_output.to(cell_output_ptr.dtype.element_ty), mask=valid)
        if KEEP:
            kept_ptr += direction * kept_stride + gate
            tl.store(kept_ptr, input_gate, mask=valid)
            tl.store(kept_ptr + cell, forget_gate, mask=valid)
            tl.store(kept_ptr + 2 * cell, output_gate, mask=valid)
            tl.store(kept_ptr + 3 * cell, candidate, mask=valid)

    @triton.jit
    def _gates_backward_kernel(
        kept_ptr,
        memory_prev_ptr,
        grad_memory_ptr,
        grad_cell_output_ptr,
        grad_gates_ptr,
        grad_gates_low_ptr,
        grad_memory_prev_ptr,
        kept_stride,
        memory_prev_stride,
        grad_memory_stride,
        grad_cell_output_stride,
        grad_gates_stride,
        grad_gates_low_stride,
        grad_memory_prev_stride,
        rows,
        cell,
        cell_clip,
        HAS_CLIP: tl.constexpr,
        HAS_LOW: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        direction = tl.program_id(1)
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        valid = offsets < rows * cell
        gate = (offsets // cell) * 4 * cell + offsets % cell
        kept_ptr += direction * kept_stride + gate
        input_gate = tl.load(kept_ptr, mask=valid, other=0.0)
        forget_gate = tl.load(kept_ptr + cell, mask=valid, other=0.0)
        output_gate = tl.load(kept_ptr + 2 * cell, mask=valid, other=0.0)
        candidate = tl.load(kept_ptr + 3 * cell, mask=valid, other=0.0)
        memory_prev = tl.load(
            memory_prev_ptr + direction * memory_prev_stride + offsets, mask=valid, other=0.0
        )
        grad_memory = tl.load(
            grad_memory_ptr + direction * grad_memory_stride + offsets, mask=valid, other=0.0
        )
        grad_cell_output = tl.load(
            grad_cell_output_ptr + direction * grad_cell_output_stride + offsets,
            mask=valid,
            other=0.0,
        ).to(tl.float32)
        memory = forget_gate * memory_prev + input_gate * candidate
        if HAS_CLIP:
            inside = (memory >= -cell_clip) & (memory <= cell_clip)
            memory = tl.minimum(tl.maximum(memory, -cell_clip), cell_clip)
        tanh_memory = _tanh(memory)
        grad_output_gate = grad_cell_output * tanh_memory
        grad_memory += grad_cell_output * output_gate * (1.0 - tanh_memory * tanh_memory)
        if HAS_CLIP:
            grad_memory = tl.where(inside, grad_memory, 0.0)
        grad_input = grad_memory * candidate * input_gate * (1.0 - input_gate)
        grad_forget = grad_memory * memory_prev * forget_gate * (1.0 - forget_gate)
        grad_output = grad_output_gate * output_gate * (1.0 - output_gate)
        grad_candidate = grad_memory * input_gate * (1.0 - candidate * candidate)
        # Added to what the final state's gradient put there.
        grad_memory_prev_ptr += direction * grad_memory_prev_stride + offsets
        grad_memory_prev = tl.load(grad_memory_prev_ptr, mask=valid, other=0.0)
        tl.store(grad_memory_prev_ptr, grad_memory_prev + grad_memory * forget_gate, mask=valid)
        grad_gates_ptr += direction * grad_gates_stride + gate
        tl.store(grad_gates_ptr, grad_input, mask=valid)
        tl.store(grad_gates_ptr + cell, grad_forget, mask=valid)
        tl.store(grad_gates_ptr + 2 * cell, grad_output, mask=valid)
        tl.store(grad_gates_ptr + 3 * cell, grad_candidate, mask=valid)
        if HAS_LOW:
            grad_gates_low_ptr += direction * grad_gates_low_stride + gate
            low = grad_gates_low_ptr.dtype.element_ty
            tl.store(grad_gates_low_ptr, grad_input.to(low), mask=valid)
            tl.store(grad_gates_low_ptr + cell, grad_forget.to(low), mask=valid)
            tl.store(grad_gates_low_ptr + 2 * cell, grad_output.to(low), mask=valid)
            tl.store(grad_gates_low_ptr + 3 * cell, grad_candidate.to(low), mask=valid)


def _check_step_layout(*tensors: torch.Tensor) -> None:
    """Each `(2, rows, width)` step view must have contiguous rows; only the direction
    dimension may have another stride."""
    for tensor in tensors:
        rows, width = tensor.shape[1:]
        if tensor.stride(2) != 1 or (rows > 1 and tensor.stride(1) != width):
            raise ValueError(f"a step tensor of shape {tuple(tensor.shape)} needs contiguous rows")


def _direction_strides(*tensors: Optional[torch.Tensor]) -> List[int]:
    return [t.stride(0) if t is not None else 0 for t in tensors]


def _grid(rows: int, cell: int) -> Tuple[int, int]:
    return (triton.cdiv(rows * cell, BLOCK_SIZE), 2)


def gates_forward(
    step_input: torch.Tensor,
    product: torch.Tensor,
    memory_prev: torch.Tensor,
    memory: torch.Tensor,
    cell_output: torch.Tensor,
    kept: Optional[torch.Tensor],
    cell_clip: Optional[float],
    bias: Optional[torch.Tensor] = None,
) -> None:
    """
    One step's gate math, written into `memory` (float32, `(2, rows, cell)`), `cell_output`
    (`(2, rows, cell)`, in the compute dtype) and, unless None, `kept` (the activated gates,
    float32, `(2, rows, 4 * cell)`). `step_input` (the input's product, float32 or the compute
    dtype) and `product` (the recurrent one) are `(2, rows, 4 * cell)`, `memory_prev` `(2,
    rows, cell)`; `bias`, `(2, 1, 4 * cell)` float32, is added to their float32 sum.
    """
    if not uses_triton(step_input):
        _reference_forward(
            step_input, product, memory_prev, memory, cell_output, kept, cell_clip, bias
        )
        return
    present = [
        t for t in (step_input, product, memory_prev, memory, cell_output, kept) if t is not None
    ]
    _check_step_layout(*present)
    if bias is not None and not bias.is_contiguous():
        raise ValueError("the bias of the gates must be contiguous")
    rows, cell = memory.shape[1:]
    _gates_forward_kernel[_grid(rows, cell)](
        step_input,
        product,
        bias if bias is not None else step_input,
        memory_prev,
        memory,
        cell_output,
        kept if kept is not None else step_input,
        *_direction_strides(step_input, product, bias, memory_prev, memory, cell_output, kept),
        rows,
        cell,
        float(cell_clip or 0.0),
        HAS_BIAS=bias is not None,
        HAS_CLIP=bool(cell_clip),
        KEEP=kept is not None,
        BLOCK=BLOCK_SIZE,
    )


def gates_backward(
    kept: torch.Tensor,
    memory_prev: torch.Tensor,
    grad_memory: torch.Tensor,
    grad_cell_output: torch.Tensor,
    grad_gates: torch.Tensor,
    grad_gates_low: Optional[torch.Tensor],
    grad_memory_prev: torch.Tensor,
    cell_clip: Optional[float],
) -> None:
    """
    The backward pass of `gates_forward`, written into `grad_gates` (float32, `(2, rows, 4 *
    cell)`, the gradient of the pre-activation gates) and `grad_gates_low` (the same in the
    compute dtype, unless None), and added to `grad_memory_prev` (which holds the final state's
    gradient there, if any). `grad_memory` (float32) and `grad_cell_output`
    are the gradients of the step's two outputs.
    """
    if not uses_triton(kept):
        _reference_backward(
            kept,
            memory_prev,
            grad_memory,
            grad_cell_output,
            grad_gates,
            grad_gates_low,
            grad_memory_prev,
            cell_clip,
        )
        return
    steps = (kept, memory_prev, grad_memory, grad_cell_output, grad_gates, grad_gates_low)
    _check_step_layout(*(t for t in steps + (grad_memory_prev,) if t is not None))
    rows, cell = memory_prev.shape[1:]
    _gates_backward_kernel[_grid(rows, cell)](
        kept,
        memory_prev,
        grad_memory,
        grad_cell_output,
        grad_gates,
        grad_gates_low if grad_gates_low is not None else grad_gates,
        grad_memory_prev,
        *_direction_strides(*steps, grad_memory_prev),
        rows,
        cell,
        float(cell_clip or 0.0),
        HAS_CLIP=bool(cell_clip),
        HAS_LOW=grad_gates_low is not None,
        BLOCK=BLOCK_SIZE,
    )


def _reference_forward(
    step_input, product, memory_prev, memory, cell_output, kept, cell_clip, bias=None
):
    """`gates_forward` in torch operations: the CPU's path, and the kernel's reference."""
    gates = product.float() + step_input.float()
    if bias is not None:
        gates = gates + bias
    new_memory, new_cell_output, sigmoids, candidate = step_gates(gates, memory_prev, cell_clip)
    memory.copy_(new_memory)
    cell_output.copy_(new_cell_output)
    if kept is not None:
        kept.copy_(torch.cat([sigmoids, candidate], dim=-1))


def _reference_backward(
    kept,
    memory_prev,
    grad_memory,
    grad_cell_output,
    grad_gates,
    grad_gates_low,
    grad_memory_prev,
    cell_clip,
):
    input_gate, forget_gate, output_gate, candidate = kept.chunk(4, dim=-1)
    memory = forget_gate * memory_prev + input_gate * candidate
    inside = None
    if cell_clip:
        inside = (memory >= -cell_clip) & (memory <= cell_clip)
        memory = memory.clamp(-cell_clip, cell_clip)
    tanh_memory = torch.tanh(memory)
    grad_cell_output = grad_cell_output.float()
    grad_output_gate = grad_cell_output * tanh_memory
    total = grad_memory + grad_cell_output * output_gate * (1 - tanh_memory * tanh_memory)
    if inside is not None:
        total = torch.where(inside, total, torch.zeros_like(total))
    grads = torch.cat(
        [
            total * candidate * input_gate * (1 - input_gate),
            total * memory_prev * forget_gate * (1 - forget_gate),
            grad_output_gate * output_gate * (1 - output_gate),
            total * input_gate * (1 - candidate * candidate),
        ],
        dim=-1,
    )
    grad_gates.copy_(grads)
    if grad_gates_low is not None:
        grad_gates_low.copy_(grads)
    grad_memory_prev.add_(total * forget_gate)
