"""The SRL tags every label mode, reader, metric and predictor shares."""

# On tokens that are in no argument (span mode) or head no argument (head mode).
OUTSIDE_TAG = "O"
# The predicate, and the other parts of a multiword predicate (the particle of "blow up").
PREDICATE_TAG = "V"
PREDICATE_PART_TAG = "C-V"
# The predicates are given, not predicted, so these are never scored as arguments.
PREDICATE_TAGS = (PREDICATE_TAG, PREDICATE_PART_TAG)
