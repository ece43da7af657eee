"""A character-level RNN as the classic char-rnn / "generating names"
programs write it with torch: one-hot inputs through F.one_hot(...).float(),
an nn.GRU with an initial hidden state from torch.zeros, a Linear decoder,
truncated BPTT with hidden.detach() between chunks, CrossEntropyLoss over
view(-1, n_chars), Adam with clip_grad_norm_, and sampling with a
temperature (logits / T, softmax, torch.multinomial) and with top-k
(torch.topk then multinomial over the kept probabilities, scatter back).
The corpus is a synthetic string."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.nn.functional as F


class CharRNN(nn.Module):
    def __init__(self, n_chars, hidden_size, n_layers=1):
        super().__init__()
        self.n_chars, self.hidden_size, self.n_layers = n_chars, hidden_size, n_layers
        self.rnn = nn.GRU(n_chars, hidden_size, n_layers, batch_first=True)
        self.decoder = nn.Linear(hidden_size, n_chars)

    def forward(self, x, hidden):
        x = F.one_hot(x, self.n_chars).float()
        out, hidden = self.rnn(x, hidden)
        return self.decoder(out), hidden

    def init_hidden(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.hidden_size)


def sample(model, start, length, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        hidden = model.init_hidden(1)
        x = torch.tensor([[start]])
        out = [start]
        for _ in range(length):
            logits, hidden = model(x, hidden)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, ix = torch.topk(logits, top_k, dim=-1)
                probs = torch.zeros_like(logits).scatter_(-1, ix, F.softmax(v, dim=-1))
            else:
                probs = F.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1)
            out.append(int(nxt.item()))
            x = nxt
    model.train()
    return out


def sweep_drive(run):
    torch.manual_seed(7)
    text = "hello world, hello onemodel. " * 3
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    model = CharRNN(len(chars), 12)
    run.sync_weights("charrnn", model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    batch, chunk = 2, 8
    n = (len(data) - 1) // (batch * chunk) * (batch * chunk)
    xs = data[:n].view(batch, -1)
    ys = data[1:n + 1].view(batch, -1)
    hidden = model.init_hidden(batch)
    losses = []
    for i in range(0, xs.size(1), chunk):
        hidden = hidden.detach()
        logits, hidden = model(xs[:, i:i + chunk], hidden)
        loss = criterion(logits.reshape(-1, len(chars)), ys[:, i:i + chunk].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    with run.draws():
        run.result("sample_temperature", sample(model, stoi["h"], 8, temperature=0.8))
        run.result("sample_top_k", sample(model, stoi["o"], 8, top_k=3))
    run.result("losses", losses)
