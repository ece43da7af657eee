"""Exceptions raised by onemodel (all subclasses of the built-in ones users
already catch)."""


class GraphReleasedError(RuntimeError):
    """A backward pass reached a record whose saved state was already freed by
    an earlier backward pass (call backward(retain_graph=True) the first time
    to keep it)."""


class TensorVersionError(RuntimeError):
    """A tensor saved for the backward pass was modified in place after it was
    saved, so the gradient would be computed from the wrong values."""


class ContainerError(ValueError):
    """A file onemodel cannot read (``onemodel.load``, ``CrnnV0.load``,
    ``Trainer.load_checkpoint``): truncated, corrupted, not safetensors, or
    holding something other than what its format says. The message names
    the file and what is wrong with it."""
