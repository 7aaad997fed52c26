"""autograd.scipy.stats.poisson -> adarray.scipy.stats.poisson."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.poisson", "adarray.scipy.stats.poisson")
