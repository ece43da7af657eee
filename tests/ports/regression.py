"""pytorch/examples regression/main.py, re-expressed on onemodel by
changing the imports: polynomial features through torch.cat of powers,
a target function with x.mm(W) + b.item(), a Linear fitted with
F.smooth_l1_loss and the manual update param.data.add_(-0.1 * param.grad),
and poly_desc's '{:+.2f}'.format of tensor elements. The loop stops after a
fixed number of batches instead of at loss < 1e-3."""

from itertools import count

import onemodel as torch
import onemodel.nn.functional as F

POLY_DEGREE = 4


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def sweep_drive(run):
    torch.manual_seed(0)
    with run.draws():
        W_target = torch.randn(POLY_DEGREE, 1) * 5
        b_target = torch.randn(1) * 5

        def f(x):
            """Approximated function."""
            return x.mm(W_target) + b_target.item()

        def get_batch(batch_size=32):
            """Builds a batch i.e. (x, f(x)) pair."""
            random = torch.randn(batch_size)
            x = make_features(random)
            y = f(x)
            return x, y

        fc = torch.nn.Linear(W_target.size(0), 1)
        run.sync_weights("fc", fc)
        losses = []
        for batch_idx in count(1):
            batch_x, batch_y = get_batch()
            fc.zero_grad()
            output = F.smooth_l1_loss(fc(batch_x), batch_y)
            loss = output.item()
            output.backward()
            for param in fc.parameters():
                param.data.add_(-0.1 * param.grad)
            losses.append(loss)
            if loss < 1e-3 or batch_idx >= 6:
                break
    run.result("losses", losses)
    desc = poly_desc(fc.weight.view(-1), fc.bias)
    run.result("desc_numbers", [float(t) for t in desc.replace("y = ", "").replace("x^", " ").split() if "." in t])
    run.result("desc_text_len", len(desc))
