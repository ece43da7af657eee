"""conv_transpose3d / nn.ConvTranspose3d against a float64 reference written
from the definition (each input element adds x·w into the outputs its taps
reach, then the padding is cropped), and its input gradient against the
adjoint: d/dx <conv_transpose3d(x, w), g> = conv3d(g, w) with the same
stride, padding, dilation and groups (conv3d is the library's separate
im2col composition)."""

import itertools

import numpy as np
import pytest

import onemodel as om
import onemodel.nn.functional as F

RNG = np.random.default_rng(51)


def reference(x, w, b, s, p, op, g, d):
    n, c_in, *size = x.shape
    og, k = w.shape[1], w.shape[2:]
    full = [(size[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(3)]
    out = np.zeros((n, og * g, *full))
    cg = c_in // g
    for ic, (z, y, xx), (a, bb, c) in itertools.product(range(c_in), np.ndindex(*size), np.ndindex(*k)):
        grp = ic // cg
        out[:, grp * og:(grp + 1) * og, z * s[0] + a * d[0], y * s[1] + bb * d[1], xx * s[2] + c * d[2]] += \
            x[:, ic, z, y, xx, None].astype(np.float64) * w[ic, :, a, bb, c]
    outs = [full[i] - op[i] - 2 * p[i] + op[i] for i in range(3)]
    out = out[:, :, p[0]:p[0] + outs[0], p[1]:p[1] + outs[1], p[2]:p[2] + outs[2]]
    return out + b.reshape(1, -1, 1, 1, 1)


CASES = [((1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (1, 1, 1)),
         ((2, 2, 2), (1, 1, 1), (1, 1, 1), 2, (1, 1, 1)),
         ((1, 2, 3), (0, 1, 2), (0, 1, 2), 1, (2, 1, 1)),
         ((2, 1, 2), (1, 0, 1), (0, 0, 1), 2, (1, 2, 1))]


@pytest.mark.parametrize("s,p,op,g,d", CASES)
def test_forward_and_input_gradient(s, p, op, g, d):
    x = RNG.standard_normal((2, 4, 3, 2, 3)).astype(np.float32)
    w = RNG.standard_normal((4, 6 // g, 2, 3, 2)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    xt = om.tensor(x)
    xt.requires_grad_(True)
    out = F.conv_transpose3d(xt, om.tensor(w), om.tensor(b), s, p, op, g, d)
    np.testing.assert_allclose(out.detach().numpy(), reference(x, w, b, s, p, op, g, d), rtol=1e-5, atol=1e-5)
    gout = RNG.standard_normal(tuple(out.shape)).astype(np.float32)
    (out * om.tensor(gout)).sum().backward()
    adjoint = F.conv3d(om.tensor(gout), om.tensor(w), None, s, p, d, g).numpy()
    np.testing.assert_allclose(xt.grad.numpy(), adjoint, rtol=1e-4, atol=1e-4)


def test_module_output_size_and_errors():
    m = om.nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert tuple(m.weight.shape) == (4, 3, 3, 3, 3) and tuple(m.bias.shape) == (6,)
    x = om.tensor(RNG.standard_normal((2, 4, 3, 4, 5)).astype(np.float32))
    assert tuple(m(x).shape) == (2, 6, 6, 8, 10)
    assert tuple(m(x, output_size=[6, 8, 9]).shape) == (2, 6, 6, 8, 9)
    with pytest.raises(ValueError, match="output padding must be smaller"):
        F.conv_transpose3d(x, m.weight, None, 1, 0, 1)
    with pytest.raises(ValueError, match="do not match groups"):
        F.conv_transpose3d(x, om.zeros(3, 2, 1, 1, 1))
