"""pytorch/examples siamese_network/main.py, re-expressed on onemodel by
changing the imports: the SiameseNetwork that takes a ResNet-18 (here the
torchvision code of tests/ports/resnet.py, widths cut), replaces its conv1,
drops its fc with nn.Sequential(*list(children())[:-1]), adds a
Linear-ReLU(inplace)-Linear head over the concatenated embeddings, its
init_weights applied with Module.apply (xavier_uniform_, bias.data.fill_),
BCELoss on a Sigmoid, Adadelta with StepLR, and test()'s
torch.where(outputs > 0.5, 1, 0) / pred.eq(targets.view_as(pred)) count.
MNIST pairs are replaced by synthetic 1x64x64 pairs: with 28x28 images
layer4 sees 1x1 maps, and its BatchNorm over 4 values (the batch) amplifies
float32 rounding (torch's and onemodel's alike, both ~1e-5 from a float64
reference) past the test's 1e-5 tolerance; 64x64 gives 2x2 maps."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
import onemodel.optim as optim
from onemodel.optim.lr_scheduler import StepLR
from onemodel.utils.data import DataLoader, Dataset

import harness  # noqa: E402

# stands in for torchvision.models: tests/ports/resnet.py on the same library
torchvision_models = harness.load_port("resnet", torch.__name__)


class SiameseNetwork(nn.Module):
    def __init__(self):
        super(SiameseNetwork, self).__init__()
        self.resnet = torchvision_models.resnet18(widths=(4, 8, 8, 8))
        self.resnet.conv1 = nn.Conv2d(1, 4, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
        self.fc_in_features = self.resnet.fc.in_features
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, 1),
        )
        self.sigmoid = nn.Sigmoid()
        self.resnet.apply(self.init_weights)
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.resnet(x)
        output = output.view(output.size()[0], -1)
        return output

    def forward(self, input1, input2):
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)
        output = torch.cat((output1, output2), 1)
        output = self.fc(output)
        output = self.sigmoid(output)
        return output


class APP_MATCHER(Dataset):
    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.a = rng.random((n, 1, 64, 64)).astype(np.float32)
        self.b = rng.random((n, 1, 64, 64)).astype(np.float32)
        self.t = rng.integers(0, 2, n).astype(np.float32)

    def __len__(self):
        return len(self.t)

    def __getitem__(self, index):
        return torch.from_numpy(self.a[index]), torch.from_numpy(self.b[index]), torch.from_numpy(np.array([self.t[index]], dtype=np.float32))


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    criterion = nn.BCELoss()
    losses = []
    for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
        images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()
        loss = criterion(outputs, targets.squeeze())
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    criterion = nn.BCELoss()
    with torch.no_grad():
        for (images_1, images_2, targets) in test_loader:
            images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
            outputs = model(images_1, images_2).squeeze()
            test_loss += criterion(outputs, targets.squeeze()).sum().item()
            pred = torch.where(outputs > 0.5, 1, 0)
            correct += pred.eq(targets.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    return test_loss, correct


def sweep_drive(run):
    torch.manual_seed(1)
    device = torch.device("cpu")
    train_loader = DataLoader(APP_MATCHER(8, 0), batch_size=4, shuffle=False)
    test_loader = DataLoader(APP_MATCHER(6, 1), batch_size=3, shuffle=False)
    model = SiameseNetwork().to(device)
    run.sync_weights("siamese", model)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    run.result("train_losses", train(model, device, train_loader, optimizer, 1))
    test_loss, correct = test(model, device, test_loader)
    scheduler.step()
    run.result("test_loss", test_loss)
    run.result("correct", correct)
    run.result("lr", optimizer.param_groups[0]["lr"])
    run.result("module_count", len(list(model.modules())))
