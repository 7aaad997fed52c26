"""The parallel building blocks (Futhark's reduce, scan, reduce_by_index) with specialised and
general reverse-mode rules, and the sugar built on them (segment reductions)."""
from .api import (
    reduce,
    reduce_by_index,
    scan,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
)
from .general import general_reduce, general_scan

__all__ = ["general_reduce", "general_scan", "reduce", "reduce_by_index", "scan", "segment_max",
           "segment_mean", "segment_min", "segment_prod", "segment_sum"]
