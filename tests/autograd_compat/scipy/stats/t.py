"""autograd.scipy.stats.t -> adarray.scipy.stats.t."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.t", "adarray.scipy.stats.t")
