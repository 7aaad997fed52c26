"""autograd.scipy.signal -> adarray.scipy.signal."""
from .._missing import forwarding

__getattr__ = forwarding("autograd.scipy.signal", "adarray.scipy.signal")
