"""pytorch/examples snli (model.py and train.py's loop), re-expressed on
onemodel by changing the imports: Bottle (a mixin whose forward folds the
first two dims, used through multiple inheritance as
class Linear(Bottle, nn.Linear)), the Encoder (nn.LSTM, bidirectional,
states from inputs.new_zeros, ht[-2:].transpose(0, 1).contiguous().view),
SNLIClassifier (Embedding, a projection, the 4-layer out Sequential),
CrossEntropyLoss, Adam, and the accuracy count
(torch.max(answer, 1)[1].view(label.size()) == label).sum().item().
torchtext's SNLI is replaced by synthetic (seq_len, batch) token batches."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.optim as O


class Bottle(nn.Module):

    def forward(self, input):
        if len(input.size()) <= 2:
            return super(Bottle, self).forward(input)
        size = input.size()[:2]
        out = super(Bottle, self).forward(input.view(size[0] * size[1], -1))
        return out.view(size[0], size[1], -1)


class Linear(Bottle, nn.Linear):
    pass


class Encoder(nn.Module):

    def __init__(self, config):
        super(Encoder, self).__init__()
        self.config = config
        input_size = config.d_proj if config.projection else config.d_embed
        dropout = 0 if config.n_layers == 1 else config.dp_ratio
        self.rnn = nn.LSTM(input_size=input_size, hidden_size=config.d_hidden,
                           num_layers=config.n_layers, dropout=dropout,
                           bidirectional=config.birnn)

    def forward(self, inputs):
        batch_size = inputs.size()[1]
        state_shape = self.config.n_cells, batch_size, self.config.d_hidden
        h0 = c0 = inputs.new_zeros(state_shape)
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        return ht[-1] if not self.config.birnn else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)


class SNLIClassifier(nn.Module):

    def __init__(self, config):
        super(SNLIClassifier, self).__init__()
        self.config = config
        self.embed = nn.Embedding(config.n_embed, config.d_embed)
        self.projection = Linear(config.d_embed, config.d_proj)
        self.encoder = Encoder(config)
        self.dropout = nn.Dropout(p=config.dp_ratio)
        self.relu = nn.ReLU()
        seq_in_size = 2 * config.d_hidden
        if self.config.birnn:
            seq_in_size *= 2
        lin_config = [seq_in_size] * 2
        self.out = nn.Sequential(
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(*lin_config),
            self.relu,
            self.dropout,
            Linear(seq_in_size, config.d_out))

    def forward(self, batch):
        prem_embed = self.embed(batch.premise)
        hypo_embed = self.embed(batch.hypothesis)
        if self.config.fix_emb:
            prem_embed = prem_embed.detach()
            hypo_embed = hypo_embed.detach()
        if self.config.projection:
            prem_embed = self.relu(self.projection(prem_embed))
            hypo_embed = self.relu(self.projection(hypo_embed))
        premise = self.encoder(prem_embed)
        hypothesis = self.encoder(hypo_embed)
        scores = self.out(torch.cat([premise, hypothesis], 1))
        return scores


class Config:
    n_embed, d_embed, d_proj, d_hidden, d_out = 20, 8, 6, 5, 3
    n_layers, dp_ratio, birnn, projection, fix_emb = 1, 0.0, True, True, False
    n_cells = 2


class Batch:
    def __init__(self, rng, seq_len, batch_size):
        self.premise = torch.tensor(rng.integers(0, Config.n_embed, (seq_len, batch_size)))
        self.hypothesis = torch.tensor(rng.integers(0, Config.n_embed, (seq_len - 1, batch_size)))
        self.label = torch.tensor(rng.integers(0, Config.d_out, batch_size))
        self.batch_size = batch_size


def sweep_drive(run):
    torch.manual_seed(0)
    rng = np.random.default_rng(11)
    train_iter = [Batch(rng, 7, 4) for _ in range(3)]
    dev_iter = [Batch(rng, 6, 5)]
    model = SNLIClassifier(Config())
    run.sync_weights("snli", model)
    criterion = nn.CrossEntropyLoss()
    opt = O.Adam(model.parameters(), lr=0.01)
    losses, n_correct, n_total = [], 0, 0
    for batch_idx, batch in enumerate(train_iter):
        model.train()
        opt.zero_grad()
        answer = model(batch)
        n_correct += (torch.max(answer, 1)[1].view(batch.label.size()) == batch.label).sum().item()
        n_total += batch.batch_size
        loss = criterion(answer, batch.label)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        dev_correct, dev_loss = 0, 0
        for dev_batch_idx, dev_batch in enumerate(dev_iter):
            answer = model(dev_batch)
            dev_correct += (torch.max(answer, 1)[1].view(dev_batch.label.size()) == dev_batch.label).sum().item()
            dev_loss = criterion(answer, dev_batch.label)
    run.result("train_losses", losses)
    run.result("train_acc", 100. * n_correct / n_total)
    run.result("dev", [dev_correct, dev_loss.item()])
    run.result("dev_scores", answer.numpy())
