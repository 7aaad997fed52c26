"""autograd.scipy.stats.gamma -> adarray.scipy.stats.gamma."""
from ..._missing import forwarding

__getattr__ = forwarding("autograd.scipy.stats.gamma", "adarray.scipy.stats.gamma")
