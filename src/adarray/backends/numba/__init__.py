"""The Numba backend: programs (today: scalar kernels and their derivatives) generated as Python
source and compiled by Numba into fused native loops, cached on disk. Optional: everything here
works out without numba installed (kernels then run on the NumPy backend's interpreter)."""
