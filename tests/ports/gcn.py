"""pytorch/examples gcn/main.py, re-expressed on onemodel by changing the
imports, in its dense form (no sparse tensors): GraphConv with a
torch.Tensor(in, out) parameter filled by xavier_normal_ and a zeros_
bias, the symmetric normalisation D^-1/2 (A + I) D^-1/2 with
torch.pow(row_sum, -0.5), isinf masking and torch.diag, GCN with
log_softmax, train/test over index masks with NLLLoss, Adam with
weight_decay, accuracy by argmax. torch.spmm becomes torch.mm (dense);
Cora is replaced by a small synthetic graph."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.nn.functional as F
from onemodel.optim import Adam


class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=False):
        super(GraphConv, self).__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel)
        output = torch.mm(adj_mat, support)
        if self.bias is not None:
            output = output + self.bias
        return output


class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super(GCN, self).__init__()
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x)
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        return torch.log_softmax(x, dim=1)


def gcn_norm(adj_mat, add_self_loops=True):
    if add_self_loops:
        adj_mat = adj_mat + torch.eye(adj_mat.size(0))
    row_sum = torch.sum(adj_mat, dim=1)
    d_inv_sqrt = torch.pow(row_sum, -0.5)
    d_inv_sqrt[torch.isinf(d_inv_sqrt)] = 0.
    d_mat_inv_sqrt = torch.diag(d_inv_sqrt)
    norm_adj = torch.mm(torch.mm(d_mat_inv_sqrt, adj_mat), d_mat_inv_sqrt)
    return norm_adj


def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val, print_every=10):
    model.train()
    optimizer.zero_grad()
    output = model(*input)
    loss = criterion(output[mask_train], target[mask_train])
    loss.backward()
    optimizer.step()
    loss_train = loss.item()
    acc_train = (output[mask_train].argmax(dim=1) == target[mask_train]).float().mean().item()
    with torch.no_grad():
        loss_val = criterion(output[mask_val], target[mask_val]).item()
        acc_val = (output[mask_val].argmax(dim=1) == target[mask_val]).float().mean().item()
    if epoch % print_every == 0:
        print(f'Epoch {epoch:04d} | Loss {loss_train:.4f} | Acc {acc_train:.4f} | Val loss {loss_val:.4f} | Val acc {acc_val:.4f}')
    return [loss_train, acc_train, loss_val, acc_val]


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        loss_test = criterion(output[mask], target[mask]).item()
        acc_test = (output[mask].argmax(dim=1) == target[mask]).float().mean().item()
    return loss_test, acc_test


def sweep_drive(run):
    torch.manual_seed(42)
    rng = np.random.default_rng(5)
    n, feats, classes = 14, 6, 3
    adj = (rng.random((n, n)) < 0.25).astype(np.float32)
    adj = np.maximum(adj, adj.T)
    np.fill_diagonal(adj, 0)
    adj[n - 1, :] = 0
    adj[:, n - 1] = 0  # an isolated node
    features = torch.tensor(rng.random((n, feats)), dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, classes, n))
    adj_mat = gcn_norm(torch.tensor(adj), add_self_loops=False)
    idx = torch.arange(n)
    idx_train, idx_val, idx_test = idx[:6], idx[6:10], idx[10:]
    gcn = GCN(feats, 8, classes, use_bias=True, dropout_p=0.0)
    run.sync_weights("gcn", gcn)
    optimizer = Adam(gcn.parameters(), lr=0.05, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    hist = [train_iter(e + 1, gcn, optimizer, criterion, (features, adj_mat), labels, idx_train, idx_val) for e in range(3)]
    run.result("train", hist)
    run.result("test", list(test(gcn, criterion, (features, adj_mat), labels, idx_test)))
    bool_mask = torch.zeros(n, dtype=torch.bool)
    bool_mask[idx_test] = True
    run.result("test_bool_mask", list(test(gcn, criterion, (features, adj_mat), labels, bool_mask)))
    run.result("norm_adj", adj_mat.numpy()[-3:, -3:])
