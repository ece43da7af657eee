"""The Tensor's methods and Python operators, by family, as mixin classes
that ``onemodel.tensor.Tensor`` inherits. Each method is a thin call of the
operator function in ``onemodel.ops`` (where the arithmetic, the backward
rule and the argument checks are); a reader finds every method of a tensor
here, declared with torch's signature.

The mixins reach the operators through the ``onemodel.ops`` package object
(looked up at call time): the operator modules import ``Tensor``, so they
cannot be imported before the class exists.
"""

from .arithmetic import ArithmeticMethods
from .comparison import ComparisonMethods
from .conversion import ConversionMethods
from .creation import CreationMethods
from .math import MathMethods
from .reduction import ReductionMethods
from .selection import SelectionMethods
from .shape import ShapeMethods
from .surface import SurfaceMethods

__all__ = ["ArithmeticMethods", "ComparisonMethods", "ConversionMethods", "CreationMethods", "MathMethods", "ReductionMethods", "SelectionMethods", "ShapeMethods", "SurfaceMethods"]
