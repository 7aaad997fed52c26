"""autograd.scipy.integrate.odeint(func, y0, t, args=(), **kwargs) -> adarray.scipy.integrate.odeint.

autograd wraps scipy's LSODA odeint (positional `args` tuple); adarray's follows JAX (args spread)."""
from adarray.scipy.integrate import odeint as _odeint


def odeint(func, y0, t, args=(), **kwargs):
    return _odeint(func, y0, t, *args, **kwargs)
