"""pytorch/examples super_resolution (model.py, main.py's train/test and
checkpoint), re-expressed on onemodel by changing the imports: four
Conv2d with ReLU and nn.PixelShuffle, init.orthogonal_ with
init.calculate_gain('relu'), MSELoss, Adam, the PSNR of the test set
(10·log10(1/mse)), and a state_dict checkpoint saved to a buffer and
loaded into a fresh model. The BSDS300 crops are replaced by synthetic
low/high-resolution pairs; the channel widths are cut from 64/64/32 to
8/8/4."""

import io
from math import log10

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.nn.init as init
import onemodel.optim as optim
from onemodel.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, upscale_factor, width=64):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, width, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(width, width, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(width, width // 2, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(width // 2, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


def synthetic_pairs(n, size, factor, seed):
    rng = np.random.default_rng(seed)
    hi = rng.random((n, 1, size * factor, size * factor)).astype(np.float32)
    lo = hi.reshape(n, 1, size, factor, size, factor).mean(axis=(3, 5)).astype(np.float32)
    return TensorDataset(torch.from_numpy(lo), torch.from_numpy(hi))


def train(model, criterion, optimizer, training_data_loader, device):
    epoch_loss = 0
    losses = []
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    print("===> Epoch Complete: Avg. Loss: {:.4f}".format(epoch_loss / len(training_data_loader)))
    return losses


def test(model, criterion, testing_data_loader, device):
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)

            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))
    return avg_psnr / len(testing_data_loader)


def sweep_drive(run):
    torch.manual_seed(123)
    device = torch.device("cpu")
    upscale_factor = 2
    training_data_loader = DataLoader(dataset=synthetic_pairs(6, 6, upscale_factor, 0), num_workers=0, batch_size=3, shuffle=True)
    testing_data_loader = DataLoader(dataset=synthetic_pairs(4, 6, upscale_factor, 1), num_workers=0, batch_size=2, shuffle=False)
    model = Net(upscale_factor=upscale_factor, width=8).to(device)
    run.sync_weights("net", model)
    fresh = Net(upscale_factor=upscale_factor, width=8)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    with run.draws():
        run.result("train_losses", train(model, criterion, optimizer, training_data_loader, device))
        run.result("psnr", test(model, criterion, testing_data_loader, device))
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    fresh.load_state_dict(torch.load(buf))
    with torch.no_grad():
        out = fresh(next(iter(testing_data_loader))[0])
    run.result("restored_output", out.numpy()[0, 0, :4, :4])
    run.result("output_shape", list(out.shape))
