"""The reverse-mode engine: order, accumulation, release, versions, modes."""

import numpy as np
import pytest

import onemodel as om
from onemodel.autograd import Function


def test_simple_gradients_by_hand():
    x = om.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = om.tensor([0.5, -1.0], requires_grad=True)
    y = ((x * w).sum(1) - 1.0).relu().mean()
    y.backward()
    # rows: 0.5-2-1 < 0 (relu off); 1.5-4-1 < 0 → all zero
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    z = (x * w).sum()
    z.backward()
    assert x.grad.tolist() == [[0.5, -1.0], [0.5, -1.0]]
    assert w.grad.tolist() == [4.0, 6.0]


def test_gradients_accumulate_across_calls_and_can_be_zeroed_or_cleared():
    x = om.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    buf = x.grad
    om.autograd.zero_grad(x)
    assert x.grad is buf and x.grad.tolist() == [0.0, 0.0]
    om.autograd.clear_grad(x)
    assert x.grad is None


def test_emissions_are_summed_in_reverse_topological_order():
    # L = (sum(x·1) + sum(x·1e8)) + sum(x·-1e8). The DFS post-order is
    # Mul1, Sum1, Mul2, Sum2, Add1, Mul3, Sum3, Add2; records run in reverse,
    # so x receives -1e8, then 1e8, then 1: (-1e8 + 1e8) + 1 = 1 in float32.
    # The forward order would give (1 + 1e8) + -1e8 = 0.
    x = om.tensor([1.0], requires_grad=True)
    loss = ((x * 1.0).sum() + (x * 1e8).sum()) + (x * -1e8).sum()
    loss.backward()
    assert x.grad.item() == 1.0


def test_topological_order_is_post_order_in_input_order():
    x = om.tensor([1.0], requires_grad=True)
    a = x * 2
    b = a + x
    c = b * a
    order = [r.name for r in om.autograd.topological_order(c.grad_fn)]
    assert order == ["Mul", "Add", "Mul"]
    assert om.autograd.topological_order(c.grad_fn)[-1] is c.grad_fn


def test_non_scalar_backward_needs_a_gradient_of_the_same_shape():
    x = om.ones(2, 2, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="one-element"):
        y.backward()
    with pytest.raises(ValueError, match="does not match"):
        y.backward(om.ones(3))
    y.backward(om.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert x.grad.tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_second_backward_raises_graph_released_before_any_work():
    x = om.tensor([2.0], requires_grad=True)
    w = om.tensor([3.0], requires_grad=True)
    h = x * w
    y = (h * h).sum()
    y.backward()
    g_before = (x.grad.tolist(), w.grad.tolist())
    with pytest.raises(om.GraphReleasedError, match="retain_graph"):
        y.backward()
    assert (x.grad.tolist(), w.grad.tolist()) == g_before
    assert isinstance(om.GraphReleasedError("x"), RuntimeError)


def test_a_graph_that_saved_nothing_runs_backward_twice_as_torch():
    # torch frees only saved tensors: a second backward through additions,
    # reshapes and a mean needs none of them, so it runs and accumulates.
    x = om.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x + 1.0).reshape(3, 1).mean()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2 * float(np.float32(1 / 3))] * 3  # two passes of the mean's 1/3, doubled exactly
    # One node that saved a tensor (the multiplication) and the whole
    # second pass is refused before any gradient is written.
    z = ((x + 1.0) * x).sum()
    z.backward()
    g = x.grad.tolist()
    with pytest.raises(om.GraphReleasedError, match="Mul"):
        z.backward()
    assert x.grad.tolist() == g


def test_retain_graph_allows_a_second_pass():
    x = om.tensor([2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 8.0


def test_modifying_a_saved_tensor_raises_version_error_naming_the_op():
    x = om.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0  # non-leaf, saved by the Mul below
    y = (a * a).sum()
    with om.no_grad():
        a.add_(1.0)
    with pytest.raises(om.TensorVersionError, match="Mul"):
        y.backward()
    assert x.grad is None  # nothing was written


def test_in_place_on_a_tensor_that_requires_grad_is_refused_while_recording():
    w = om.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="no_grad"):
        w.add_(1.0)
    with om.no_grad():
        w.add_(1.0)
    assert w.tolist() == [2.0, 2.0]


def test_no_grad_and_enable_grad_as_context_managers_and_decorators():
    x = om.ones(1, requires_grad=True)
    with om.no_grad():
        assert not (x * 2).requires_grad
        with om.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @om.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    assert om.is_grad_enabled()
    om.set_grad_enabled(False)
    assert not om.is_grad_enabled()
    om.set_grad_enabled(True)


def test_backward_through_a_chain_of_100000_ops_does_not_recurse():
    x = om.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_a_leaf_root_gets_the_seed():
    x = om.tensor(3.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_gradients_are_contiguous_with_the_tensors_shape():
    base = om.randn(4, 6, generator=om.Generator().manual_seed(0))
    leaf = base.t()[::2].detach().requires_grad_()  # strided, non-contiguous leaf
    (leaf * leaf).sum().backward()
    assert leaf.grad.shape == leaf.shape
    assert leaf.grad.is_contiguous()
    assert np.allclose(leaf.grad.numpy(), 2 * leaf.detach().numpy())


def test_records_hold_edges_shapes_and_saved_versions():
    x = om.ones(2, 3, requires_grad=True)
    y = om.ones(3)
    z = x * y
    rec = z.grad_fn
    assert rec.edges[0] is x and rec.edges[1] is None
    assert rec.input_meta[0][0] == (2, 3) and rec.input_meta[1][0] == (3,)
    assert [v for _, v in rec.saved] == [x._version, y._version]


def test_a_wrong_backward_shape_is_reported():
    class Bad(Function):
        def forward(self, a):
            return a * 1.0

        def backward(self, g):
            return om.ones(5)

    x = om.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="shape"):
        Bad.apply(x).sum().backward()


def test_engine_temporaries_and_leaf_grads_are_not_tied_to_a_scope():
    x = om.ones(3, requires_grad=True)
    with om.ActivationScope():
        (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]  # still readable after the scope
