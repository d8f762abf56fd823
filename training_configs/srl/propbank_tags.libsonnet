// The tags a model reserves outputs for, whether or not the training data has them: the
// fixed split's train part lacks some roles of its test set (ARGA, C-ARG1-DSP, ...), and
// the label vocabulary is made from train only (so test words do not enter the vocabulary).
// The roles are those of PropBank 3 as Universal PropBank English-EWT uses them.
local core = ["ARG0", "ARG1", "ARG2", "ARG3", "ARG4", "ARG5", "ARGA", "ARG1-DSP"];
local modifiers = ["ARGM-" + m for m in ["ADJ", "ADV", "CAU", "COM", "CXN", "DIR", "DIS", "EXT",
                                          "GOL", "LOC", "LVB", "MNR", "MOD", "NEG", "PRD", "PRP",
                                          "PRR", "REC", "TMP"]];
local base = core + modifiers;
local roles = base + ["C-" + r for r in base] + ["R-" + r for r in base];
{
  roles: roles,
  // label_mode "head": a role per argument head word.
  head: ["O", "V", "C-V"] + roles,
  // label_mode "span": BIO over argument spans.
  span: ["O", "B-V", "B-C-V"] + std.flattenArrays([["B-" + r, "I-" + r] for r in roles]),
}
