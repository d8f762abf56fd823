"""
ELMo as an ONNX model for ONNX Runtime, with no PyTorch where it runs: `export.export_onnx`
writes the graph (`graph`, built from `nodes` and the token layers of `tokens`, the
ELMoForManyLangs inputs and tables of `efml`), whose input and output names are `names`';
`tokenizer` and `efml_tokenizer` make its inputs in plain Python.
"""
