"""CTC loss against a brute-force enumeration of every alignment (float64),
gradient checks, reductions, zero_infinity and validation."""

import itertools

import numpy as np
import pytest

import onemodel as om
from conftest import THREAD_COUNTS, assert_splits
from onemodel.gradcheck import gradient_check

GEN = om.Generator().manual_seed(3)


def log_softmax_np(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def brute_force_nll(lp: np.ndarray, target, blank: int) -> float:
    """−log Σ over every path of length T whose collapse is `target`."""
    t_len, c = lp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t_len):
        collapsed = []
        prev = None
        for k in path:
            if k != prev and k != blank:
                collapsed.append(k)
            prev = k
        if collapsed == list(target):
            total += np.exp(sum(lp[t, k] for t, k in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def make_lp(t, b, c):
    z = om.randn(t, b, c, generator=GEN).numpy().astype(np.float64)
    return log_softmax_np(z).astype(np.float32)


@pytest.mark.parametrize("blank", [0, 2])
def test_losses_equal_brute_force_enumeration(blank):
    lp = make_lp(5, 4, 3)
    labels = [c for c in range(3) if c != blank]
    targets = [[labels[0], labels[1]], [labels[0], labels[0]], [], [labels[1], labels[0], labels[1]]]
    in_len = [5, 4, 3, 5]
    flat = sum(targets, [])
    got = om.functional.ctc_loss(om.tensor(lp), om.tensor(flat), in_len, [len(t) for t in targets], blank=blank, reduction="none").numpy()
    for b, tg in enumerate(targets):
        want = brute_force_nll(lp[: in_len[b], b].astype(np.float64), tg, blank)
        assert got[b] == pytest.approx(want, rel=1e-6), (b, tg)


def test_reductions_follow_torch_definitions():
    lp = make_lp(6, 3, 4)
    padded = om.tensor([[1, 2, 3], [2, 2, 0], [3, 0, 0]])
    in_len, tg_len = [6, 5, 4], [3, 2, 1]
    per = om.functional.ctc_loss(om.tensor(lp), padded, in_len, tg_len, reduction="none").numpy().astype(np.float64)
    s = om.functional.ctc_loss(om.tensor(lp), padded, in_len, tg_len, reduction="sum").item()
    m = om.functional.ctc_loss(om.tensor(lp), padded, in_len, tg_len, reduction="mean").item()
    assert s == pytest.approx(per.sum(), rel=1e-6)
    assert m == pytest.approx(np.mean(per / np.maximum(1, np.array(tg_len))), rel=1e-6)
    module = om.nn.CTCLoss(reduction="sum")(om.tensor(lp), padded, in_len, tg_len).item()
    assert module == s


def test_impossible_alignment_infinite_or_zero_and_gradient_zero():
    lp = om.tensor(make_lp(2, 2, 3)).requires_grad_()
    tg = om.tensor([[1, 1], [1, 2]])  # line 0 needs 3 steps: impossible in 2
    loss = om.functional.ctc_loss(lp, tg, [2, 2], [2, 2], reduction="none")
    assert loss[0].item() == float("inf") and np.isfinite(loss[1].item())
    z = om.functional.ctc_loss(lp, tg, [2, 2], [2, 2], reduction="sum", zero_infinity=True)
    z.backward()
    g = lp.grad.numpy()
    assert np.all(g[:, 0] == 0.0) and np.any(g[:, 1] != 0.0)
    lp.grad = None
    om.functional.ctc_loss(lp, tg, [2, 2], [2, 2], reduction="sum").backward()
    assert np.all(lp.grad.numpy()[:, 0] == 0.0)


def test_gradient_is_the_true_partial_derivative():
    """Finite differences of the loss with respect to the log-probabilities
    themselves (not through a softmax)."""
    lp = om.tensor(make_lp(5, 3, 4)).requires_grad_()
    tg = om.tensor([1, 1, 2, 3, 2])
    for blank in (0,):
        gradient_check(
            lambda x: om.functional.ctc_loss(x, tg, [5, 4, 3], [2, 2, 1], blank=blank, reduction="mean"),
            [lp], eps=1e-3, atol=1e-4, rtol=1e-3, name="ctc_loss_mean",
        )


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_gradient_checks_nonzero_blank_empty_targets_repeats(reduction):
    lp = om.tensor(make_lp(6, 3, 4)).requires_grad_()
    tg = om.tensor([[0, 0, 1], [1, 0, 0], [0, 0, 0]])  # blank = 2; repeated 0s; empty line
    f = lambda x: om.functional.ctc_loss(x, tg, [6, 5, 6], [3, 2, 0], blank=2, reduction=reduction)
    # The numeric derivative differences float32 losses: for 'sum' the loss is
    # about 15, whose ulp (9.5e-7) over 2·eps = 2e-3 puts ~5e-4 of noise on
    # each numeric value; atol covers that bound, rtol stays at 1e-3.
    gradient_check(f, [lp], eps=1e-3, atol=1e-3, rtol=1e-3, name=f"ctc_{reduction}")


def test_validation_errors():
    lp = om.tensor(make_lp(4, 2, 3))
    f = om.functional.ctc_loss
    with pytest.raises(ValueError, match="input_lengths\\[1\\] = 5"):
        f(lp, om.tensor([[1], [1]]), [4, 5], [1, 1])
    with pytest.raises(ValueError, match="input_lengths\\[0\\] = -1"):
        f(lp, om.tensor([[1], [1]]), [-1, 4], [1, 1])
    with pytest.raises(ValueError, match="negative"):
        f(lp, om.tensor([[1], [1]]), [4, 4], [-1, 1])
    with pytest.raises(ValueError, match="padded target width"):
        f(lp, om.tensor([[1], [1]]), [4, 4], [2, 1])
    with pytest.raises(ValueError, match="blank label 0"):
        f(lp, om.tensor([[1, 0], [1, 1]]), [4, 4], [2, 2])
    with pytest.raises(ValueError, match="outside 0..2"):
        f(lp, om.tensor([[1, 3], [1, 1]]), [4, 4], [2, 2])
    with pytest.raises(ValueError, match="sum to 3"):
        f(lp, om.tensor([1, 1]), [4, 4], [2, 1])
    with pytest.raises(ValueError, match="reduction"):
        f(lp, om.tensor([1, 1]), [4, 4], [1, 1], reduction="avg")
    with pytest.raises(ValueError, match="entries for a batch of 2"):
        f(lp, om.tensor([1, 1]), [4], [1, 1])
    # A target longer than the input can align is not an error: infinite loss.
    assert f(lp, om.tensor([[1, 1, 1], [1, 2, 1]]), [4, 2], [3, 3], reduction="none")[1].item() == float("inf")


def test_loss_bits_do_not_depend_on_threads_or_paths():
    lp = om.tensor(make_lp(30, 8, 10))
    tg = om.tensor(np.arange(8 * 5).reshape(8, 5) % 9 + 1)
    assert_splits(lambda: om.functional.ctc_loss(lp, tg, [30] * 8, [5] * 8, reduction="none"))
    vals = set()
    for mode in ("fast", "exact"):
        for path in om.compute.available_kernel_paths():
            for threads in THREAD_COUNTS:
                with om.compute.settings(mode=mode, kernel_path=path, threads=threads):
                    vals.add(om.functional.ctc_loss(lp, tg, [30] * 8, [5] * 8, reduction="none").numpy().tobytes())
    assert len(vals) == 1


def test_kept_forward_recursions_give_the_same_gradient_bits():
    """The engine keeps the forward recursions from the loss for its
    gradient; the gradient recomputed from scratch (no kept recursions) is
    the same bits, for lines of different lengths, a repeat and an
    impossible line. Recursions of another batch are refused."""
    from onemodel import _core

    lp = om.tensor(make_lp(12, 4, 6))
    targets = [[1, 2, 2], [3], [], [1, 1, 1, 1, 1]]  # the last needs 9 frames, has 8
    lengths = [12, 7, 5, 8]
    losses, kept = _core.ctc_forward(lp, targets, lengths, 0)
    assert losses == _core.ctc_losses(lp, targets, lengths, 0)
    assert losses[3] == float("inf")
    scales = [0.5, 1.0, 2.0, 1.0]
    fresh, reused = om.zeros(12, 4, 6), om.zeros(12, 4, 6)
    _core.ctc_grad(lp, targets, lengths, 0, scales, fresh)
    _core.ctc_grad(lp, targets, lengths, 0, scales, reused, kept)
    assert fresh.numpy().tobytes() == reused.numpy().tobytes()
    assert np.count_nonzero(fresh.numpy()) > 0
    with pytest.raises(ValueError, match="another batch"):
        _core.ctc_grad(lp, targets, [12, 7, 5, 7], 0, scales, om.zeros(12, 4, 6), kept)
    # And they are what the gradient starts from: recursions kept from other
    # log-probabilities of the same sizes (which the engine's version check
    # on the saved log_probs rules out) give another gradient.
    _, other = _core.ctc_forward(om.tensor(make_lp(12, 4, 6)), targets, lengths, 0)
    mixed = om.zeros(12, 4, 6)
    _core.ctc_grad(lp, targets, lengths, 0, scales, mixed, other)
    assert mixed.numpy().tobytes() != fresh.numpy().tobytes()
