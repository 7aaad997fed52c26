"""autograd.util.quick_grad_check (deprecated in autograd): a reverse-mode, first-order check_grads."""
import warnings


def quick_grad_check(fun, arg0, extra_args=(), kwargs={}, verbose=True, eps=1e-4, rtol=1e-4, atol=1e-6, rs=None):  # noqa: B006
    """autograd's deprecated helper, as autograd 1.9 defines it: check_grads of fun(arg0, *extra_args,
    **kwargs) in arg0, reverse mode, first order (the tolerances are adarray's policy)."""
    from .test_util import check_grads

    warnings.warn("autograd.util.quick_grad_check is deprecated: use autograd.test_util.check_grads", stacklevel=2)
    check_grads(lambda x: fun(x, *extra_args, **kwargs), modes=["rev"], order=1)(arg0)
