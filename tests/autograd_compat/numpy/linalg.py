"""autograd.numpy.linalg -> adarray.numpy.linalg."""
from .._missing import forwarding

__getattr__ = forwarding("autograd.numpy.linalg", "adarray.numpy.linalg")
