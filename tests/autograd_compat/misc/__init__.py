"""autograd.misc: flatten, the optimizers (sgd, rmsprop, adam: written here) and fixed_point."""
from .flatten import flatten  # noqa: F401
