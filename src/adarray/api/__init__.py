"""The user-facing transformations, on top of every layer below: how a call is staged and cached
(staging.py), which engine runs it (tiering.py), and the transformations themselves: grad.py (grad,
value_and_grad, vjp, jvp, jit, make_ir), vmap.py, jacobians.py (jacfwd, jacrev, hessian, hvp, linearize),
taylor.py (jet, taylor) and xla.py (jit, lower and data_parallel on JAX/XLA).

    >>> import adarray as ad
    >>> ad.grad is ad.api.grad.grad
    True
"""
