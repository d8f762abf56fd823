"""
The task configs and config blocks, installed as the package `elmo_plugin.training_configs`
(setup.py maps this folder there): `elmo_plugin://training_configs/<task>/<config>.jsonnet` and
jsonnet's `import "elmo_plugin/training_configs/..."` name these files from any directory.
"""
