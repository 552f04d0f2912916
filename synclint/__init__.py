"""synclint: find and fix the places where the host blocks on the GPU in PyTorch code."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("synclint")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.1.0"

__all__ = ["__version__"]
