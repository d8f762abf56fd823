"""
The biLM itself: the character encoder (`characters`), the LSTM with its execution paths
(`lstm`), and `ElmoBiLm`, which joins them (`model`), with the names of its layers
(`layer_names`).
"""
