// bilm_elmo_original.jsonnet on several GPUs with PyTorch's DistributedDataParallel, through
// AllenNLP's `distributed` section (bilm-tf trained on 3 GPUs). Each worker reads every n-th
// sentence of the corpus into its own lanes; the effective batch is 3 x 128 lanes.
//
//   allennlp train training_configs/bilm/bilm_elmo_original_multigpu.jsonnet -s runs/elmo_original --include-package elmo_plugin
local original = import "bilm_elmo_original.jsonnet";
// AllenNLP gives each worker its device; the single-GPU `cuda_device` is dropped.
std.mergePatch(original, {
  distributed: { cuda_devices: [0, 1, 2] },
  // NCCL reduces dense gradients only: a dense softmax gradient, and AllenNLP's clipping (the
  // trainer without `sparse_gradient_descent`'s; in distributed training its `--recover`
  // restores no random states, and logs so).
  model: { sparse_softmax_gradient: false },
  trainer: { cuda_device: null, type: "exact_resume_gradient_descent" },
})
