"""Run-time helpers that synclint's fixes call (needs torch; linting never imports this)."""

from synclint.runtime.h2d import async_tensor_h2d

__all__ = ["async_tensor_h2d"]
