"""autograd.scipy.stats.norm -> adarray.scipy.stats.norm."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.norm", "adarray.scipy.stats.norm")
