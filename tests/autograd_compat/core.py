"""autograd.core: its extension API (primitive wrapping an opaque NumPy function, defvjp) has no
adarray equivalent: adarray traces functions instead of calling NumPy on unboxed values."""


def primitive(fun):
    raise NotImplementedError("autograd.core.primitive: adarray cannot wrap an opaque NumPy function; "
                              "write it with adarray.numpy and use adarray.custom_vjp for its rule")
