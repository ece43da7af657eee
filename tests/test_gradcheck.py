"""GradientCheck on every operator, with broadcasting, strided and
transposed views, in both modes; and proof that the check can fail."""

import pytest

import onemodel as om
from onemodel.autograd import Function
from onemodel.gradcheck import GradcheckError, gradient_check

GEN = om.Generator().manual_seed(42)


def leaf(*shape):
    return om.randn(*shape, generator=GEN).requires_grad_()


def strided_leaf(rows, cols):
    """A transposed, step-sliced (non-contiguous) leaf of shape (rows, cols)."""
    base = om.randn(cols * 2, rows, generator=GEN)
    return base[::2].t().detach().requires_grad_()


MODES = ["fast", "exact"]


@pytest.fixture(params=MODES)
def mode(request):
    om.compute.set_mode(request.param)
    return request.param


CASES = {
    "add_broadcast": (lambda a, b: a + b, lambda: (leaf(3, 4), leaf(4))),
    "sub_broadcast": (lambda a, b: a - b, lambda: (leaf(2, 1, 3), leaf(4, 1))),
    "mul_strided": (lambda a, b: a * b, lambda: (strided_leaf(3, 4), leaf(3, 1))),
    "div": (lambda a, b: a / (b * b + 1.0), lambda: (leaf(5), leaf(5))),
    "neg": (lambda a: -a, lambda: (strided_leaf(2, 3),)),
    "relu": (lambda a: om.relu(a * 1.0 + 0.05), lambda: (leaf(4, 5),)),
    "sum_dims": (lambda a: a.sum((0, 2), keepdim=True) * 1.5, lambda: (leaf(2, 3, 4),)),
    "sum_all": (lambda a: a.sum(), lambda: (strided_leaf(3, 3),)),
    "mean": (lambda a: a.mean(1), lambda: (leaf(3, 5),)),
    "matmul_2d": (lambda a, b: a @ b, lambda: (leaf(3, 4), leaf(4, 5))),
    "matmul_transposed": (lambda a, b: a.t() @ b, lambda: (strided_leaf(4, 3), leaf(4, 2))),
    "matmul_batched_broadcast": (lambda a, b: a @ b, lambda: (leaf(2, 1, 3, 4), leaf(3, 4, 2))),
    "matmul_vec": (lambda a, b: a @ b, lambda: (leaf(4), leaf(4, 3))),
    "matmul_fold": (lambda a, b: om.matmul(a, b), lambda: (leaf(2, 3, 4), leaf(4, 5))),
    "linear": (lambda x, w, b: om.functional.linear(x, w, b), lambda: (leaf(2, 3, 4), leaf(5, 4), leaf(5))),
    "linear_nobias_strided": (lambda x, w: om.functional.linear(x, w), lambda: (strided_leaf(3, 4), strided_leaf(2, 4))),
    "reshape_permute": (lambda a: a.reshape(3, 2, 2).permute(2, 0, 1) * om.arange(12.0).reshape(2, 3, 2), lambda: (leaf(12),)),
    "transpose_copy_reshape": (lambda a: a.transpose(0, 1).reshape(-1) * 2.0, lambda: (leaf(2, 3),)),
    "index": (lambda a: a[1:, ::2, None] * 3.0, lambda: (leaf(3, 5),)),
    "expand": (lambda a: a.expand(3, 4) * om.arange(12.0).reshape(3, 4), lambda: (leaf(3, 1),)),
    "squeeze_unsqueeze": (lambda a: a.unsqueeze(0).squeeze(2) * 2.0, lambda: (leaf(3, 1, 2),)),
    "contiguous": (lambda a: a.contiguous() * 2.0, lambda: (strided_leaf(3, 2),)),
    "clone": (lambda a: a.clone() * a, lambda: (leaf(4),)),
    "flatten": (lambda a: a.flatten(1) * 2.0, lambda: (leaf(2, 3, 2),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_check(case, mode):
    fn, make = CASES[case]
    report = gradient_check(fn, make(), name=case)
    assert report.passed
    assert report.max_scaled_error <= 1.0


def test_gradient_check_detects_a_wrong_backward():
    class WrongSquare(Function):
        def forward(self, a):
            self.save_for_backward(a)
            return a * a

        def backward(self, g):
            (a,) = self.saved_tensors
            return g * a  # should be 2·g·a

    with pytest.raises(GradcheckError, match="FAILED"):
        gradient_check(lambda a: WrongSquare.apply(a), [leaf(4)])


def test_gradient_check_reports_and_logs(tmp_path, monkeypatch):
    log = tmp_path / "gc.tsv"
    monkeypatch.setenv("ONEMODEL_GRADCHECK_LOG", str(log))
    rep = gradient_check(lambda a, b: a * b, [leaf(3), leaf(3)], name="mul_logged")
    assert len(rep.inputs) == 2
    assert "mul_logged" in log.read_text()
    assert "passed" in str(rep)


def test_gradient_check_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="requires grad"):
        gradient_check(lambda a: a * 2, [om.ones(2)])
