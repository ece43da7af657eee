"""The import layout, the CPU-only device answers, the accepted-and-ignored
switches (backends, AMP, precision, determinism) and the runtime helpers
a PyTorch program calls, as docs/porting.md describes them."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import onemodel as om


def test_modules_import_as_torch_lays_them_out():
    import onemodel.nn.functional as F

    assert F is om.functional and om.nn.functional is om.functional
    for name in [
        "onemodel.nn.init", "onemodel.nn.utils", "onemodel.nn.utils.clip_grad", "onemodel.nn.utils.rnn",
        "onemodel.nn.utils.convert_parameters", "onemodel.utils.data", "onemodel.optim.lr_scheduler", "onemodel.autograd",
        "onemodel.autograd.function", "onemodel.cuda", "onemodel.cuda.amp", "onemodel.amp", "onemodel.backends",
        "onemodel.backends.cudnn", "onemodel.backends.cuda", "onemodel.backends.mps",
    ]:
        importlib.import_module(name)
    from onemodel.nn.utils import clip_grad_norm_, parameters_to_vector, vector_to_parameters  # noqa: F401
    from onemodel.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence  # noqa: F401
    from onemodel.utils.data import DataLoader, Dataset, TensorDataset, random_split  # noqa: F401
    from onemodel.autograd import Function, grad  # noqa: F401
    from onemodel.autograd.function import FunctionCtx, once_differentiable  # noqa: F401


def test_cuda_answers_no_device():
    assert om.cuda.is_available() is False and om.cuda.device_count() == 0
    assert om.cuda.is_bf16_supported() is False
    om.cuda.manual_seed(1)
    om.cuda.manual_seed_all(1)
    om.cuda.synchronize()
    om.cuda.empty_cache()
    assert om.cuda.memory_allocated() == 0
    for call in (om.cuda.current_device, lambda: om.cuda.set_device(0), om.cuda.get_device_name):
        with pytest.raises(RuntimeError, match="CPU only"):
            call()


def test_cuda_manual_seed_does_not_touch_the_stream():
    om.manual_seed(5)
    a = om.rand(4)
    om.manual_seed(5)
    om.cuda.manual_seed_all(123)
    b = om.rand(4)
    assert a.tolist() == b.tolist()


def test_backend_flags_accept_assignments():
    cudnn = om.backends.cudnn
    cudnn.benchmark = True
    cudnn.deterministic = True
    cudnn.enabled = False
    cudnn.allow_tf32 = False
    om.backends.cuda.matmul.allow_tf32 = True
    assert cudnn.benchmark is True and om.backends.cuda.matmul.allow_tf32 is True
    assert cudnn.is_available() is False and om.backends.mps.is_available() is False
    with cudnn.flags(enabled=True, benchmark=False):
        assert cudnn.benchmark is False
    assert cudnn.benchmark is True
    cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32 = False, False, True, True
    assert om.backends.cpu.get_cpu_capability() == om.compute.kernel_path()


def test_devices_as_programs_write_them():
    device = om.device("cuda" if om.cuda.is_available() else "cpu")
    x = om.ones(2, device=device).to(device)
    assert x.device == device and str(device) == "cpu"
    with pytest.raises(RuntimeError, match="CPU only"):
        om.zeros(1, device="cuda")


def test_autocast_and_grad_scaler_change_nothing():
    model = om.nn.Linear(3, 1)
    opt = om.optim.SGD(model.parameters(), lr=0.1)
    x = om.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = om.amp.GradScaler(enabled=True)
        old_scaler = om.cuda.amp.GradScaler()
        with om.autocast(device_type="cpu", dtype=om.bfloat16):
            out = model(x)
        with om.autocast("cuda"):
            out2 = model(x)
        with om.cuda.amp.autocast():
            out3 = model(x)
    assert out.dtype is om.float32 and out.tolist() == out2.tolist() == out3.tolist()
    loss = out.sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and not scaler.is_enabled()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    before = model.weight.tolist()
    scaler.step(opt)
    scaler.update()
    assert model.weight.tolist() != before  # the optimizer stepped
    assert scaler.state_dict() == {} and not old_scaler.is_enabled()

    @om.autocast("cpu", enabled=False)
    def f(t):
        return t * 2

    assert f(om.ones(1)).tolist() == [2.0]


def test_precision_and_determinism_switches_are_recorded():
    om.set_float32_matmul_precision("high")
    assert om.get_float32_matmul_precision() == "high"
    om.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="Invalid precision"):
        om.set_float32_matmul_precision("fast")
    om.use_deterministic_algorithms(True, warn_only=True)
    assert om.are_deterministic_algorithms_enabled() and om.is_deterministic_algorithms_warn_only_enabled()
    om.use_deterministic_algorithms(False)


def test_seeds():
    om.manual_seed(42)
    assert om.initial_seed() == 42
    s = om.seed()
    assert om.initial_seed() == s
    state = om.get_rng_state()
    a = om.randn(3)
    om.set_rng_state(state)
    assert om.randn(3).tolist() == a.tolist()


def test_inference_mode_as_context_and_decorator():
    x = om.ones(2, requires_grad=True)
    with om.inference_mode():
        assert not (x * 2).requires_grad
    with om.inference_mode(False):
        assert (x * 2).requires_grad

    @om.inference_mode()
    def f(t):
        return t * 2

    @om.inference_mode
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and om.is_grad_enabled()


def test_threads_dtypes_and_helpers():
    prev = om.get_num_threads()
    om.set_num_threads(1)
    assert om.compute.get_threads() == 1 == om.get_num_threads()
    om.set_num_threads(prev)
    with pytest.raises(ValueError):
        om.set_num_threads(0)
    om.set_default_dtype(om.float32)
    assert om.get_default_dtype() is om.float32
    with pytest.raises(TypeError, match="float64"):
        om.set_default_dtype(om.float64)
    assert om.is_tensor(om.ones(1)) and not om.is_tensor(np.ones(1))
    assert om.numel(om.ones(2, 3)) == 6 and om.is_floating_point(om.ones(1))
    model = om.nn.Linear(1, 1)
    assert om.compile(model) is model and om.compile()(model) is model


def test_autograd_grad_leaves_and_intermediates():
    x = om.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = om.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = x * w
    y = (h * h).sum()
    gx, gh = om.autograd.grad(y, [x, h], retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), 2 * (1 * 0.5) * 0.5 * np.array([1, 0, 0]) + np.array([0, 2 * (-2.0) * -1.0, 2 * 6.0 * 2.0]))
    np.testing.assert_allclose(gh.numpy(), 2 * np.array([0.5, -2.0, 6.0]))
    assert x.grad is None and w.grad is None  # grad() touches no .grad
    z = om.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        om.autograd.grad(y, [z], retain_graph=True)
    (none,) = om.autograd.grad(y, [z], allow_unused=True, retain_graph=True)
    assert none is None
    (zeros,) = om.autograd.grad(y, [z], materialize_grads=True, retain_graph=True)
    assert zeros.tolist() == [0.0]
    with pytest.raises(NotImplementedError, match="higher-order"):
        om.autograd.grad(y, [x], create_graph=True)


def test_custom_function_with_torchs_protocol():
    class ScaledExp(om.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = (x * scale).exp()
            ctx.save_for_backward(y)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return grad * y * ctx.scale, None

    x = om.tensor([0.0, 1.0], requires_grad=True)
    y = ScaledExp.apply(x, 2.0)
    assert type(y.grad_fn).__name__ == "ScaledExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.array([0.0, 1.0])), rtol=1e-6)


def test_custom_function_several_outputs_and_non_differentiable():
    class SplitSign(om.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            pos, neg = x.clamp(min=0.0), x.clamp(max=0.0)
            idx = om.tensor([0, 1])
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x)
            return pos, neg, idx

        @staticmethod
        def backward(ctx, g_pos, g_neg, g_idx):
            (x,) = ctx.saved_tensors
            assert g_idx is None
            mask = (x.detach().numpy() > 0).astype(np.float32)
            return g_pos * om.tensor(mask) + g_neg * om.tensor(1 - mask)

    x = om.tensor([-1.0, 2.0], requires_grad=True)
    pos, neg, idx = SplitSign.apply(x)
    assert pos.tolist() == [0.0, 2.0] and neg.tolist() == [-1.0, 0.0] and not idx.requires_grad
    (pos * 3.0 + neg * 5.0).sum().backward()
    assert x.grad.tolist() == [5.0, 3.0]
    x.grad = None
    pos, neg, _ = SplitSign.apply(x)
    pos.sum().backward()  # the unused output's gradient arrives as zeros
    assert x.grad.tolist() == [0.0, 1.0]


def test_custom_function_setup_context_and_errors():
    class Square(om.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2.0 * x

    x = om.tensor([3.0], requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.tolist() == [6.0]

    class TooMany(om.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooMany.apply(om.ones(1, requires_grad=True)).backward()

    class Modifies(om.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    a = om.ones(2, requires_grad=True)
    b = a * 1.0
    out = Modifies.apply(b)
    with om.no_grad():
        b.add_(1.0)
    with pytest.raises(om.TensorVersionError):
        out.sum().backward()


def test_finfo_and_iinfo_are_torchs():
    import json
    from pathlib import Path

    fix = json.loads((Path(__file__).resolve().parent.parent / "testdata" / "surface" / "runtime.json").read_text())
    for name, want in fix["finfo"].items():
        f = om.finfo(getattr(om, name))
        assert repr(f) == want["repr"]
        assert [f.bits, f.eps, f.max, f.min, f.tiny, f.resolution, f.smallest_normal] == want["values"], name
    for name, want in fix["iinfo"].items():
        i = om.iinfo(getattr(om, name))
        assert repr(i) == want["repr"] and [i.bits, i.max, i.min] == want["values"], name
    with pytest.raises(TypeError, match="not a floating point"):
        om.finfo(om.int64)


def test_jit_checkpoint_and_memory_formats_pass_through():
    model = om.nn.Linear(2, 2)
    assert om.jit.script(model) is model and om.jit.trace(model, om.ones(1, 2)) is model

    @om.jit.script
    def f(x):
        return x * 2

    assert f(om.ones(1)).tolist() == [2.0]
    with pytest.raises(RuntimeError, match="no TorchScript"):
        om.jit.save(model, "m.pt")
    x = om.ones(1, 2, requires_grad=True)
    y = om.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    y.sum().backward()
    assert x.grad is not None and y.tolist() == model(x).tolist()
    seq = om.nn.Sequential(om.nn.Linear(2, 2), om.nn.Tanh())
    assert om.utils.checkpoint.checkpoint_sequential(seq, 2, x).tolist() == seq(x).tolist()
    assert model.to(memory_format=om.channels_last) is model
