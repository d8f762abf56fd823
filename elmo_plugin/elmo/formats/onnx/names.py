"""The ONNX model's input and output names, and the extra that installs `onnx`: what the export,
the graph and the token layers share."""

INPUT_NAME = "character_ids"
WORD_IDS_NAME = "word_ids"
LAYERS_NAME = "layers"
MASK_NAME = "mask"
MIXED_NAME = "mixed"
# The setup.cfg extra that installs what exporting and running the model need.
ONNX_EXTRA = "onnx"
