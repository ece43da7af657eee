"""Recurrent layers: values against a float64 NumPy reference written from
torch's documented equations, gradient checks, modules, inference path and
bit identity."""

import numpy as np
import pytest

import onemodel as om
from conftest import THREAD_COUNTS, PATHS, bits, sha256_of
from onemodel.gradcheck import gradient_check

GEN = om.Generator().manual_seed(7)


def rnd(*shape, scale=0.5):
    return om.randn(*shape, generator=GEN) * scale


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_ref(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse):
    t_len, b, _ = x.shape
    h = w_hh.shape[1]
    hcur = np.zeros((b, h)) if h0 is None else h0.copy()
    ccur = np.zeros((b, h)) if c0 is None else c0.copy()
    out = np.zeros((t_len, b, h))
    order = range(t_len - 1, -1, -1) if reverse else range(t_len)
    for t in order:
        g = x[t] @ w_ih.T + hcur @ w_hh.T
        if b_ih is not None:
            g = g + b_ih + b_hh
        i, f, gg, o = sig(g[:, :h]), sig(g[:, h : 2 * h]), np.tanh(g[:, 2 * h : 3 * h]), sig(g[:, 3 * h :])
        ccur = f * ccur + i * gg
        hcur = o * np.tanh(ccur)
        out[t] = hcur
    return out, hcur, ccur


def gru_ref(x, w_ih, w_hh, b_ih, b_hh, h0, reverse):
    t_len, b, _ = x.shape
    h = w_hh.shape[1]
    hcur = np.zeros((b, h)) if h0 is None else h0.copy()
    out = np.zeros((t_len, b, h))
    order = range(t_len - 1, -1, -1) if reverse else range(t_len)
    for t in order:
        xi = x[t] @ w_ih.T + (0 if b_ih is None else b_ih)
        hh = hcur @ w_hh.T + (0 if b_hh is None else b_hh)
        r = sig(xi[:, :h] + hh[:, :h])
        z = sig(xi[:, h : 2 * h] + hh[:, h : 2 * h])
        n = np.tanh(xi[:, 2 * h :] + r * hh[:, 2 * h :])
        hcur = (1 - z) * n + z * hcur
        out[t] = hcur
    return out, hcur


def f64(t):
    return None if t is None else t.detach().numpy().astype(np.float64)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_bias,with_state", [(True, True), (False, False), (True, False)])
def test_lstm_layer_matches_float64_reference(reverse, with_bias, with_state):
    t, b, i, h = 5, 3, 4, 6
    x, w_ih, w_hh = rnd(t, b, i), rnd(4 * h, i), rnd(4 * h, h)
    b_ih, b_hh = (rnd(4 * h), rnd(4 * h)) if with_bias else (None, None)
    h0, c0 = (rnd(b, h), rnd(b, h)) if with_state else (None, None)
    out, h_n, c_n = om.lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse=reverse)
    want, wh, wc = lstm_ref(*map(f64, (x, w_ih, w_hh, b_ih, b_hh, h0, c0)), reverse)
    assert np.allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    assert np.allclose(h_n.numpy(), wh, rtol=1e-5, atol=1e-6)
    assert np.allclose(c_n.numpy(), wc, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_gru_layer_matches_float64_reference(reverse):
    t, b, i, h = 6, 2, 3, 5
    args = (rnd(t, b, i), rnd(3 * h, i), rnd(3 * h, h), rnd(3 * h), rnd(3 * h), rnd(b, h))
    out, h_n = om.gru_layer(*args, reverse=reverse)
    want, wh = gru_ref(*map(f64, args), reverse)
    assert np.allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    assert np.allclose(h_n.numpy(), wh, rtol=1e-5, atol=1e-6)


def leaf(*shape):
    return rnd(*shape).detach().requires_grad_()


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_bias,with_state", [(True, True), (False, False)])
def test_lstm_layer_gradients(mode, reverse, with_bias, with_state):
    om.compute.set_mode(mode)
    t, b, i, h = 4, 2, 3, 3
    inputs = [leaf(t, b, i), leaf(4 * h, i), leaf(4 * h, h)]
    inputs += [leaf(4 * h), leaf(4 * h)] if with_bias else [None, None]
    inputs += [leaf(b, h), leaf(b, h)] if with_state else [None, None]

    def f(x, w_ih, w_hh, b_ih, b_hh, h0, c0):
        out, h_n, c_n = om.lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse=reverse)
        return out * 1.0, c_n * 2.0  # the final cell state is differentiable too

    gradient_check(f, inputs, name=f"lstm_layer_{mode}")


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("reverse", [False, True])
def test_gru_layer_gradients(mode, reverse):
    om.compute.set_mode(mode)
    t, b, i, h = 4, 2, 3, 3
    inputs = [leaf(t, b, i), leaf(3 * h, i), leaf(3 * h, h), leaf(3 * h), leaf(3 * h), leaf(b, h)]
    gradient_check(lambda *a: om.gru_layer(*a, reverse=reverse)[0], inputs, name=f"gru_layer_{mode}")


def _direction_args(kind, t, b, i, h, with_bias, with_state):
    gates = 4 if kind == "lstm" else 3
    dirs = []
    for reverse in (False, True):
        d = [leaf(gates * h, i), leaf(gates * h, h)]
        d += [leaf(gates * h), leaf(gates * h)] if with_bias else [None, None]
        d += [leaf(b, h)] if with_state else [None]
        if kind == "lstm":
            d += [leaf(b, h)] if with_state else [None]
        dirs.append(d + [reverse])
    return leaf(t, b, i), dirs


def _grads(tensors):
    return [None if v is None or v.grad is None else v.grad.numpy().copy() for v in tensors]


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("with_bias,with_state", [(True, True), (False, False)])
def test_two_directions_at_once_equal_two_single_direction_calls(kind, mode, with_bias, with_state):
    """The two-direction operator (what nn.LSTM/GRU use) gives the bits of
    two lstm_layer/gru_layer calls: each direction's columns, h_n, c_n and
    every gradient, the input's being dx_reverse + dx_forward; at 1 and 2
    threads (the two directions then run on different threads)."""
    om.compute.set_mode(mode)
    x, dirs = _direction_args(kind, 7, 3, 5, 4, with_bias, with_state)
    leaves = [x] + [v for d in dirs for v in d[:-1]]
    weights = [om.randn(7, 3, 4, generator=GEN) for _ in dirs]
    single = om.lstm_layer if kind == "lstm" else om.gru_layer
    both = om.ops.rnn.lstm_directions if kind == "lstm" else om.ops.rnn.gru_directions
    results = []
    for threads in (1, 2):
        with om.compute.settings(threads=threads):
            for v in leaves:
                if v is not None:
                    v.grad = None
            outs = []
            for d, w in zip(dirs, weights):
                outs.append(single(x, *d[:-1], reverse=d[-1]))
            loss = None
            for res, w in zip(outs, weights):
                part = (res[0] * w).sum() + res[1].sum() * 0.5
                if kind == "lstm":
                    part = part + res[2].sum() * 0.25
                loss = part if loss is None else loss + part
            loss.backward()
            want = [bits(np.concatenate([r[0].detach().numpy() for r in outs], axis=2))]
            want += [bits(r[k].detach().numpy()) for r in outs for k in range(1, len(outs[0]))]
            want_grads = _grads(leaves)

            for v in leaves:
                if v is not None:
                    v.grad = None
            res = both(x, [tuple(d) for d in dirs])
            h = dirs[0][1].shape[1]
            loss = None
            for k, w in enumerate(weights):
                part = (res[0][..., k * h:(k + 1) * h] * w).sum() + res[1][k].sum() * 0.5
                if kind == "lstm":
                    part = part + res[2][k].sum() * 0.25
                loss = part if loss is None else loss + part
            loss.backward()
            got = [bits(res[0].detach().numpy())]
            got += [bits(res[j][k].detach().numpy()) for k in range(2) for j in range(1, len(res))]
            got_grads = _grads(leaves)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))
        for a, b in zip(got_grads, want_grads):
            assert (a is None) == (b is None)
            if a is not None:
                assert np.array_equal(bits(a), bits(b))
        results.append(got + [bits(g) for g in got_grads if g is not None])
    assert all(np.array_equal(a, b) for a, b in zip(*results))


@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_two_direction_lstm_gradients(mode):
    om.compute.set_mode(mode)
    x, dirs = _direction_args("lstm", 4, 2, 3, 3, True, True)

    def f(x, *flat):
        ds = [tuple(flat[:6]) + (False,), tuple(flat[6:]) + (True,)]
        out, hs, cs = om.ops.rnn.lstm_directions(x, ds)
        return out * 1.0, cs[1] * 2.0, hs[0] * 3.0

    gradient_check(f, [x] + dirs[0][:-1] + dirs[1][:-1], name=f"lstm_directions_{mode}")


def test_two_direction_calls_refuse_bad_directions():
    x = om.ones(2, 1, 3)
    d4 = (om.ones(8, 3), om.ones(8, 2), None, None, None, None, False)
    d6 = (om.ones(12, 3), om.ones(12, 3), None, None, None, None, True)
    with pytest.raises(ValueError, match="one or two directions"):
        om.ops.rnn.lstm_directions(x, [d4, d4, d4])
    with pytest.raises(ValueError, match="one hidden size"):
        om.ops.rnn.lstm_directions(x, [d4, d6])


@pytest.mark.parametrize("cls", [om.nn.LSTM, om.nn.GRU])
@pytest.mark.parametrize("batch_first", [False, True])
def test_modules_multi_layer_bidirectional(cls, batch_first):
    m = cls(3, 4, num_layers=2, bidirectional=True, batch_first=batch_first, generator=om.Generator().manual_seed(1))
    names = [n for n, _ in m.named_parameters()]
    assert names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert "weight_ih_l0_reverse" in names and "bias_hh_l1_reverse" in names
    assert m.weight_ih_l1.shape == (cls.gates * 4, 8)
    x = leaf(2, 5, 3) if batch_first else leaf(5, 2, 3)
    gate_state = (leaf(4, 2, 4), leaf(4, 2, 4)) if cls is om.nn.LSTM else leaf(4, 2, 4)
    out, state = m(x, gate_state)
    assert out.shape == ((2, 5, 8) if batch_first else (5, 2, 8))
    h_n = state[0] if cls is om.nn.LSTM else state
    assert h_n.shape == (4, 2, 4)
    # Forward direction's h_n is its last step; reverse's is step 0.
    o = out.transpose(0, 1) if batch_first else out
    assert np.array_equal(h_n[2].detach().numpy(), o[-1, :, :4].detach().numpy())
    assert np.array_equal(h_n[3].detach().numpy(), o[0, :, 4:].detach().numpy())
    names_checked = ["weight_ih_l0", "weight_hh_l1_reverse", "bias_ih_l1"]
    params = [m._parameters[n].detach().requires_grad_() for n in names_checked]

    def f(x, *ps):
        for n, p in zip(names_checked, ps):
            m._parameters[n] = p  # route the module through the checked tensors
        return m(x, gate_state)[0] * 1.0

    gradient_check(f, [x] + params, name=f"{cls.__name__}_module")


def test_unsupported_options_are_refused():
    with pytest.raises(ValueError, match="dropout"):
        om.nn.LSTM(3, 4, num_layers=2, dropout=1.5)
    with pytest.raises(ValueError, match="proj_size"):
        om.nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="input_size. Expected 3"):
        om.nn.GRU(3, 4)(om.ones(2, 1, 5))
    with pytest.raises(ValueError, match="weight_ih"):
        om.lstm_layer(om.ones(2, 1, 3), om.ones(8, 4), om.ones(8, 2))


def test_inference_path_stores_nothing():
    x, w_ih, w_hh = rnd(8, 4, 16), rnd(64, 16), rnd(64, 16)
    w_ih.requires_grad_()
    before = om.pool_stats()["requests"]
    with om.no_grad():
        out, _, _ = om.lstm_layer(x, w_ih, w_hh)
    inference = om.pool_stats()["requests"] - before
    assert out.grad_fn is None
    before = om.pool_stats()["requests"]
    out2, _, _ = om.lstm_layer(x, w_ih, w_hh)
    training = om.pool_stats()["requests"] - before
    assert training >= inference + 4  # the four saved buffers
    assert np.array_equal(out.numpy(), out2.detach().numpy())


def _lstm_ctc_gradients():
    gen = om.Generator().manual_seed(11)
    lstm = om.nn.LSTM(6, 5, num_layers=2, bidirectional=True, generator=gen)
    head = om.nn.Linear(10, 4, generator=gen)
    x = om.randn(9, 3, 6, generator=gen)
    out, _ = lstm(x)
    logits = head(out)
    lp = om.functional.log_softmax(logits, dim=-1)
    loss = om.functional.ctc_loss(lp, om.tensor([[1, 2, 2], [3, 1, 0], [2, 0, 0]]), [9, 7, 5], [3, 2, 1])
    loss.backward()
    return [p.grad.numpy() for p in list(lstm.parameters()) + list(head.parameters())] + [loss.detach().reshape(1).numpy()]


def test_lstm_ctc_exact_gradients_identical_on_every_path_and_thread_count():
    om.compute.set_mode("exact")
    seen = set()
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(kernel_path=path, threads=threads):
                seen.add(sha256_of(_lstm_ctc_gradients()))
    assert len(seen) == 1


# The GRU in the contract's form: an exact-mode gradient hash, equal on
# every path × threads {1, 3, 8} and pinned. Wide enough (batch 16, hidden
# 96) that its products split into at least 8 chunks (asserted).
GRU_EXACT_SHA256 = "517c5b829b4a6b8659b0182179024d4ce12fde8c2890d332c39f5bdeb075e832"


def _gru_gradients():
    gen = om.Generator().manual_seed(23)
    gru = om.nn.GRU(24, 96, num_layers=2, bidirectional=True, generator=gen)
    x = om.randn(12, 16, 24, generator=gen)
    h0 = om.randn(4, 16, 96, generator=gen) * 0.5
    out, hn = gru(x, h0)
    loss = (out * out).mean() + hn.sum() * 0.01
    loss.backward()
    return [p.grad.numpy() for p in gru.parameters()] + [loss.detach().reshape(1).numpy()]


def test_gru_exact_gradient_hash_is_pinned_on_every_path_and_thread_count():
    from conftest import assert_splits

    om.compute.set_mode("exact")
    assert_splits(_gru_gradients)
    seen = {}
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(kernel_path=path, threads=threads):
                seen[(path, threads)] = sha256_of(_gru_gradients())
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == GRU_EXACT_SHA256
