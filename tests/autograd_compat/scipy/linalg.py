"""autograd.scipy.linalg -> adarray.scipy.linalg."""
from .._missing import forwarding

__getattr__ = forwarding("autograd.scipy.linalg", "adarray.scipy.linalg")
