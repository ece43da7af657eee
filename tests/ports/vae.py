"""pytorch/examples vae/main.py, re-expressed on onemodel by changing the
imports: the VAE (784-400-20), the reparameterisation with randn_like,
loss_function (binary cross-entropy + KL), train(), test() and the
sampling step. MNIST (torchvision) is replaced by synthetic images in
[0, 1]; save_image is left out (no torchvision)."""

import argparse

import numpy as np

import onemodel as torch
import onemodel.utils.data
from onemodel import nn, optim
from onemodel.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # https://arxiv.org/abs/1312.6114
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    train_loss = 0
    losses = []
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        losses.append(loss.item())
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader),
                loss.item() / len(data)))

    print('====> Epoch: {} Average loss: {:.4f}'.format(epoch, train_loss / len(train_loader.dataset)))
    return losses


def test(args, model, device, test_loader, epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n], recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                del comparison  # the original saves it with torchvision's save_image

    test_loss /= len(test_loader.dataset)
    print('====> Test set loss: {:.4f}'.format(test_loss))
    return test_loss


def sample(model, device):
    with torch.no_grad():
        sample = torch.randn(64, 20).to(device)
        sample = model.decode(sample).cpu()
    return sample


def synthetic_mnist(n, seed):
    """Stand-in for datasets.MNIST + ToTensor: images in [0, 1]."""
    rng = np.random.default_rng(seed)
    images = rng.random((n, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, n).astype(np.int64)
    return torch.utils.data.TensorDataset(torch.tensor(images), torch.tensor(labels))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='VAE MNIST Example')
    parser.add_argument('--batch-size', type=int, default=4, metavar='N')
    parser.add_argument('--epochs', type=int, default=1, metavar='N')
    parser.add_argument('--no-accel', action='store_true')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    use_accel = not args.no_accel and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if use_accel else "cpu")
    kwargs = {'num_workers': 1, 'pin_memory': True} if use_accel else {}
    train_loader = torch.utils.data.DataLoader(synthetic_mnist(8, 0), batch_size=args.batch_size, shuffle=True, **kwargs)
    test_loader = torch.utils.data.DataLoader(synthetic_mnist(8, 1), batch_size=args.batch_size, shuffle=False, **kwargs)
    model = VAE().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(args, model, device, test_loader, epoch)
        sample(model, device)


if __name__ == "__main__":
    main()
