"""autograd.scipy -> adarray.scipy."""
