// The paper's small biLM (elmo_2x1024_128_2048cnn_1xhighway): two biLSTM layers of 1024
// cells with 128-dimensional projections, the 2048-filter character CNN, one highway layer;
// bilm-tf's recipe otherwise, as bilm_elmo_original.jsonnet. For a GPU.
local original = import "bilm_elmo_original.jsonnet";
local bilm = import "bilm.libsonnet";
original + {
  model+: { bilm: bilm.elmo_small },
}
