"""A ViT-style image classifier as users write it with torch.nn (the
patch-embedding pattern of timm / the vision_transformer example):
PatchEmbed as a strided Conv2d then flatten(2).transpose(1, 2), a cls
token and position embedding as nn.Parameter (trunc_normal_), nn.TransformerEncoder
of TransformerEncoderLayer(batch_first=True, norm_first=True,
activation="gelu"), LayerNorm(eps=1e-6), a Linear head on x[:, 0];
trained with CrossEntropyLoss(label_smoothing=0.1), AdamW and a
warmup (LinearLR) + CosineAnnealingLR SequentialLR schedule, evaluated
with top-1 accuracy. Synthetic images, tiny sizes."""

import numpy as np

import onemodel as torch
import onemodel.nn as nn
from onemodel.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR


class PatchEmbed(nn.Module):
    def __init__(self, img_size=8, patch_size=4, in_chans=3, embed_dim=16):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, img_size=8, patch_size=4, in_chans=3, num_classes=5, embed_dim=16, depth=2, num_heads=2, mlp_ratio=2.0):
        super().__init__()
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        nn.init.trunc_normal_(self.pos_embed, std=.02)
        nn.init.trunc_normal_(self.cls_token, std=.02)
        encoder_layer = nn.TransformerEncoderLayer(d_model=embed_dim, nhead=num_heads, dim_feedforward=int(embed_dim * mlp_ratio),
                                                   dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(encoder_layer, num_layers=depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1)
        x = x + self.pos_embed
        x = self.encoder(x)
        x = self.norm(x)
        return self.head(x[:, 0])


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions (as the imagenet example)."""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


def sweep_drive(run):
    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    images = torch.tensor(rng.standard_normal((6, 3, 8, 8)).astype(np.float32))
    labels = torch.tensor(rng.integers(0, 5, 6))
    model = ViT()
    run.sync_weights("vit", model)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    warmup = LinearLR(optimizer, start_factor=0.1, total_iters=2)
    cosine = CosineAnnealingLR(optimizer, T_max=4, eta_min=1e-5)
    scheduler = SequentialLR(optimizer, schedulers=[warmup, cosine], milestones=[2])
    losses, lrs = [], []
    model.train()
    for step in range(4):
        x, y = images[(step % 2) * 3:(step % 2) * 3 + 3], labels[(step % 2) * 3:(step % 2) * 3 + 3]
        output = model(x)
        loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        lrs.append(scheduler.get_last_lr()[0])
    model.eval()
    with torch.no_grad():
        out = model(images)
        acc1, acc3 = accuracy(out, labels, topk=(1, 3))
    run.result("losses", losses)
    run.result("lrs", lrs)
    run.result("acc", [acc1.item(), acc3.item()])
    run.result("logits", out.numpy())
