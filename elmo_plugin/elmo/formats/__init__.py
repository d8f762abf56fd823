"""
The biLM's files: `naming/` turns the name a user gives a biLM into its files and format before
any is read (and imports no codec); the codecs read and write each format (bilm-tf:
`bilm_tf.py`, `bilm_tf_options.py`, `exports.py`; ELMoForManyLangs: `efml/`; TensorFlow
checkpoints and Hub modules: `tensorflow/`; ONNX export: `onnx/`); `readers.py` holds one reader
a format, in one table, and `loading.py`'s `load_bilm` resolves a name once and reads it there.
"""
