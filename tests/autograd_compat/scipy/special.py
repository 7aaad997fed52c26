"""autograd.scipy.special -> adarray.scipy.special."""
from .._missing import forwarding

__getattr__ = forwarding("autograd.scipy.special", "adarray.scipy.special")
