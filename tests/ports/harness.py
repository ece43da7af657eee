"""The harness that runs the ported programs of tests/ports/ on either
library: tools/surface_oracle.py runs them on torch and records, and
tests/test_ports.py runs them on onemodel and compares.

A port is loaded from its source file; for torch, only its import lines
are rewritten (``onemodel`` → ``torch``): the rest of the program is the
same text. Each driver below does what the program's main() does (tiny
sizes, dropout 0), with two hooks that make the runs comparable, because
onemodel's random streams differ from torch's by design:

* initial weights: for every parameter of torch's freshly built model the
  mean and the largest deviation from it are recorded; both runs then set
  the parameter to mean + U(−dev, dev) drawn with NumPy from a seed of its
  name (so each parameter keeps its initialisation's centre and scale:
  LayerNorm's ones stay ones, a 0.02-normal stays small) and keep their
  buffers as built;
* random draws during training and evaluation (randn, randn_like, rand,
  randint, randperm, multinomial — the library functions, which samplers
  and the programs call): torch's results are recorded call by call, and
  onemodel's calls return them in the same order (the shapes must match).

Nothing else is replayed: every loss, gradient and update is computed by
the library under test."""

from __future__ import annotations

import contextlib
import sys
import types
import zlib
from pathlib import Path

import numpy as np

PORTS = Path(__file__).resolve().parent
NAMES = ["mnist", "word_language_model_lstm", "word_language_model_transformer", "vae", "dcgan", "mingpt"]
RANDOM_FUNCTIONS = ["randn", "randn_like", "rand", "rand_like", "randint", "randperm", "multinomial"]


def load_port(file: str, lib: str) -> types.ModuleType:
    """The port's module, its imports naming ``lib`` ("torch" or "onemodel")."""
    path = PORTS / f"{file}.py"
    lines = path.read_text().split("\n")
    if lib == "torch":
        lines = [ln.replace("onemodel", "torch") if ln.lstrip().startswith(("import onemodel", "from onemodel")) else ln
                 for ln in lines]
    mod = types.ModuleType(f"_port_{file}_{lib}")
    mod.__file__ = str(path)
    sys.modules[mod.__name__] = mod
    exec(compile("\n".join(lines), str(path), "exec"), mod.__dict__)
    return mod


class Run:
    """One program run: records (torch) or replays (onemodel) the initial
    weights and the random draws, and collects the results to compare."""

    def __init__(self, lib, record: bool, fixture: dict | None = None, prefix: str = ""):
        self.lib = lib
        self.record = record
        self.arrays = {} if record else fixture
        self.prefix = prefix
        self.results = {}
        self._draw = 0
        self._depth = 0

    # -- initial weights ------------------------------------------------------------------------
    def sync_weights(self, name: str, model) -> None:
        key = f"{self.prefix}{name}/init/"
        for k, p in model.named_parameters():
            if self.record:
                a = p.detach().numpy().astype(np.float64)
                mean = float(a.mean()) if a.size else 0.0
                self.arrays[key + k] = np.array([mean, float(np.abs(a - mean).max(initial=0.0))])
            mean, dev = self.arrays[key + k]
            rng = np.random.default_rng(zlib.crc32((key + k).encode()))
            values = (mean + rng.uniform(-dev, dev, tuple(p.shape))).astype(np.float32)
            with self.lib.no_grad():
                p.copy_(self.lib.tensor(values))

    # -- random draws --------------------------------------------------------------------------
    def _wrap(self, fname, original):
        run = self

        def wrapper(*args, **kwargs):
            if run._depth:  # a library function calling another: not a program-level draw
                return original(*args, **kwargs)
            run._depth += 1
            try:
                out = original(*args, **kwargs)
            finally:
                run._depth -= 1
            key = f"{run.prefix}draw/{run._draw:05d}/{fname}"
            run._draw += 1
            if run.record:
                run.arrays[key] = out.detach().numpy().copy()
                return out
            if key not in run.arrays:
                raise AssertionError(f"replay: draw {run._draw - 1} is {fname}{tuple(out.shape)}, which torch's run did not make")
            values = run.arrays[key]
            if tuple(values.shape) != tuple(out.shape):
                raise AssertionError(f"replay: draw {key} has shape {tuple(out.shape)}, torch's had {values.shape}")
            return run.lib.tensor(values, dtype=out.dtype)

        return wrapper

    @contextlib.contextmanager
    def draws(self):
        """Record or replay every random draw of the library functions."""
        modules = [self.lib]
        creation = getattr(self.lib, "creation", None)
        if creation is not None:
            modules.append(creation)
        # onemodel's distributions draw through ops.random.multinomial where
        # torch's call torch.multinomial: the same program-level draw.
        random_ops = getattr(getattr(self.lib, "ops", None), "random", None)
        if random_ops is not None and random_ops is not creation:
            modules.append(random_ops)
        saved = []
        for mod in modules:
            for fname in RANDOM_FUNCTIONS:
                if hasattr(mod, fname):
                    original = getattr(mod, fname)
                    saved.append((mod, fname, original))
                    setattr(mod, fname, self._wrap(fname, original))
        try:
            yield
        finally:
            for mod, fname, original in saved:
                setattr(mod, fname, original)

    def result(self, key: str, value) -> None:
        self.results[key] = np.asarray(value, dtype=np.float64).tolist()


def _no_dropout(lib, model) -> None:
    """Dropout 0 everywhere (dropout masks are draws the harness does not
    replay): Dropout modules and MultiheadAttention's attention dropout."""
    for m in model.modules():
        if isinstance(m, lib.nn.Dropout):
            m.p = 0.0
        elif isinstance(m, lib.nn.MultiheadAttention):
            m.dropout = 0.0


# -- drivers: each does what its program's main() does ---------------------------------------------

def drive_mnist(lib, run: Run) -> None:
    port = load_port("mnist", run.lib.__name__)
    args = port.parse_args([])
    lib.manual_seed(args.seed)
    device = lib.device("cpu")
    train_loader = port.DataLoader(port.synthetic_mnist(args.train_size, 0), batch_size=args.batch_size)
    test_loader = port.DataLoader(port.synthetic_mnist(args.test_size, 1), batch_size=args.test_batch_size)
    model = port.Net().to(device)
    _no_dropout(lib, model)
    run.sync_weights("net", model)
    optimizer = port.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = port.StepLR(optimizer, step_size=1, gamma=args.gamma)
    with run.draws():
        run.result("train_losses", port.train(args, model, device, train_loader, optimizer, 1))
        test_loss, correct = port.test(model, device, test_loader)
        scheduler.step()
    run.result("test_loss", test_loss)
    run.result("correct", correct)
    run.result("lr_after_epoch", optimizer.param_groups[0]["lr"])


def _drive_word_lm(lib, run: Run, model_kind: str) -> None:
    port = load_port("word_language_model", run.lib.__name__)
    argv = ["--model", model_kind, "--dropout", "0.0"]
    if model_kind == "LSTM":
        argv.append("--tied")
    args = port.parse_args(argv)
    lib.manual_seed(args.seed)
    device = lib.device("cpu")
    ntokens = args.ntokens
    train_data = port.batchify(port.synthetic_corpus(ntokens, 44, 0), args.batch_size, device)
    val_data = port.batchify(port.synthetic_corpus(ntokens, 24, 1), 2, device)
    model = port.build_model(args, ntokens, device)
    _no_dropout(lib, model)  # nn.Transformer's own layers keep their default dropout=0.1
    run.sync_weights("model", model)
    criterion = port.nn.NLLLoss()
    with run.draws():
        run.result("train_losses", port.train(args, model, criterion, train_data, ntokens, args.lr, 1))
        run.result("val_loss", port.evaluate(args, model, criterion, val_data, ntokens, 2))


def drive_word_language_model_lstm(lib, run: Run) -> None:
    _drive_word_lm(lib, run, "LSTM")


def drive_word_language_model_transformer(lib, run: Run) -> None:
    _drive_word_lm(lib, run, "Transformer")


def drive_vae(lib, run: Run) -> None:
    port = load_port("vae", run.lib.__name__)
    args = port.parse_args([])
    lib.manual_seed(args.seed)
    device = lib.device("cpu")
    train_loader = lib.utils.data.DataLoader(port.synthetic_mnist(8, 0), batch_size=args.batch_size, shuffle=True)
    test_loader = lib.utils.data.DataLoader(port.synthetic_mnist(8, 1), batch_size=args.batch_size, shuffle=False)
    model = port.VAE().to(device)
    run.sync_weights("vae", model)
    optimizer = port.optim.Adam(model.parameters(), lr=1e-3)
    with run.draws():
        run.result("train_losses", port.train(args, model, device, train_loader, optimizer, 1))
        run.result("test_loss", port.test(args, model, device, test_loader, 1))
        run.result("sample", port.sample(model, device).numpy()[:2, :16])


def drive_dcgan(lib, run: Run) -> None:
    port = load_port("dcgan", run.lib.__name__)
    opt = port.parse_args([])
    lib.manual_seed(opt.manualSeed)
    port.cudnn.benchmark = True
    nc = 3
    dataloader = lib.utils.data.DataLoader(port.synthetic_images(4, opt.imageSize, nc, 0), batch_size=opt.batchSize, shuffle=True)
    device = lib.device("cpu")
    netG = port.Generator(opt.ngpu, opt.nz, opt.ngf, nc).to(device)
    netG.apply(port.weights_init)
    netD = port.Discriminator(opt.ngpu, opt.ndf, nc).to(device)
    netD.apply(port.weights_init)
    run.sync_weights("netG", netG)
    run.sync_weights("netD", netD)
    criterion = port.nn.BCELoss()
    with run.draws():
        fixed_noise = lib.randn(opt.batchSize, opt.nz, 1, 1, device=device)
        optimizerD = port.optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        optimizerG = port.optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
        run.result("train", port.train(opt, netD, netG, dataloader, optimizerD, optimizerG, criterion, device, opt.nz, 0))
        fake = netG(fixed_noise).detach()
    run.result("fixed_noise_fake", fake.numpy()[0, :, :4, :4])


def drive_mingpt(lib, run: Run) -> None:
    port = load_port("mingpt", run.lib.__name__)
    lib.manual_seed(3407)
    train_dataset = port.SortDataset("train")
    test_dataset = port.SortDataset("test")
    model_config = port.GPT.get_default_config()
    model_config.model_type = None
    model_config.n_layer, model_config.n_head, model_config.n_embd = 2, 2, 16
    model_config.embd_pdrop = model_config.resid_pdrop = model_config.attn_pdrop = 0.0
    model_config.vocab_size = train_dataset.get_vocab_size()
    model_config.block_size = train_dataset.get_block_size()
    model = port.GPT(model_config)
    run.sync_weights("gpt", model)
    train_config = port.Trainer.get_default_config()
    train_config.learning_rate = 5e-4
    train_config.max_iters = 2
    train_config.num_workers = 0
    train_config.batch_size = 4
    trainer = port.Trainer(train_config, model, train_dataset)
    losses = []
    trainer.add_callback("on_batch_end", lambda tr: losses.append(tr.loss.item()))
    with run.draws():
        trainer.run()
        run.result("train_losses", losses)
        model.eval()
        with lib.no_grad():
            x, y = next(iter(port.DataLoader(test_dataset, batch_size=4)))
            _, loss = model(x, y)
            run.result("eval_loss", loss.item())
            run.result("score", port.eval_split(model, trainer, test_dataset, max_batches=1, n=train_dataset.length).item())
            run.result("generated", model.generate(x[:, :train_dataset.length], train_dataset.length).numpy())


DRIVERS = {name: globals()[f"drive_{name}"] for name in NAMES}
