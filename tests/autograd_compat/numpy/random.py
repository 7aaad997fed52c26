"""autograd.numpy.random is NumPy's random module (data, not differentiated)."""
from numpy.random import *  # noqa: F403
