"""Tensor-core numerics (ptxfp.tensor).  fragments.py: the mma.sync fragment layouts as data."""
