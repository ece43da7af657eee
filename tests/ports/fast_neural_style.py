"""pytorch/examples fast_neural_style (transformer_net.py, vgg.py,
utils.py and neural_style.py's train loop), re-expressed on onemodel by
changing the imports: ConvLayer (ReflectionPad2d + Conv2d),
InstanceNorm2d(affine=True), ResidualBlock, UpsampleConvLayer
(F.interpolate nearest with scale_factor), the loss network's slices
built with add_module and frozen with requires_grad = False, a namedtuple
of features, gram_matrix (view, transpose, bmm), normalize_batch
(new_tensor, in-place div_), content and style MSE losses, Adam. The
pretrained VGG16 is replaced by a small conv stack with the same slice
structure; widths are cut (32/64/128 to 4/8/8) and two residual blocks
kept; the images are synthetic."""

from collections import namedtuple

import numpy as np

import onemodel as torch
from onemodel.optim import Adam


class TransformerNet(torch.nn.Module):
    def __init__(self, w=(32, 64, 128), n_res=5):
        super(TransformerNet, self).__init__()
        a, b, c = w
        self.conv1 = ConvLayer(3, a, kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(a, affine=True)
        self.conv2 = ConvLayer(a, b, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(b, affine=True)
        self.conv3 = ConvLayer(b, c, kernel_size=3, stride=2)
        self.in3 = torch.nn.InstanceNorm2d(c, affine=True)
        self.res = torch.nn.Sequential(*[ResidualBlock(c) for _ in range(n_res)])
        self.deconv1 = UpsampleConvLayer(c, b, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(b, affine=True)
        self.deconv2 = UpsampleConvLayer(b, a, kernel_size=3, stride=1, upsample=2)
        self.in5 = torch.nn.InstanceNorm2d(a, affine=True)
        self.deconv3 = ConvLayer(a, 3, kernel_size=9, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


class Vgg16(torch.nn.Module):
    """vgg.py's slicing of a features Sequential, over a small stand-in."""

    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        nn = torch.nn
        vgg_pretrained_features = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.slice1 = torch.nn.Sequential()
        self.slice2 = torch.nn.Sequential()
        self.slice3 = torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 12):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3'])
        out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3)
        return out


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def sweep_drive(run):
    torch.manual_seed(42)
    np.random.seed(42)
    device = torch.device("cpu")
    rng = np.random.default_rng(0)
    images = torch.from_numpy((rng.random((4, 3, 16, 16)) * 255).astype(np.float32))
    style = torch.from_numpy((rng.random((1, 3, 16, 16)) * 255).astype(np.float32))
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images), batch_size=2)
    transformer = TransformerNet(w=(4, 8, 8), n_res=2).to(device)
    vgg = Vgg16(requires_grad=False).to(device)
    run.sync_weights("transformer", transformer)
    run.sync_weights("vgg", vgg)
    optimizer = Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()
    style = style.repeat(2, 1, 1, 1).to(device)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]
    content_weight, style_weight = 1e5, 1e10
    transformer.eval()
    with torch.no_grad():
        out = transformer(normalize_batch(images[:1].clone())).clamp(0, 255)
    # Per-channel means, not elements: five InstanceNorms over 4x4 maps amplify
    # torch's own float32 variance rounding (3e-5 from a float64 reference on
    # such maps, onemodel's 1e-5) to ~1e-4 relative per element.
    run.result("stylized_channel_means", out.mean(dim=(0, 2, 3)).numpy())
    results = []
    transformer.train()
    for batch_id, (x,) in enumerate(train_loader):
        n_batch = len(x)
        optimizer.zero_grad()
        x = x.to(device)
        y = transformer(x)
        y = normalize_batch(y)
        x = normalize_batch(x)
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)
        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= style_weight
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
        results.append([content_loss.item(), style_loss.item()])
    run.result("losses", results)
