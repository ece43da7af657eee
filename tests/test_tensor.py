"""Tensor data model: creation, views, versions, NumPy interop, repr."""

import numpy as np
import pytest

import onemodel as om


def test_tensor_from_data_infers_dtype():
    assert om.tensor([1.5, 2]).dtype is om.float32
    assert om.tensor([1, 2]).dtype is om.int64
    assert om.tensor(3.0).shape == ()
    assert om.tensor([[1, 2], [3, 4]], dtype=om.float32).dtype is om.float32
    assert om.tensor([True, False]).dtype is om.bool
    with pytest.raises(TypeError, match="float32 or int64"):
        om.tensor([1.0], dtype="float16")


def test_creation_functions():
    assert om.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert om.ones((2,)).tolist() == [1.0, 1.0]
    assert om.full((2,), 7).dtype is om.int64
    assert om.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert om.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert om.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert om.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert om.zeros_like(om.ones(2, 2)).shape == (2, 2)
    with pytest.raises(ValueError, match="negative dimension"):
        om.zeros(-1)


def test_seeded_generator_is_reproducible_and_sane():
    a = om.randn(1000, generator=om.Generator().manual_seed(5))
    b = om.randn(1000, generator=om.Generator().manual_seed(5))
    c = om.randn(1000, generator=om.Generator().manual_seed(6))
    assert np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    big = om.randn(200_000, generator=om.Generator().manual_seed(1)).numpy().astype(np.float64)
    # Mean and variance of 2e5 standard normals: 5-sigma bands.
    assert abs(big.mean()) < 5 / np.sqrt(2e5)
    assert abs(big.var() - 1.0) < 5 * np.sqrt(2 / 2e5)
    u = om.rand(100_000, generator=om.Generator().manual_seed(2)).numpy()
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.005
    p = om.randperm(50, generator=om.Generator().manual_seed(3)).tolist()
    assert sorted(p) == list(range(50)) and p != list(range(50))


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = om.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 2] = -1.0
    assert a[1, 2] == -1.0
    assert t.data_ptr() == a.ctypes.data


def test_from_numpy_strided_and_readonly():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = base[:, ::2].T  # non-contiguous
    t = om.from_numpy(v)
    assert t.shape == (2, 3)
    assert t.tolist() == v.tolist()
    ro = np.arange(3, dtype=np.float32)
    ro.setflags(write=False)
    r = om.from_numpy(ro)
    with pytest.raises(ValueError, match="read-only"):
        r.add_(1.0)
    # torch shares a float64 / uint8 array; onemodel, which holds neither, copies it
    # into float32 / int64 (what the usual .float() / .long() after it asks for).
    d = om.from_numpy(np.array([0.1, 2.0, -3.5]))
    assert d.dtype == om.float32 and d.tolist() == np.array([0.1, 2.0, -3.5], np.float32).tolist()
    assert om.from_numpy(np.array([[1, 255]], np.uint8)).dtype == om.int64
    with pytest.raises(TypeError, match="float32, int64 and bool"):
        om.from_numpy(np.array(["a"]))
    with pytest.raises(ValueError, match="negative"):
        om.from_numpy(np.arange(3, dtype=np.float32)[::-1])


def test_numpy_is_a_zero_copy_view():
    t = om.arange(6.0).reshape(2, 3)
    a = t.numpy()
    assert a.ctypes.data == t.data_ptr()
    a[0, 1] = 9.0
    assert t[0, 1].item() == 9.0
    tt = t.t()
    assert tt.numpy().tolist() == np.array(t.tolist()).T.tolist()
    with pytest.raises(RuntimeError, match="requires grad"):
        om.ones(2, requires_grad=True).numpy()
    assert np.asarray(t).shape == (2, 3)


@pytest.mark.parametrize(
    "index",
    [
        (0,),
        (slice(None), 1),
        (Ellipsis, None, slice(1, None, 2)),
        (1, slice(0, 3, 2), -1),
        (None,),
        (slice(5, 1),),
        (slice(None, None, 3), Ellipsis),
        (-1, None, -2, None),
    ],
)
def test_basic_indexing_matches_numpy(index):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = om.from_numpy(a.copy())
    assert np.array_equal(t[index].numpy(), a[index])


def test_indexing_errors():
    t = om.zeros(2, 3)
    with pytest.raises(IndexError, match="out of bounds"):
        t[2]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(ValueError, match="step"):
        t[::-1]
    with pytest.raises(IndexError, match="valid indices"):
        t[1.5]
    with pytest.raises(IndexError, match="int64 or bool"):
        t[om.tensor([0.0])]
    with pytest.raises(IndexError, match="the shape of the mask"):
        t[om.tensor([True, False, True])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        t[[0, 1], [0, 1, 2]]


def test_views_share_storage_and_reshape_copies_only_when_needed():
    t = om.arange(24.0).reshape(2, 3, 4)
    assert t.permute(2, 0, 1)._storage is t._storage
    assert t.transpose(0, 2).shape == (4, 3, 2)
    assert t.unsqueeze(1).shape == (2, 1, 3, 4)
    assert t.unsqueeze(-1).shape == (2, 3, 4, 1)
    assert t[:, :1].squeeze(1).shape == (2, 4)
    assert t.view(6, 4)._storage is t._storage
    nc = t.transpose(1, 2)
    assert not nc.is_contiguous()
    r = nc.reshape(2, 12)  # needs a copy
    assert r._storage is not t._storage
    assert r.tolist() == np.arange(24).reshape(2, 3, 4).transpose(0, 2, 1).reshape(2, 12).tolist()
    with pytest.raises(ValueError, match="reshape"):
        nc.view(2, 12)
    e = om.ones(3, 1).expand(3, 4)
    assert e.stride() == (1, 0) and e.shape == (3, 4)
    assert om.ones(4).broadcast_to((2, 4)).shape == (2, 4)
    assert om.ones(2, 3, 4).flatten(1).shape == (2, 12)
    assert nc.contiguous().is_contiguous()
    assert t.reshape(-1, 4).shape == (6, 4)
    with pytest.raises(ValueError, match="invalid for input of size 24"):
        t.reshape(5, -1)
    with pytest.raises(ValueError, match="cannot be expanded"):
        om.ones(3, 2).expand(3, 4)


def test_in_place_writes_bump_the_version():
    t = om.zeros(3)
    v0 = t._version
    t.add_(1.0)
    t.mul_(2.0)
    t[0] = 5.0
    t.copy_(om.ones(3))
    t.zero_()
    assert t._version == v0 + 5
    view = t[1:]
    view.fill_(3.0)
    assert t._version == v0 + 6  # views share the counter
    assert t.tolist() == [0.0, 3.0, 3.0]


def test_setitem_broadcasts_and_handles_overlap():
    t = om.arange(6.0).reshape(2, 3)
    t[0] = om.tensor([7.0, 8.0, 9.0])
    t[1, :] = 1.0
    assert t.tolist() == [[7.0, 8.0, 9.0], [1.0, 1.0, 1.0]]
    u = om.arange(5.0)
    u[1:] = u[:4]  # overlapping source
    assert u.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]


def test_item_tolist_repr_len_iter():
    t = om.tensor([[1.0, 2.0]], requires_grad=True)
    assert om.tensor([2.5]).item() == 2.5
    assert "requires_grad=True" in repr(t)
    assert "grad_fn=<Mul>" in repr(t * 2)
    # As torch: the dtype is shown only where the values do not imply it.
    assert repr(om.tensor([1])) == "tensor([1])" and "dtype" not in repr(om.tensor([True]))
    assert repr(om.zeros(0, dtype=om.int64)) == "tensor([], dtype=onemodel.int64)"
    assert len(t) == 1
    assert [r.tolist() for r in om.tensor([[1.0], [2.0]])] == [[1.0], [2.0]]
    with pytest.raises(ValueError, match="2 elements"):
        om.tensor([1.0, 2.0]).item()


def test_zero_element_tensors():
    z = om.zeros(0, 3)
    assert z.numel() == 0
    assert (z + 1).shape == (0, 3)
    assert z.sum().item() == 0.0
    assert z.sum(0).tolist() == [0.0, 0.0, 0.0]
    assert (z.t() @ z).tolist() == [[0.0] * 3] * 3
    x = om.zeros(0, 2, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.shape == (0, 2)


def test_requires_grad_rules():
    with pytest.raises(TypeError, match="float32"):
        om.tensor([1]).requires_grad_()
    x = om.ones(2, requires_grad=True)
    y = x * 2
    assert y.requires_grad and not y.is_leaf and x.is_leaf
    assert not y.detach().requires_grad
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
