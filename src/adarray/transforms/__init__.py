"""Transformations: each maps a Program to a Program."""
