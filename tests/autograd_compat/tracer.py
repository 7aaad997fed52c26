"""autograd.tracer.isbox: is this a traced value?"""
from adarray.tracing import Tracer


def isbox(x):
    return isinstance(x, Tracer)
