"""torchvision's ResNet code (models/resnet.py: conv3x3, conv1x1,
BasicBlock with its downsample Sequential, _make_layer, the kaiming_normal_
(mode="fan_out", nonlinearity="relu") / constant_ init loop over
self.modules(), zero_init_residual, ReLU(inplace=True), MaxPool2d(3, 2, 1),
AdaptiveAvgPool2d((1, 1)), torch.flatten(x, 1)) as a ResNet-18 layout,
re-expressed on onemodel by changing the imports, trained as the imagenet
/ CIFAR examples do: CrossEntropyLoss(label_smoothing=0.1), SGD with
momentum, nesterov and weight_decay, OneCycleLR stepped per batch,
model.eval() with the BatchNorm running statistics for the test pass,
top-1 accuracy and a state_dict round trip. Widths are cut to 4/8/8/8 and
the images are synthetic 3x16x16."""

import io

import numpy as np

import onemodel as torch
import onemodel.nn as nn
from onemodel import Tensor
from onemodel.optim.lr_scheduler import OneCycleLR


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion: int = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None, widths=(64, 128, 256, 512)):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer

        self.inplanes = widths[0]
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, widths[0], layers[0])
        self.layer2 = self._make_layer(block, widths[1], layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, widths[2], layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, widths[3], layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[3] * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )

        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation, norm_layer))
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width, dilation=self.dilation, norm_layer=norm_layer))

        return nn.Sequential(*layers)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)

        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)

        return x

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def resnet18(**kwargs):
    return ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)


def synthetic_images(n, seed, classes=4):
    rng = np.random.default_rng(seed)
    return (torch.tensor(rng.standard_normal((n, 3, 16, 16)).astype(np.float32)),
            torch.tensor(rng.integers(0, classes, n)))


def sweep_drive(run):
    torch.manual_seed(0)
    model = resnet18(num_classes=4, zero_init_residual=True, widths=(4, 8, 8, 8))
    run.sync_weights("resnet18", model)
    images, labels = synthetic_images(12, 0)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=4, shuffle=False)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    scheduler = OneCycleLR(optimizer, max_lr=0.1, steps_per_epoch=len(loader), epochs=2)
    losses, lrs = [], []
    for epoch in range(2):
        model.train()
        for inputs, targets in loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            lrs.append(optimizer.param_groups[0]["lr"])
            _, predicted = outputs.max(1)
    model.eval()
    test_x, test_y = synthetic_images(8, 1)
    with torch.no_grad():
        out = model(test_x)
        correct = out.argmax(1).eq(test_y).sum().item()
        test_loss = criterion(out, test_y).item()
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    fresh = resnet18(num_classes=4, widths=(4, 8, 8, 8))
    fresh.load_state_dict(torch.load(buf))
    fresh.eval()
    with torch.no_grad():
        same = fresh(test_x)
    run.result("train_losses", losses)
    run.result("lrs", lrs)
    run.result("test_loss", test_loss)
    run.result("correct", correct)
    # The restored model's loss, not its logits: after six SGD steps on BatchNorm
    # over 4-value batches (layer4 sees 1x1 maps) elements differ from torch's in
    # the 6th digit; the round trip itself is exact.
    run.result("restored_test_loss", criterion(same, test_y).item())
    run.result("restored_equals_trained", bool((same == out).all()))
    run.result("running_mean", model.bn1.running_mean.numpy())
    run.result("num_batches_tracked", model.bn1.num_batches_tracked.item())
