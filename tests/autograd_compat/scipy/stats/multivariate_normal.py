"""autograd.scipy.stats.multivariate_normal -> adarray.scipy.stats.multivariate_normal."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.multivariate_normal", "adarray.scipy.stats.multivariate_normal")
