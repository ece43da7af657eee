"""interpolate's and ctc_loss's sizes come from the core's geometry
(rust/src/geometry): bad sizes are ValueErrors naming the op and the sizes,
in every mode and rank, before anything is allocated."""

import pytest

import onemodel as om
import onemodel.functional as F

MODES_2D = ["nearest", "bilinear", "bicubic", "nearest-exact", "area"]
MODES_1D = ["nearest", "linear", "nearest-exact", "area"]


@pytest.mark.parametrize("mode", MODES_2D)
@pytest.mark.parametrize("size", [(0, 2), (-1, 2), (2, -3), (2**63, 2), (2**70, 2), (2**200, 2)])
def test_interpolate_refuses_bad_sizes(mode, size):
    with pytest.raises(ValueError, match="interpolate") as e:
        F.interpolate(om.ones(1, 1, 2, 2), size=size, mode=mode)
    # The message shows the size that was refused (a huge int saturates to
    # the widest one the core reads, so only those within it are shown).
    bad = next(s for s in size if s != 2)
    if abs(bad) < 2**127:
        assert str(bad) in str(e.value)


@pytest.mark.parametrize("mode", MODES_1D)
@pytest.mark.parametrize("size", [0, -4, 2**64])
def test_interpolate_1d_refuses_bad_sizes(mode, size):
    with pytest.raises(ValueError, match=f"interpolate.*{size}"):
        F.interpolate(om.ones(1, 1, 3), size=size, mode=mode)


@pytest.mark.parametrize("mode", MODES_2D)
def test_interpolate_refuses_bad_scales_and_ranks(mode):
    x = om.ones(1, 1, 2, 2)
    with pytest.raises(ValueError, match="interpolate: scale_factor -1.0"):
        F.interpolate(x, scale_factor=-1.0, mode=mode)
    with pytest.raises(ValueError, match="interpolate: scale_factor nan of the input size 2"):
        F.interpolate(x, scale_factor=float("nan"), mode=mode)
    with pytest.raises(ValueError, match=r"interpolate: input of shape \(1, 1, 2, 2\) and output size \(0, 0\)"):
        F.interpolate(x, scale_factor=0.25, mode=mode)
    with pytest.raises(ValueError, match=r"interpolate: Input and output .* \[2, 2\] and output size of \[3\]"):
        F.interpolate(x, size=(3,), mode=mode)
    with pytest.raises(ValueError, match="interpolate: exactly one"):
        F.interpolate(x, mode=mode)
    with pytest.raises(ValueError, match="interpolate: exactly one"):
        F.interpolate(x, size=3, scale_factor=2.0, mode=mode)


def test_interpolate_sizes_as_torch():
    # ⌊n·s⌋ per dimension (torch's rule), hand-computed.
    assert F.interpolate(om.ones(1, 1, 3, 5), scale_factor=(1.5, 0.5), mode="bicubic").shape == (1, 1, 4, 2)
    assert F.interpolate(om.ones(1, 1, 7), scale_factor=0.5, mode="nearest-exact").shape == (1, 1, 3)
    assert F.interpolate(om.ones(2, 1, 3), size=4, mode="linear").shape == (2, 1, 4)


def test_ctc_geometry_cuts_padded_and_concatenated_targets_alike():
    shape, unbatched, blank, lengths, lines = om._core.ctc_geometry((4, 2, 3), (2, 2), [1, 2, 2, 0], [4, 3], [2, 1], 0, "sum")
    assert (tuple(shape), unbatched, blank, lengths, lines) == ((4, 2, 3), False, 0, [4, 3], [[1, 2], [2]])
    assert om._core.ctc_geometry((4, 2, 3), (3,), [1, 2, 2], [4, 3], [2, 1], 0, "sum")[4] == [[1, 2], [2]]
    assert om._core.ctc_geometry((4, 3), (2,), [1, 2], [4], [2], 0, "none")[:2] == ([4, 1, 3], True)


@pytest.mark.parametrize("lengths,match", [
    (([2**70, 4], [1, 1]), "input_lengths\\[0\\] = 1180591620717411303424"),
    (([4, 4], [-(2**70), 1]), "target_lengths\\[0\\] = -1180591620717411303424 is negative"),
    (([4, 4], [2**64, 1]), "target_lengths\\[0\\] = 18446744073709551616 exceeds"),
])
def test_ctc_loss_refuses_lengths_past_int64(lengths, match):
    lp = om.zeros(4, 2, 3)
    with pytest.raises(ValueError, match=f"ctc_loss: {match}"):
        F.ctc_loss(lp, om.tensor([[1], [1]]), *lengths)


def test_ctc_loss_refuses_bad_shapes():
    with pytest.raises(ValueError, match=r"ctc_loss: log_probs must be \[T, B, C\] or \[T, C\], got shape \(4,\)"):
        F.ctc_loss(om.zeros(4), om.tensor([1]), [4], [1])
    with pytest.raises(ValueError, match=r"ctc_loss: targets must be \[B, S\] or 1-D, got shape \(2, 1, 1\)"):
        F.ctc_loss(om.zeros(4, 2, 3), om.tensor([[[1]], [[1]]]), [4, 4], [1, 1])
    with pytest.raises(ValueError, match=r"ctc_loss: padded targets of shape \(3, 1\) for a batch of 2"):
        F.ctc_loss(om.zeros(4, 2, 3), om.tensor([[1], [1], [1]]), [4, 4], [1, 1])
    with pytest.raises(ValueError, match="ctc_loss: blank -1 is not a class of 3"):
        F.ctc_loss(om.zeros(4, 2, 3), om.tensor([[1], [1]]), [4, 4], [1, 1], blank=-1)


# -- the 3-D layers' sizes (geometry::spatial::{pool_sizes, conv_sizes}) ------------
# Expected sizes by hand from torch's rule: floor((n + 2p - d(k-1) - 1)/s) + 1,
# in ceil mode rounded up unless the last window would start past n + p.

def test_pool3d_sizes_by_hand():
    x = om.zeros(1, 1, 7, 6, 5)
    # D: (7-2)/2+1 = 3; H: (6+2-3)/2+1 = 3 (floor of 2.5); W: (5-1)/1+1 = 5.
    assert F.max_pool3d(x, (2, 3, 1), stride=(2, 2, 1), padding=(0, 1, 0)).shape == (1, 1, 3, 3, 5)
    # ceil mode: D ceil(5/2)+1 = 4 (the last window starts at 6 < 7), H
    # ceil(5/2)+1 = 4 (starts at 6 < 6+1); W unchanged.
    assert F.max_pool3d(x, (2, 3, 1), stride=(2, 2, 1), padding=(0, 1, 0), ceil_mode=True).shape == (1, 1, 4, 4, 5)
    # dilation 2, k 3: span 5; D (7-5)/1+1 = 3.
    assert F.max_pool3d(x, 3, stride=1, dilation=(2, 1, 1)).shape == (1, 1, 3, 4, 3)
    # n 3, k 2, s 2, p 1, ceil mode: ceil(3/2)+1 = 3, but the third window
    # would start at 2·2 = 4 ≥ n + p = 4: dropped, 2.
    assert F.avg_pool3d(om.zeros(1, 1, 3, 3, 3), 2, stride=2, padding=1, ceil_mode=True).shape == (1, 1, 2, 2, 2)


def test_conv3d_sizes_by_hand():
    x, w = om.zeros(1, 2, 6, 5, 4), om.zeros(3, 2, 3, 2, 1)
    # (6+2-3)/2+1 = 3; (5+0-2)/1+1 = 4; (4+2-1)/3+1 = 2.
    assert F.conv3d(x, w, stride=(2, 1, 3), padding=(1, 0, 1)).shape == (1, 3, 3, 4, 2)
    # dilation 2 along D: span 5, (6-5)/1+1 = 2.
    assert F.conv3d(x, w, dilation=(2, 1, 1)).shape == (1, 3, 2, 4, 4)


@pytest.mark.parametrize("call, match", [
    (lambda: F.max_pool3d(om.zeros(1, 1, 2, 2, 2), 3), r"max_pool3d: kernel \(3, 3, 3\).*larger than the padded input"),
    (lambda: F.max_pool3d(om.zeros(1, 1, 4, 4, 4), 2, padding=2), r"max_pool3d: pad should be at most half"),
    (lambda: F.avg_pool3d(om.zeros(1, 1, 4, 4, 4), 2, padding=(0, 0, 2)), r"avg_pool3d: pad should be at most half"),
    (lambda: F.max_pool3d(om.zeros(1, 1, 4, 4, 4), 2**63), r"max_pool3d: kernel_size must be below 2\*\*63"),
    (lambda: F.max_pool3d(om.zeros(1, 1, 4, 4, 4), 5, dilation=2**62), r"max_pool3d: kernel .* dilation .* overflows"),
    (lambda: F.conv3d(om.zeros(1, 1, 2, 2, 2), om.zeros(1, 1, 3, 1, 1)), r"conv3d: kernel \(3, 1, 1\).*larger than the padded input"),
    (lambda: F.conv3d(om.zeros(1, 1, 4, 4, 4), om.zeros(1, 1, 1, 1, 1), stride=2**63), r"conv3d: stride must be below 2\*\*63"),
])
def test_3d_layers_refuse_bad_sizes(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call, match", [
    (lambda: F.max_pool1d(om.zeros(1, 1, 2), 3), r"max_pool1d: kernel \(3,\).*larger than the padded input"),
    (lambda: F.avg_pool1d(om.zeros(1, 1, 4), 2, padding=2), r"avg_pool1d: pad should be at most half"),
    (lambda: F.max_pool1d(om.zeros(1, 1, 4), 2**63), r"max_pool1d: kernel_size must be below 2\*\*63"),
    (lambda: F.conv1d(om.zeros(1, 1, 2), om.zeros(1, 1, 3)), r"conv1d: kernel \(3,\).*larger than the padded input"),
    (lambda: F.conv1d(om.zeros(1, 2, 5), om.zeros(1, 1, 3)), r"conv1d: input of shape \(1, 2, 5\) has 2 channels"),
    (lambda: F.conv1d(om.zeros(2, 5), om.zeros(3, 1, 3), groups=2),
     r"conv1d: out_channels 3 \(weight shape \(3, 1, 3\)\) is not divisible by groups=2"),
    (lambda: F.conv1d(om.zeros(1, 1, 5), om.zeros(1, 1, 3), om.zeros(2)), r"conv1d: bias of shape \(2,\)"),
    (lambda: F.conv_transpose1d(om.zeros(1, 2, 5), om.zeros(3, 1, 3)),
     r"conv_transpose1d: input of shape \(1, 2, 5\) has 2 channels, weight of shape \(3, 1, 3\) expects 3"),
])
def test_1d_layers_name_themselves_in_size_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_1d_layer_sizes_as_torch():
    # torch 2.15: conv1d (1,2,9) * (3,2,3), stride 2, padding 1, dilation 2 → (1,3,4);
    # max_pool1d (1,1,9) k 3 s 2 ceil → (1,1,4); avg_pool1d k 2 s 2 p 1 → (1,1,5).
    assert F.conv1d(om.zeros(1, 2, 9), om.zeros(3, 2, 3), stride=2, padding=1, dilation=2).shape == (1, 3, 4)
    assert F.max_pool1d(om.zeros(1, 1, 9), 3, stride=2, ceil_mode=True).shape == (1, 1, 4)
    assert F.avg_pool1d(om.zeros(1, 1, 9), 2, stride=2, padding=1).shape == (1, 1, 5)
