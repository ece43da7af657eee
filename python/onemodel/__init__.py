"""onemodel: CPU training whose gradients are bit-identical on every
instruction path, thread count and OS.

The names follow PyTorch's (``onemodel.tensor``, ``onemodel.nn.Linear``,
``onemodel.functional.relu``, ``onemodel.no_grad``), so a port changes the
import. See docs/api.md for the list and the differences.
"""

from __future__ import annotations

from . import _core
from .errors import GraphReleasedError, TensorVersionError
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .scope import ActivationScope
from ._device import device
from ._shape import Size
from .tensor import (
    Tensor,
    bfloat16,
    bool_,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    is_tensor,
    long,
    short,
    uint8,
)

from .creation import (
    Generator,
    arange,
    as_tensor,
    bernoulli,
    linspace,
    logspace,
    multinomial,
    normal,
    numel,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .ops.arith import add, div, mul, neg, relu, sub
from .ops.compare import (
    all,
    allclose,
    any,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    eq,
    equal,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    le,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    ne,
    not_equal,
    signbit,
)
from .ops.join import cat, stack
from .ops.pointwise import abs, erf, exp, log, pow, sigmoid, sqrt, square, tanh
from .ops.rounding import ceil, deg2rad, fix, floor, frac, nan_to_num, rad2deg, reciprocal, round, rsqrt, sgn, sign, trunc
from .ops.division import divide, floor_divide, fmod, remainder, true_divide
from .ops.binary_math import addcdiv, addcmul, copysign, fmax, fmin, heaviside, hypot, lerp, logit, xlogy
from .ops.activation import hardshrink, prelu, relu_, rrelu, rrelu_, threshold, threshold_

from .ops.transcendental import (
    acos,
    acosh,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cos,
    cosh,
    erfc,
    erfinv,
    exp2,
    expm1,
    float_power,
    log10,
    log1p,
    log2,
    logaddexp,
    logaddexp2,
    sin,
    sinc,
    sinh,
    tan,
)
from .ops.smooth_activation import celu, celu_, selu, selu_

multiply, subtract, negative, absolute = mul, sub, neg, abs
from .ops.selection import (
    clamp,
    clamp_,
    clamp_max,
    clamp_max_,
    clamp_min,
    clamp_min_,
    clip,
    clip_,
    masked_fill,
    maximum,
    minimum,
    tril,
    triu,
    where,
)
from .ops.index import (
    argwhere,
    gather,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_select,
    masked_scatter,
    masked_select,
    nonzero,
    scatter,
    scatter_add,
    scatter_reduce,
    take_along_dim,
)
from .ops.rearrange import (
    flip,
    fliplr,
    flipud,
    movedim,
    moveaxis,
    narrow,
    repeat_interleave,
    roll,
    select,
    swapaxes,
    swapdims,
    tile,
    unbind,
    unflatten,
)
from .ops.scan import cummax, cummin, cumprod, cumsum
from .ops.sort import argsort, kthvalue, median, mode, msort, sort, topk, unique
from .ops.distance import dist
from .ops.gamma_fns import digamma, lgamma, mvlgamma, polygamma
from .ops.random import poisson, standard_gamma as _standard_gamma
from .ops.triangular import cholesky_inverse, cholesky_removed as cholesky, cholesky_solve
from .ops.binary_math import ldexp
from .ops.quantile import nanquantile, quantile
from .ops.linalg import bmm, linear, matmul, mm
from .ops.rnn import gru_layer, lstm_layer
from .ops.reduce import (
    amax,
    amin,
    aminmax,
    argmax,
    argmin,
    count_nonzero,
    logsumexp,
    max,
    mean,
    min,
    nanmean,
    nansum,
    norm,
    prod,
    std,
    std_mean,
    sum,
    var,
    var_mean,
)
from .ops.shape_ops import chunk, split
# The rest of torch's tensor surface (docs/api.md, "The rest of torch's tensor surface").
from .ops.products import addbmm, addmm, addmv, addr, baddbmm, cross, dot, ger, inner, kron, mv, outer, tensordot, vdot
from .ops.einsum import einsum
from .ops.diagonal import diag, diag_embed, diagflat, diagonal, diagonal_scatter, trace, tril_indices, triu_indices
from .ops.stacking import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_tensors,
    cartesian_prod,
    column_stack,
    combinations,
    concat,
    concatenate,
    dsplit,
    dstack,
    hsplit,
    hstack,
    meshgrid,
    narrow_copy,
    ravel,
    rot90,
    row_stack,
    select_scatter,
    slice_scatter,
    take,
    tensor_split,
    vsplit,
    vstack,
)
from .ops.bucketing import bincount, bucketize, histc, isin, searchsorted, unique_consecutive, unravel_index
from .ops.statistics import (
    cdist,
    corrcoef,
    cov,
    cumulative_trapezoid,
    diff,
    logcumsumexp,
    nanmedian,
    pdist,
    renorm,
    trapezoid,
    trapz,
    vander,
)
from .ops.tensor_extras import as_strided, index_reduce, put
from .ops.dtype_rules import can_cast, promote_types, result_type
from .ops.convert import clone
from .ops.lu_solve import det, inverse, logdet, matrix_power, slogdet
from .ops.misc_surface import asarray, chain_matmul, empty_strided, is_complex, is_nonzero, randint_like, scalar_tensor, typename
from ._printoptions import set_printoptions
from .ops.softmax import log_softmax, softmax
from .ops.views import (
    broadcast_to,
    contiguous,
    expand,
    flatten,
    permute,
    reshape,
    squeeze,
    t,
    transpose,
    unsqueeze,
)
from . import autograd, compute, functional, gradcheck, linalg, nn, optim, return_types, special
from .serialization import load, save

# The program surface torch programs expect (docs/porting.md): runtime
# switches, the CPU-only cuda/backends answers, AMP without effect, data.
from ._runtime import (
    are_deterministic_algorithms_enabled,
    compile,
    get_default_device,
    get_default_dtype,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    get_rng_state,
    inference_mode,
    initial_seed,
    is_deterministic_algorithms_warn_only_enabled,
    is_floating_point,
    is_inference_mode_enabled,
    numel,
    seed,
    set_default_device,
    set_default_dtype,
    set_float32_matmul_precision,
    set_num_interop_threads,
    set_num_threads,
    set_rng_state,
    use_deterministic_algorithms,
)
from . import amp, backends, cuda, jit, utils
from . import distributions
from .amp import autocast
from ._typeinfo import channels_last, channels_last_3d, contiguous_format, finfo, iinfo, memory_format, preserve_format

__version__ = _core.__version__


def pool_stats() -> dict:
    """Counters of the buffer pool: native_allocations (buffers obtained from
    the system), outstanding_bytes (capacity in use), pooled_bytes (capacity
    waiting in free lists) and requests (buffers handed out)."""
    return dict(_core.pool_stats())


def empty_pool() -> int:
    """Give the pool's free buffers back to the system; returns bytes freed."""
    return _core.pool_trim()


def broadcast_shapes(*shapes) -> tuple:
    from ._shape import broadcast_shapes as _bs

    return _bs("broadcast_shapes", *shapes)


# torch.int is int32 and torch.bool the bool dtype; set here because
# module-level `int`/`bool` in tensor.py would shadow the builtins there.
globals()["int"] = int32
globals()["bool"] = bool_

# The public names, written out so that type checkers see them as exported
# (mypy --strict reads only a literal __all__); tests/test_typing.py checks
# that it lists every public name this module binds. A star import must not
# shadow Python's builtins, so int, float, bool and bool_ are left out.
__all__ = [
    "ActivationScope", "Generator", "GraphReleasedError", "Size", "Tensor", "TensorVersionError", "abs",
    "add", "all", "allclose", "amax", "amin", "aminmax", "amp", "any", "arange",
    "are_deterministic_algorithms_enabled", "argmax", "argmin", "argsort", "argwhere", "as_tensor",
    "autocast", "autograd", "backends", "bernoulli", "bfloat16", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "bmm", "broadcast_shapes", "broadcast_to", "cat", "cdouble", "cfloat", "channels_last",
    "channels_last_3d", "chunk", "clamp", "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "clip", "clip_", "compile", "complex128",
    "complex64", "compute", "contiguous", "contiguous_format", "count_nonzero", "creation", "cuda", "cummax",
    "cummin", "cumprod", "cumsum", "default_generator", "device", "div", "double", "dtype", "empty",
    "empty_like", "empty_pool", "enable_grad", "eq", "equal", "erf", "erfc", "erfinv", "errors", "exp", "expand", "eye",
    "finfo", "flatten", "flip", "fliplr", "flipud", "float16", "float32", "float64", "from_numpy", "full",
    "full_like", "functional", "gather", "ge", "get_default_device", "get_default_dtype",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads", "get_rng_state",
    "grad_mode", "gradcheck", "greater", "greater_equal", "gru_layer", "gt", "half", "iinfo", "index_add",
    "index_copy", "index_fill", "index_put", "index_select", "inference_mode", "initial_seed", "int16",
    "int32", "int64", "int8", "is_deterministic_algorithms_warn_only_enabled", "is_floating_point",
    "is_grad_enabled", "is_inference_mode_enabled", "is_tensor", "isclose", "isfinite", "isinf", "isnan",
    "cholesky", "cholesky_inverse", "digamma", "lgamma", "mvlgamma", "poisson", "polygamma", "cholesky_solve", "dist", "isneginf", "isposinf", "jit", "kthvalue", "ldexp", "mode", "nanquantile", "quantile", "special", "le", "less", "less_equal", "linalg", "linear", "linspace",
    "load", "log", "log_softmax", "logical_and", "logical_not", "logical_or", "logical_xor", "logspace",
    "logsumexp", "long", "lstm_layer", "lt", "manual_seed", "masked_fill", "masked_scatter", "masked_select",
    "matmul", "max", "maximum", "mean", "median", "memory_format", "min", "minimum", "mm", "moveaxis",
    "movedim", "msort", "mul", "multinomial", "nanmean", "nansum", "narrow", "ne", "neg", "nn", "no_grad",
    "nonzero", "norm", "normal", "not_equal", "numel", "ones", "ones_like", "ops", "optim", "permute",
    "pool_stats", "pow", "preserve_format", "prod", "rand", "rand_like", "randint", "randn", "randn_like",
    "randperm", "relu", "repeat_interleave", "reshape", "return_types", "roll", "save", "scatter",
    "scatter_add", "scatter_reduce", "scope", "seed", "select", "serialization", "set_default_device",
    "set_default_dtype", "set_float32_matmul_precision", "set_grad_enabled", "set_num_interop_threads",
    "set_num_threads", "set_rng_state", "short", "sigmoid", "signbit", "softmax", "sort", "split", "sqrt",
    "square", "squeeze", "stack", "std", "std_mean", "sub", "sum", "swapaxes", "swapdims", "t",
    "take_along_dim", "tanh", "tensor", "tile", "topk", "transpose", "tril", "triu", "uint8", "unbind",
    "unflatten", "unique", "unsqueeze", "use_deterministic_algorithms", "utils", "var", "var_mean", "where",
    "zeros", "zeros_like",
]

# The rest of torch's surface (docs/api.md, "The rest of torch's tensor surface").
__all__ += [
    "addbmm", "addmm", "addmv", "addr", "as_strided", "asarray", "atleast_1d", "atleast_2d", "atleast_3d",
    "baddbmm", "bincount", "block_diag", "broadcast_tensors", "bucketize", "can_cast", "cartesian_prod",
    "cdist", "chain_matmul", "clone", "column_stack", "combinations", "concat", "concatenate", "corrcoef",
    "cov", "cross", "cumulative_trapezoid", "det", "diag", "diag_embed", "diagflat", "diagonal",
    "diagonal_scatter", "diff", "distributions", "dot", "dsplit", "dstack", "einsum", "empty_strided", "ger",
    "histc", "hsplit", "hstack", "index_reduce", "inner", "inverse", "is_complex", "is_nonzero", "isin",
    "kron", "logcumsumexp", "logdet", "matrix_power", "meshgrid", "mv", "nanmedian", "narrow_copy", "outer",
    "pdist", "promote_types", "put", "randint_like", "ravel", "renorm", "result_type", "rot90", "row_stack",
    "scalar_tensor", "searchsorted", "select_scatter", "set_printoptions", "slice_scatter", "slogdet", "take",
    "tensor_split", "tensordot", "trace", "trapezoid", "trapz", "tril_indices", "triu_indices", "typename",
    "unique_consecutive", "unravel_index", "vander", "vdot", "vsplit", "vstack",
]

# The element-wise mathematics and activations (docs/api.md).
__all__ += [
    "absolute", "acos", "acosh", "addcdiv", "addcmul", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctan2", "arctanh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "celu", "celu_", "copysign",
    "cos", "cosh", "deg2rad", "divide", "exp2", "expm1", "fix", "float_power", "floor", "floor_divide",
    "fmax", "fmin", "fmod", "frac", "hardshrink", "heaviside", "hypot", "lerp", "log10", "log1p", "log2",
    "logaddexp", "logaddexp2", "logit", "multiply", "nan_to_num", "negative", "prelu", "rad2deg",
    "reciprocal", "relu_", "remainder", "round", "rrelu", "rrelu_", "rsqrt", "selu", "selu_", "sgn", "sign",
    "sin", "sinc", "sinh", "subtract", "tan", "threshold", "threshold_", "true_divide", "trunc", "xlogy",
]

# torch's legacy typed constructors (torch.LongTensor(ids), torch.FloatTensor(2, 3)).
from ._legacy import BoolTensor, FloatTensor, LongTensor  # noqa: E402

__all__ += ["BoolTensor", "FloatTensor", "LongTensor"]
