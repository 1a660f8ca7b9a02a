"""byhand: the NumPy reference implementation behind the book *Every Number*.

Every op is a pair ``<op>_forward(...) -> (out, cache)`` / ``<op>_backward(dout, cache) -> grads``,
written side by side and checked against central finite differences and PyTorch autograd.
Chapters import this package; the arithmetic they show lives here.
"""
__version__ = "0.1.0"
