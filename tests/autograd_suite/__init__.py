"""autograd's own tests and examples, run on adarray through tests/autograd_compat (see README.md)."""
