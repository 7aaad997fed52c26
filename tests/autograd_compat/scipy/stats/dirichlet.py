"""autograd.scipy.stats.dirichlet -> adarray.scipy.stats.dirichlet."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.dirichlet", "adarray.scipy.stats.dirichlet")
