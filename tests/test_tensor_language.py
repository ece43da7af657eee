"""The tensor language beyond the torch-fixture cases: the bool dtype end to
end, Python conversions, the order of index scatter-adds, the generator's
stream in the random draws, and in-place writes under autograd (rebased
history, version checks, views, refusals)."""

import numpy as np
import pytest

import onemodel as om


# -- bool dtype ------------------------------------------------------------------

def test_bool_dtype_end_to_end():
    a = np.array([[True, False, True], [False, False, True]])
    t = om.tensor(a)
    assert t.dtype is om.bool and t.element_size() == 1 and t.dtype.numpy == np.bool_
    assert t.numpy().dtype == np.bool_ and np.array_equal(t.numpy(), a)
    shared = om.from_numpy(a)  # zero-copy both ways
    a[0, 1] = True
    assert shared.tolist()[0][1] is True
    assert shared.numpy().ctypes.data == a.ctypes.data
    assert om.zeros(2, dtype=om.bool).tolist() == [False, False]
    assert om.ones(2, dtype="bool").tolist() == [True, True]
    assert om.full((2,), True).dtype is om.bool
    assert om.tensor(2.5).bool().item() is True and om.tensor([0.0, -0.0]).to(om.bool).tolist() == [False, False]
    assert om.tensor([float("nan")]).bool().item() is True
    assert t.t().contiguous().tolist() == [[True, False], [False, False], [True, True]]
    assert om.cat([t, t], 1).shape == (2, 6) and om.stack([t[0], t[1]]).dtype is om.bool
    assert t.sum().item() == 3 and t.sum().dtype is om.int64 and t.float().mean().item() == 0.5
    assert "bool" not in om.__all__ and om.bool is om.tensor([True]).dtype
    assert repr(t.dtype) == "onemodel.bool"


def test_bool_masks_through_attention_take_tensors():
    q = om.randn(2, 3, 4)
    keep = np.array([[True, False, True], [True, True, False], [False, True, True]])
    via_numpy = om.functional.scaled_dot_product_attention(q, q, q, attn_mask=keep)
    via_tensor = om.functional.scaled_dot_product_attention(q, q, q, attn_mask=om.tensor(keep))
    assert np.array_equal(via_numpy.numpy(), via_tensor.numpy())


def test_python_conversions():
    loss = om.tensor(0.123456)
    assert f"{loss:.3f}" == "0.123" and f"{om.tensor(7):d}" == "7"
    with pytest.raises(TypeError):
        f"{om.ones(2):.3f}"
    assert int(om.tensor([3.9])) == 3 and float(om.tensor(2)) == 2.0 and bool(om.tensor([1])) is True
    assert [10, 20, 30][om.tensor(2)] == 30 and [10, 20][om.tensor(True)] == 20
    with pytest.raises(TypeError):
        [1, 2][om.tensor(1.0)]
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(om.ones(2))
    x = om.arange(6).reshape(2, 3)
    assert [r.tolist() for r in x] == [[0, 1, 2], [3, 4, 5]] and len(x) == 2
    with pytest.raises(TypeError, match="0-d"):
        iter(om.tensor(1.0)).__next__()
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and om.tensor([True]).tolist() == [True]
    assert x.size() == (2, 3) and x.size().numel() == 6 and repr(x.shape) == "onemodel.Size([2, 3])"
    assert isinstance(x.shape[1:], om.Size) and x.shape[1:] == (3,) and x.size(-1) == 3
    assert x.type() == "torch.LongTensor" and x.type(om.float32).dtype is om.float32
    assert x.type("torch.FloatTensor").dtype is om.float32 and x.long() is x
    with pytest.raises(TypeError, match="float64"):
        x.double()


def test_data_is_a_detached_alias_and_settable():
    p = om.ones(3, requires_grad=True)
    d = p.data
    assert not d.requires_grad and d._storage is p._storage
    with om.no_grad():
        d.mul_(2.0)
    assert p.tolist() == [2.0, 2.0, 2.0] and p.requires_grad
    p.data = om.zeros(2)
    assert p.shape == (2,) and p.requires_grad and p.is_leaf
    with pytest.raises(TypeError):
        p.data = om.tensor([1, 2])


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = om.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0] and x.grad.tolist() == [18.0, 36.0]


# -- orders ----------------------------------------------------------------------

def test_index_backward_sums_repeats_in_result_order_in_double():
    # Row 0 is read at positions 0, 1, 2 with gradients chosen so that the
    # float32 sum depends on the order and the double chain rounds once.
    x = om.zeros(2, 1, requires_grad=True)
    y = x[[0, 0, 0, 1]]
    g = np.array([[1.0], [4e-8], [4e-8], [5.0]], np.float32)
    y.backward(om.tensor(g))
    want = np.float32(np.float64(1.0) + np.float64(np.float32(4e-8)) + np.float64(np.float32(4e-8)))
    assert x.grad.numpy()[0, 0] == want and want > 1.0
    assert x.grad.numpy()[1, 0] == 5.0


def test_scatter_add_accumulates_from_the_old_value_in_source_order():
    base = om.tensor([1e8, 0.0])
    src = om.tensor([1.0, 1.0, 1.0, -1e8])
    out = om.scatter_add(base, 0, om.tensor([0, 0, 0, 0]), src)
    chain = np.float64(1e8) + 1.0 + 1.0 + 1.0 - 1e8
    assert out.tolist() == [float(np.float32(chain)), 0.0]
    out = om.zeros(2).index_put((om.tensor([1, 1, 1]),), om.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert out.tolist() == [0.0, 6.0]


def test_assignment_with_repeated_indices_keeps_the_last_write():
    x = om.zeros(4)
    x[[1, 1, 1]] = om.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [0.0, 3.0, 0.0, 0.0]
    x[[2, 2]] += 1.0  # read first: each position gets x + 1 once
    assert x.tolist() == [0.0, 3.0, 1.0, 0.0]


def test_random_draws_follow_the_generator_stream():
    g = om.Generator().manual_seed(3)
    a = om.multinomial(om.tensor([[0.0, 1.0, 3.0], [2.0, 0.0, 2.0]]), 2, generator=g)
    assert a.shape == (2, 2) and 0 not in a[0].tolist() and 1 not in a[1].tolist()
    assert len(set(a[0].tolist())) == 2 and len(set(a[1].tolist())) == 2  # without replacement
    b = om.multinomial(om.tensor([0.25, 0.75]), 4000, True, generator=om.Generator().manual_seed(1))
    assert abs(b.float().mean().item() - 0.75) < 0.03
    again = om.multinomial(om.tensor([0.25, 0.75]), 4000, True, generator=om.Generator().manual_seed(1))
    assert om.equal(b, again)
    with om.compute.threads(1):
        one = om.bernoulli(om.full((100,), 0.3), generator=om.Generator().manual_seed(9))
    with om.compute.threads(3):
        three = om.bernoulli(om.full((100,), 0.3), generator=om.Generator().manual_seed(9))
    assert om.equal(one, three) and one.dtype is om.float32
    with pytest.raises(ValueError, match="replacement=False"):
        om.multinomial(om.tensor([1.0, 0.0]), 2)
    with pytest.raises(ValueError, match="non-negative"):
        om.multinomial(om.tensor([1.0, -1.0]), 1)
    t = om.empty(1000).uniform_(-2.0, 2.0, generator=om.Generator().manual_seed(2))
    assert -2.0 <= t.min().item() and t.max().item() < 2.0
    t.normal_(1.0, 0.5, generator=om.Generator().manual_seed(2))
    assert abs(t.mean().item() - 1.0) < 0.1
    r = om.zeros(50, dtype=om.int64).random_(3, 7, generator=om.Generator().manual_seed(2))
    assert set(r.tolist()) <= {3, 4, 5, 6}


# -- in-place writes under autograd ---------------------------------------------------

def test_inplace_relu_in_a_sequential_matches_out_of_place():
    w = om.randn(4, 3, generator=om.Generator().manual_seed(1)).requires_grad_()
    x = om.randn(5, 4, generator=om.Generator().manual_seed(2))
    (om.nn.Sequential(om.nn.ReLU(inplace=True))(x @ w) * 2.0).sum().backward()
    inplace_grad = w.grad.numpy().copy()
    w.grad = None
    (om.relu(x @ w) * 2.0).sum().backward()
    assert np.array_equal(inplace_grad, w.grad.numpy())


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    p = om.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        p.add_(1.0)
    with pytest.raises(RuntimeError, match="view of a leaf"):
        (p[:2]).mul_(2.0)
    with pytest.raises(RuntimeError, match="leaf"):
        p[0] = 5.0
    with om.no_grad():
        p.add_(1.0)  # parameter updates stay allowed
    assert p.tolist() == [2.0, 2.0, 2.0] and p._version == 1


def test_inplace_write_invalidates_saved_tensors():
    x = om.ones(3, requires_grad=True)
    y = (x * 1.0).exp()  # exp saves its output
    y.add_(1.0)
    with pytest.raises(om.TensorVersionError):
        y.sum().backward()


def test_setitem_gives_a_graph_to_a_tensor_without_one():
    v = om.tensor([2.0, 3.0], requires_grad=True)
    buf = om.zeros(4)
    buf[[0, 3]] = v * v
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert v.grad.tolist() == [4.0, 6.0]


def test_views_of_a_rebased_base_are_rederived():
    x = om.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    col = y[:, 0]  # made before the write
    y[0].mul_(10.0)  # through another view: rebases y
    assert col.tolist() == [10.0, 3.0]
    (col * col).sum().backward()
    # d/dx00 of (10·x00)^2 = 200·x00 = 200; d/dx10 of x10^2 = 6
    assert x.grad.tolist() == [[200.0, 0.0], [6.0, 0.0]]


def test_inplace_results_equal_the_out_of_place_bits():
    gen = om.Generator().manual_seed(4)
    x = om.randn(6, 5, generator=gen).requires_grad_()
    m = om.rand(6, 5, generator=gen) > 0.5

    def run(inplace):
        h = x * 2.0
        if inplace:
            h.masked_fill_(m, 0.0).clamp_(-1.0, 1.0).sub_(0.5)
        else:
            h = h.masked_fill(m, 0.0).clamp(-1.0, 1.0) - 0.5
        (h * h).sum().backward()
        g = x.grad.numpy().copy()
        x.grad = None
        return h.detach().numpy().copy(), g

    (a, ga), (b, gb) = run(True), run(False)
    assert np.array_equal(a, b) and np.array_equal(ga, gb)


def test_numpy_arithmetic_honours_subnormals_when_the_caller_set_ftz():
    from onemodel import _core

    saved = _core.get_mxcsr()
    tiny = np.float32(1e-45)  # the smallest subnormal
    x = om.tensor(np.array([tiny, tiny, tiny], np.float32))
    try:
        _core.set_mxcsr(saved | 0x8040)  # flush-to-zero and denormals-are-zero, as another library might leave them
        c = x.cumsum(0)
        p = om.tensor(np.array([tiny, np.float32(2.0)], np.float32)).prod()
        after = _core.get_mxcsr()
    finally:
        _core.set_mxcsr(saved)
    # (read back only now: with DAZ set, even converting a subnormal to a Python float gives 0)
    c, p = c.numpy().copy(), p.item()
    if saved == 0 and after == 0:
        pytest.skip("no MXCSR on this machine")
    assert c.tolist() == [float(tiny), 2 * float(tiny), 3 * float(tiny)]
    assert p == float(np.float32(2 * tiny)) and after & 0x8040 == 0x8040  # restored for the caller
