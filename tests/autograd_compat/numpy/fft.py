"""autograd.numpy.fft -> adarray.numpy.fft."""
from .._missing import forwarding

__getattr__ = forwarding("autograd.numpy.fft", "adarray.numpy.fft")
