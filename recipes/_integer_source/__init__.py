"""Helpers of recipes/integer_source.py: which reads a float value serves
(reads.py), which integer constants become float together (together.py)."""
