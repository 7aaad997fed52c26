"""autograd.util.quick_grad_check (deprecated in autograd): not provided."""
