"""autograd.builtins: its containers are Python's own here (adarray differentiates pytrees of them)."""
import builtins as _builtins

tuple, list, dict = _builtins.tuple, _builtins.list, _builtins.dict  # noqa: A001
isinstance, type = _builtins.isinstance, _builtins.type  # noqa: A001
