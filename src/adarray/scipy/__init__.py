"""adarray.scipy: SciPy look-alikes (linalg, special, stats, integrate) built on adarray.numpy.

    import adarray.scipy as asp
    asp.special.logsumexp(x)       # traced inside ad.grad / ad.jit, computed directly otherwise
"""
