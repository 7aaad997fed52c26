"""autograd.scipy.stats.chi2 -> adarray.scipy.stats.chi2."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.chi2", "adarray.scipy.stats.chi2")
