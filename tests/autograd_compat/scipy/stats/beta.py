"""autograd.scipy.stats.beta -> adarray.scipy.stats.beta."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.beta", "adarray.scipy.stats.beta")
