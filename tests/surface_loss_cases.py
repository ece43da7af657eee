"""Loss cases shared by tools/surface_oracle.py (torch) and
tests/test_surface_losses.py (onemodel). Each case is (inputs, fn): the
input kinds the oracle draws (and stores) and the loss computed from the
library passed in as ``torch`` and the input tensors; the first input (and
every float input marked "+") requires grad.

Input kinds: f normal; p probabilities in (0, 1); s saturated
probabilities (including exact 0 and 1); b binary targets; u uniform [0, 1]
targets; i<C> class indices below C; w positive weights; lp log-softmax
rows (dim 1); d a distribution per row (dim 1); pm ±1 labels; c counts 0..4."""

from __future__ import annotations


def _F(t):
    return t.nn.functional


LOSS_CASES = {
    "mse_mean": ([("f+", (4, 3)), ("f", (4, 3))], lambda t, x, y: _F(t).mse_loss(x, y)),
    "mse_sum_module": ([("f+", (2, 3, 4)), ("f", (2, 3, 4))], lambda t, x, y: t.nn.MSELoss(reduction="sum")(x, y)),
    "mse_none_weight": ([("f+", (3, 5)), ("f", (3, 5)), ("w", (3, 5))], lambda t, x, y, w: _F(t).mse_loss(x, y, reduction="none", weight=w)),
    "mse_mean_weight": ([("f+", (3, 5)), ("f", (3, 5)), ("w", (3, 5))], lambda t, x, y, w: _F(t).mse_loss(x, y, weight=w)),
    "mse_target_grad": ([("f+", (6,)), ("f+", (6,))], lambda t, x, y: _F(t).mse_loss(x, y)),
    "l1_mean": ([("f+", (4, 6)), ("f", (4, 6))], lambda t, x, y: t.nn.L1Loss()(x, y)),
    "l1_sum": ([("f+", (10,)), ("f", (10,))], lambda t, x, y: _F(t).l1_loss(x, y, reduction="sum")),
    "smooth_l1_default": ([("f+", (5, 4)), ("f", (5, 4))], lambda t, x, y: _F(t).smooth_l1_loss(x, y)),
    "smooth_l1_beta": ([("f+", (5, 4)), ("f", (5, 4))], lambda t, x, y: t.nn.SmoothL1Loss(beta=0.3, reduction="sum")(x, y)),
    "smooth_l1_beta0": ([("f+", (7,)), ("f", (7,))], lambda t, x, y: _F(t).smooth_l1_loss(x, y, beta=0.0)),
    "huber_delta": ([("f+", (6, 3)), ("f", (6, 3))], lambda t, x, y: t.nn.HuberLoss(delta=0.7)(x, y)),
    "huber_none": ([("f+", (6, 3)), ("f", (6, 3))], lambda t, x, y: _F(t).huber_loss(x, y, reduction="none", delta=2.0)),
    "kl_batchmean": ([("lp+", (4, 5)), ("d", (4, 5))], lambda t, x, y: _F(t).kl_div(x, y, reduction="batchmean")),
    "kl_log_target_sum": ([("lp+", (4, 5)), ("lp+", (4, 5))], lambda t, x, y: t.nn.KLDivLoss(reduction="sum", log_target=True)(x, y)),
    "kl_mean_zero_target": ([("lp+", (3, 4)), ("b", (3, 4))], lambda t, x, y: _F(t).kl_div(x, y, reduction="mean")),
    "bce_mean": ([("p+", (8, 3)), ("u", (8, 3))], lambda t, x, y: _F(t).binary_cross_entropy(x, y)),
    "bce_saturated": ([("s+", (12,)), ("b", (12,))], lambda t, x, y: t.nn.BCELoss()(x, y)),
    "bce_weight_sum": ([("p+", (4, 3)), ("b", (4, 3)), ("w", (3,))], lambda t, x, y, w: t.nn.BCELoss(weight=w, reduction="sum")(x, y)),
    "bce_target_grad": ([("p+", (5,)), ("u+", (5,))], lambda t, x, y: _F(t).binary_cross_entropy(x, y)),
    "bce_logits_mean": ([("f+", (6, 4)), ("b", (6, 4))], lambda t, x, y: _F(t).binary_cross_entropy_with_logits(x, y)),
    "bce_logits_large": ([("L+", (10,)), ("b", (10,))], lambda t, x, y: t.nn.BCEWithLogitsLoss(reduction="sum")(x, y)),
    "bce_logits_pos_weight": ([("f+", (5, 3)), ("u", (5, 3)), ("w", (3,))],
                              lambda t, x, y, pw: t.nn.BCEWithLogitsLoss(pos_weight=pw)(x, y)),
    "bce_logits_weight_none": ([("f+", (5, 3)), ("b", (5, 3)), ("w", (5, 1))],
                               lambda t, x, y, w: _F(t).binary_cross_entropy_with_logits(x, y, weight=w, reduction="none")),
    "nll_weight_ignore": ([("lp+", (6, 5)), ("i5", (6,)), ("w", (5,))],
                          lambda t, x, y, w: t.nn.NLLLoss(weight=w, ignore_index=2)(x, y)),
    "nll_spatial_sum": ([("lp+", (2, 4, 3, 3)), ("i4", (2, 3, 3))], lambda t, x, y: _F(t).nll_loss(x, y, reduction="sum")),
    "ce_label_smoothing": ([("f+", (6, 5)), ("i5", (6,))], lambda t, x, y: t.nn.CrossEntropyLoss(label_smoothing=0.1)(x, y)),
    "ce_smoothing_weight_ignore": ([("f+", (7, 4)), ("i4", (7,)), ("w", (4,))],
                                   lambda t, x, y, w: _F(t).cross_entropy(x, y, weight=w, ignore_index=1, label_smoothing=0.2)),
    "ce_smoothing_sum_spatial": ([("f+", (2, 3, 4)), ("i3", (2, 4))],
                                 lambda t, x, y: _F(t).cross_entropy(x, y, reduction="sum", label_smoothing=0.05)),
    "ce_smoothing_none": ([("f+", (4, 3)), ("i3", (4,))], lambda t, x, y: _F(t).cross_entropy(x, y, reduction="none", label_smoothing=0.3)),
    "ce_probabilities_smoothing": ([("f+", (4, 3)), ("d", (4, 3))], lambda t, x, y: _F(t).cross_entropy(x, y, label_smoothing=0.2)),
    "margin_ranking": ([("f+", (6,)), ("f+", (6,)), ("pm", (6,))], lambda t, x1, x2, y: t.nn.MarginRankingLoss(margin=0.3)(x1, x2, y)),
    "hinge_embedding": ([("f+", (4, 3)), ("pm", (4, 3))], lambda t, x, y: _F(t).hinge_embedding_loss(x, y, margin=0.5)),
    "soft_margin_sum": ([("L+", (8,)), ("pm", (8,))], lambda t, x, y: t.nn.SoftMarginLoss(reduction="sum")(x, y)),
    "cosine_embedding": ([("f+", (5, 4)), ("f+", (5, 4)), ("pm", (5,))], lambda t, a, b, y: t.nn.CosineEmbeddingLoss(margin=0.2)(a, b, y)),
    "triplet_margin": ([("f+", (4, 6)), ("f+", (4, 6)), ("f+", (4, 6))], lambda t, a, p, n: t.nn.TripletMarginLoss(margin=2.0)(a, p, n)),
    "triplet_margin_swap_p1": ([("f+", (4, 6)), ("f+", (4, 6)), ("f+", (4, 6))],
                               lambda t, a, p, n: _F(t).triplet_margin_loss(a, p, n, p=1, swap=True, reduction="none")),
    "poisson_nll": ([("f+", (3, 4)), ("w", (3, 4))], lambda t, x, y: t.nn.PoissonNLLLoss()(x, y)),
    "poisson_nll_full_linear": ([("w+", (3, 4)), ("c", (3, 4))], lambda t, x, y: _F(t).poisson_nll_loss(x, y, log_input=False, full=True)),
    "multilabel_soft_margin": ([("f+", (4, 5)), ("b", (4, 5)), ("w", (5,))],
                               lambda t, x, y, w: t.nn.MultiLabelSoftMarginLoss(weight=w)(x, y)),
    "ce_weight": ([("f+", (5, 4)), ("i4", (5,)), ("w", (4,))], lambda t, x, y, w: t.nn.CrossEntropyLoss(weight=w)(x, y)),
}
