"""Optimisers built on adarray's transformations and bounds."""
from .safe_rate import SafeRateResult, safe_rate  # noqa: F401
