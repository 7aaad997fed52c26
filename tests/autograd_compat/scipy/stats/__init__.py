"""autograd.scipy.stats -> adarray.scipy.stats."""
