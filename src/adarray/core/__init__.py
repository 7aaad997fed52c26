"""The IR and its contracts: avals, programs, primitives, pytrees, printing and parsing.

Nothing here imports from the rest of adarray.
"""
