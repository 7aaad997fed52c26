"""autograd.misc.fixed_points.fixed_point(f, a, x0, distance, tol) -> adarray.fixed_point.

autograd's f is curried, f(a)(x), and the loop runs while distance(x, x_prev) > tol. adarray's
fixed_point takes f(a, x) and stops when every element moves by at most tol * (1 + |x|); the
`distance` function is therefore not used. Both differentiate by the implicit function theorem."""
import adarray as _ad


def fixed_point(f, a, x0, distance, tol):
    return _ad.fixed_point(lambda a, x: f(a)(x), a, x0, tol=tol)
