"""Module-structure cases shared by tools/surface_oracle.py (run with torch)
and tests/test_surface_modules.py (run with onemodel): each builder takes
the library as ``torch`` and returns a model, so the very same source runs
on both and the oracle records what torch prints and names.

Only the library is passed in; nothing here imports torch or onemodel."""

from __future__ import annotations

from collections import OrderedDict


def _tied(torch):
    nn = torch.nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(7, 4)
            self.body = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
            self.head = nn.Linear(4, 7, bias=False)
            self.head.weight = self.embed.weight  # tied weights
            self.register_buffer("steps", torch.zeros(2))
            self.register_buffer("scratch", torch.ones(3), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.head(self.body(self.embed(x)))

    return Tied()


def _nested(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.fc = nn.Linear(d, d)
            self.scale = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return self.fc(self.norm(x)) * self.scale

        def extra_repr(self):
            return "custom=1"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(6) for _ in range(3)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(6, 3), "reg": nn.Linear(6, 1)})
            self.params = nn.ParameterList([nn.Parameter(torch.zeros(2, 3)), nn.Parameter(torch.zeros(4))])
            self.pdict = nn.ParameterDict({"b": nn.Parameter(torch.zeros(1)), "a": nn.Parameter(torch.zeros(2))})
            self.shared = self.blocks[0]  # the same module under two names

    return Net()


def _sequential_ordered(torch):
    nn = torch.nn
    return nn.Sequential(OrderedDict([
        ("conv", nn.Conv2d(1, 4, 3, padding=1)),
        ("bn", nn.BatchNorm2d(4)),
        ("act", nn.ReLU()),
        ("pool", nn.MaxPool2d(2)),
        ("up", nn.Upsample(scale_factor=2)),
        ("avg", nn.AvgPool2d(2, stride=1)),
        ("drop", nn.Dropout(0.25)),
    ]))


def _layers(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv1d(3, 5, 3, stride=2, padding=1, bias=False),
        nn.ConvTranspose1d(5, 3, 4, stride=2, padding=1),
        nn.Conv2d(2, 4, (3, 2), dilation=2, groups=2),
        nn.ConvTranspose2d(4, 2, 4, 2, 1, output_padding=1),
        nn.MaxPool1d(3, stride=2),
        nn.AvgPool1d(2),
        nn.AdaptiveAvgPool2d((1, 1)),
        nn.AdaptiveAvgPool1d(4),
        nn.AdaptiveMaxPool2d(3),
        nn.GroupNorm(2, 4),
        nn.InstanceNorm2d(3),
        nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
        nn.BatchNorm1d(5, momentum=None, affine=False),
        nn.LayerNorm([3, 4], elementwise_affine=False),
        nn.Embedding(10, 3, padding_idx=-1, max_norm=1.0),
        nn.Dropout1d(0.1),
        nn.Dropout2d(),
        nn.Identity(),
        nn.Unflatten(1, (2, 5)),
        nn.ReLU(inplace=True),
        nn.Sigmoid(),
        nn.Tanh(),
        nn.Upsample(size=(3, 4), mode="bilinear", align_corners=False),
        nn.UpsamplingNearest2d(scale_factor=3),
    )


def _recurrent(torch):
    nn = torch.nn
    return nn.ModuleDict({
        "lstm": nn.LSTM(4, 6, num_layers=2, dropout=0.2, batch_first=True),
        "gru": nn.GRU(4, 5, bidirectional=True, bias=False),
        "rnn": nn.RNN(3, 4, 2, nonlinearity="relu"),
        "rnn_tanh": nn.RNN(3, 4),
        "lstm_cell": nn.LSTMCell(3, 4),
        "gru_cell": nn.GRUCell(3, 4, bias=False),
        "rnn_cell": nn.RNNCell(3, 4, nonlinearity="relu"),
    })


def _losses(torch):
    nn = torch.nn
    return nn.ModuleList([
        nn.BCELoss(weight=torch.ones(3)),
        nn.BCEWithLogitsLoss(pos_weight=torch.ones(3)),
        nn.MSELoss(reduction="sum"),
        nn.L1Loss(),
        nn.SmoothL1Loss(beta=0.5),
        nn.HuberLoss(delta=2.0),
        nn.KLDivLoss(reduction="batchmean", log_target=True),
        nn.NLLLoss(weight=torch.ones(4), ignore_index=1),
        nn.CrossEntropyLoss(label_smoothing=0.1),
        nn.CrossEntropyLoss(),
        nn.MarginRankingLoss(0.5),
        nn.HingeEmbeddingLoss(),
        nn.SoftMarginLoss(),
        nn.CosineEmbeddingLoss(),
        nn.TripletMarginLoss(swap=True),
        nn.PoissonNLLLoss(full=True),
        nn.MultiLabelSoftMarginLoss(weight=torch.ones(3)),
    ])


def _transformer(torch):
    nn = torch.nn
    return nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16, dropout=0.0)


def _decoder_stack(torch):
    nn = torch.nn
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
    return nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(8))


def _repeated(torch):
    nn = torch.nn
    return nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU(), nn.Linear(2, 3)])


def _misc(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.ZeroPad2d(1), nn.ZeroPad2d((1, 0, 2, 3)), nn.ConstantPad1d((1, 2), 3.5), nn.ConstantPad3d(1, 0.0), nn.PixelShuffle(2),
        nn.PixelUnshuffle(3), nn.CosineSimilarity(dim=2), nn.PairwiseDistance(p=1.0), nn.DataParallel(nn.Linear(2, 2)),
        nn.EmbeddingBag(10, 3), nn.EmbeddingBag(5, 2, mode="max", padding_idx=0, max_norm=2.0),
    )


STRUCTURE_CASES = {
    "misc": _misc,
    "tied": _tied,
    "nested": _nested,
    "sequential_ordered": _sequential_ordered,
    "layers": _layers,
    "recurrent": _recurrent,
    "losses": _losses,
    "transformer": _transformer,
    "decoder_stack": _decoder_stack,
    "repeated": _repeated,
}


def describe(model) -> dict:
    """What the structure tests compare: the printout, every traversal's
    names, the state dict's keys and the parameters' shapes."""
    return {
        "repr": repr(model),
        "parameters": [[n, list(p.shape)] for n, p in model.named_parameters()],
        "parameters_with_duplicates": [n for n, _ in model.named_parameters(remove_duplicate=False)],
        "buffers": [[n, list(b.shape)] for n, b in model.named_buffers()],
        "modules": [n for n, _ in model.named_modules()],
        "modules_with_duplicates": [n for n, _ in model.named_modules(remove_duplicate=False)],
        "children": [n for n, _ in model.named_children()],
        "state_dict": [[k, list(v.shape)] for k, v in model.state_dict().items()],
        "num_parameters": len(list(model.parameters())),
    }


def load_errors(torch) -> dict:
    """torch's messages and return values for load_state_dict's edge cases."""
    nn = torch.nn
    out = {}

    def model():
        return nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))

    sd = model().state_dict()
    ok = model().load_state_dict(sd)
    out["ok_repr"] = repr(ok)
    missing = {k: v for k, v in sd.items() if k != "1.running_var"}
    extra = dict(sd, **{"2.weight": torch.zeros(1), "1.extra": torch.zeros(1)})
    for name, state in (("missing", missing), ("unexpected", extra)):
        try:
            model().load_state_dict(state)
            out[name + "_strict"] = None
        except RuntimeError as e:
            out[name + "_strict"] = str(e)
        res = model().load_state_dict(state, strict=False)
        out[name + "_lenient"] = [list(res.missing_keys), list(res.unexpected_keys), repr(res)]
    wrong = dict(sd)
    wrong["0.weight"] = torch.zeros(3, 3)
    try:
        model().load_state_dict(wrong, strict=False)
        out["shape"] = None
    except RuntimeError as e:
        out["shape"] = str(e)
    return out
