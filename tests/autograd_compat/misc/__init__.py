"""autograd.misc: flatten, the optimizers (autograd's own code, on adarray.numpy) and fixed_point."""
from .flatten import flatten  # noqa: F401
