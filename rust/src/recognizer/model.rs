//! crnn-v0: random initialization and the per-line forward and backward
//! pass (the configuration and parameter layout are in `config.rs`).

pub use super::config::{to_natural, to_runtime, Config, Kind, ParamInfo};
use super::conv;
use super::linear;
use super::lstm::{self, DirParams, DirState, RecScratch};
use crate::error::{Error, Result};
use crate::kernels::transpose::transpose;
use crate::ptr::Ptr;
use crate::simd::Token;
use crate::splitmix::SplitMix64;

/// Deterministic uniform numbers (crate::splitmix), the same on every
/// platform.
pub struct SplitMix(pub SplitMix64);

impl SplitMix {
    /// The stream seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(SplitMix64(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in [−bound, bound): (2u − 1)·bound with u a multiple of 2^−24.
    pub fn uniform(&mut self, bound: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f32 * (1.0 / 16_777_216.0);
        (2.0 * u - 1.0) * bound
    }
}

/// The model: configuration and fp32 masters in run-time layout.
#[derive(Clone, Debug)]
pub struct Model {
    pub cfg: Config,
    pub info: Vec<ParamInfo>,
    pub params: Vec<Vec<f32>>,
}

impl Model {
    /// Random initialization, PyTorch's default scheme: every tensor
    /// uniform in ±1/√fan_in (fan_in = 9C for convolutions, the input size
    /// for the classifier, H for the LSTM), drawn in parameter order from
    /// one splitmix64 stream seeded with `seed`.
    pub fn new(cfg: Config, seed: u64) -> Result<Model> {
        cfg.validate()?;
        let info = cfg.params();
        let mut rng = SplitMix::new(seed ^ 0x6f6e_656d_6f64_656c);
        let mut params = Vec::with_capacity(info.len());
        let mut last_fan = 1;
        for p in &info {
            let fan = match p.kind {
                Kind::ConvWeight | Kind::ClassifierWeight => p.real_cols,
                Kind::LstmWih | Kind::LstmWhh | Kind::LstmBias => cfg.hidden,
                Kind::ConvBias | Kind::ClassifierBias => last_fan,
            };
            if matches!(p.kind, Kind::ConvWeight | Kind::ClassifierWeight) {
                last_fan = p.real_cols;
            }
            let bound = 1.0 / (fan as f32).sqrt();
            let natural: Vec<f32> = (0..p.natural_numel()).map(|_| rng.uniform(bound)).collect();
            params.push(to_runtime(p, &natural));
        }
        Ok(Model { cfg, info, params })
    }

    /// A model from natural-layout tensors in parameter order.
    pub fn from_natural(cfg: Config, tensors: Vec<Vec<f32>>) -> Result<Model> {
        cfg.validate()?;
        let info = cfg.params();
        if tensors.len() != info.len() {
            return Err(Error::Value(format!(
                "expected {} tensors, got {}",
                info.len(),
                tensors.len()
            )));
        }
        let mut params = Vec::with_capacity(info.len());
        for (p, t) in info.iter().zip(tensors) {
            if t.len() != p.natural_numel() {
                return Err(Error::Value(format!(
                    "{}: expected {} values, got {}",
                    p.name,
                    p.natural_numel(),
                    t.len()
                )));
            }
            params.push(to_runtime(p, &t));
        }
        Ok(Model { cfg, info, params })
    }

    /// The transposed weights the backward pass reads, into the buffers of
    /// an earlier step: a trainer keeps one `Prepared`, so the transposes
    /// (≈ 3.7 MB for the default model) are not allocated and returned to
    /// the system (and faulted in again) every step. Every element is
    /// overwritten.
    pub fn prepare_into(&self, token: Token, p: &mut Prepared) {
        let cfg = &self.cfg;
        let h = cfg.hidden;
        p.conv_t.resize_with(cfg.blocks(), Default::default);
        for (b, g) in cfg.geoms(cfg.min_width()).iter().enumerate() {
            let t = &mut p.conv_t[b];
            if g.c % 16 == 0 {
                super::reuse(t, g.kp() * g.o, 0.0);
                transpose(token, &self.params[cfg.conv_index(b)], g.o, g.kp(), t);
            } else {
                t.clear();
            }
        }
        p.w_hh_t.resize_with(cfg.layers, Default::default);
        p.w_cat_t.resize_with(cfg.layers, Default::default);
        for l in 0..cfg.layers {
            let inp = cfg.lstm_input(l);
            let cat = &mut p.w_cat_t[l];
            super::reuse(cat, inp * 8 * h, 0.0);
            let pair = &mut p.w_hh_t[l];
            pair.resize_with(2, Default::default);
            for (d, t) in pair.iter_mut().enumerate() {
                let base = cfg.lstm_index(l, d);
                super::reuse(t, h * 4 * h, 0.0);
                transpose(token, &self.params[base + 1], 4 * h, h, t);
                // W_ih [4H][In] transposed, then its rows placed side by side.
                let wt = &mut p.scratch;
                super::reuse(wt, inp * 4 * h, 0.0);
                transpose(token, &self.params[base], 4 * h, inp, wt);
                for (i, row) in wt.chunks_exact(4 * h).enumerate() {
                    cat[i * 8 * h + d * 4 * h..][..4 * h].copy_from_slice(row);
                }
            }
        }
    }

    fn dir_params(&self, l: usize, d: usize) -> DirParams<'_> {
        let base = self.cfg.lstm_index(l, d);
        DirParams {
            w_ih: &self.params[base],
            w_hh: &self.params[base + 1],
            b: &self.params[base + 2],
        }
    }

    /// Forward pass of one line (`image` is `[height][width]`), keeping what
    /// the backward pass needs in `st`. The logits are `st.logits`
    /// (`[T][classes]`). The trainer runs the same parts over a batch.
    pub fn forward(&self, token: Token, image: &[f32], width: usize, st: &mut LineState) {
        self.forward_convs(token, image, width, None, st);
        let mut rec = Default::default();
        for l in 0..self.cfg.layers {
            self.forward_lstm(token, l, None, &mut [&mut *st], &mut rec);
        }
        self.forward_head(token, st);
    }

    /// The convolution blocks of one line and the collapse: `st.feat`
    /// (`[T][features]`) and `st.t`. `prep`, the step's transposed
    /// weights when the caller has made them, serves the blocks that
    /// read their windows in place (`conv::forward`).
    pub fn forward_convs(
        &self,
        token: Token,
        image: &[f32],
        width: usize,
        prep: Option<&Prepared>,
        st: &mut LineState,
    ) {
        let cfg = &self.cfg;
        let geoms = cfg.geoms(width);
        st.width = width;
        st.image.clear();
        st.image.extend_from_slice(image);
        st.blocks.resize_with(cfg.blocks(), Default::default);
        for (b, g) in geoms.iter().enumerate() {
            let (before, rest) = st.blocks.split_at_mut(b);
            let x: &[f32] = if b == 0 { &st.image } else { &before[b - 1].y };
            let bs = &mut rest[0];
            conv::forward(
                token,
                g,
                x,
                &self.params[cfg.conv_index(b)],
                prep.map(|p| &p.conv_t[b][..]).filter(|t| !t.is_empty()),
                &self.params[cfg.conv_index(b) + 1],
                &mut bs.col,
                &mut st.conv,
                &mut bs.y,
                &mut bs.win,
            );
        }
        // Collapse: time step t reads column t, feature h·C + c.
        let last = geoms[geoms.len() - 1];
        let (hf, t_len, c) = (last.out_h(), last.out_w(), last.o);
        let f = hf * c;
        st.t = t_len;
        super::reuse(&mut st.feat, t_len * f, 0.0);
        let y = &st.blocks[cfg.blocks() - 1].y;
        for hh in 0..hf {
            for t in 0..t_len {
                st.feat[t * f + hh * c..][..c].copy_from_slice(&y[(hh * t_len + t) * c..][..c]);
            }
        }
    }

    /// LSTM layer `l` of several lines at once (their convolutions and
    /// layers below done): per direction, each line's input projection,
    /// then one recurrence over all of them (lstm::recur_forward); the two
    /// directions on two threads when the pool has them. `out` of each
    /// line is `[T][2H]`, forward then reverse. `prep`, the step's
    /// transposed weights when the caller has made them, gives the
    /// recurrence W_hh transposed for the steps it serves faster that way.
    pub fn forward_lstm(
        &self,
        token: Token,
        l: usize,
        prep: Option<&Prepared>,
        lines: &mut [&mut LineState],
        rec: &mut [RecScratch; 2],
    ) {
        let cfg = &self.cfg;
        let (h, inp) = (cfg.hidden, cfg.lstm_input(l));
        let t_lens: Vec<usize> = lines.iter().map(|st| st.t).collect();
        let mut dirs: [Vec<(&[f32], &mut DirState)>; 2] = Default::default();
        for st in lines.iter_mut() {
            let LineState { feat, layers, .. } = &mut **st;
            layers.resize_with(cfg.layers, Default::default);
            let (before, rest) = layers.split_at_mut(l);
            let x: &[f32] = if l == 0 { feat } else { &before[l - 1].out };
            let [f, r] = &mut rest[0].dirs;
            dirs[0].push((x, f));
            dirs[1].push((x, r));
        }
        let run = |d: usize, parts: Vec<(&[f32], &mut DirState)>, s: &mut RecScratch| {
            let p = self.dir_params(l, d);
            let mut states = Vec::with_capacity(parts.len());
            for ((x, st), &t_len) in parts.into_iter().zip(&t_lens) {
                lstm::input_projection(token, t_len, inp, h, x, p, st);
                states.push(st);
            }
            let w_hh_t = prep.map(|p| &p.w_hh_t[l][d][..]);
            lstm::recur_forward(token, h, d == 1, p.w_hh, w_hh_t, &mut states, s);
        };
        let [fwd, rev] = dirs;
        let [s0, s1] = rec;
        crate::dispatch::join(|| run(0, fwd, s0), || run(1, rev, s1));
        for st in lines.iter_mut() {
            let t_len = st.t;
            let ls = &mut st.layers[l];
            super::reuse(&mut ls.out, t_len * 2 * h, 0.0);
            for (d, ds) in ls.dirs.iter().enumerate() {
                for (dst, src) in ls.out.chunks_exact_mut(2 * h).zip(ds.h.chunks_exact(h)) {
                    dst[d * h..][..h].copy_from_slice(src);
                }
            }
        }
    }

    /// The classifier over the top LSTM layer's output: `st.logits`.
    pub fn forward_head(&self, token: Token, st: &mut LineState) {
        let cfg = &self.cfg;
        let ci = cfg.classifier_index();
        linear::forward(
            token,
            st.t,
            2 * cfg.hidden,
            cfg.classes,
            &st.layers[cfg.layers - 1].out,
            &self.params[ci],
            &self.params[ci + 1],
            &mut st.logits,
        );
    }

    /// Backward pass of one line from the logit gradient `st.dlogits`,
    /// writing every parameter gradient (run-time layout) into `grads`.
    /// The trainer runs the same parts over a batch.
    pub fn backward(
        &self,
        token: Token,
        prep: &Prepared,
        st: &mut LineState,
        grads: &mut [Vec<f32>],
    ) {
        self.backward_head(token, st, grads);
        let mut rec = Default::default();
        for l in (0..self.cfg.layers).rev() {
            self.backward_recurrence(token, l, prep, &mut [&mut *st], &mut rec);
            self.backward_lstm_grads(token, l, prep, st, grads);
        }
        self.backward_convs(token, st, grads);
    }

    /// The classifier's gradients from `st.dlogits`; `st.dx` becomes the
    /// gradient of the top LSTM layer's output.
    pub fn backward_head(&self, token: Token, st: &mut LineState, grads: &mut [Vec<f32>]) {
        let cfg = &self.cfg;
        let (h, t_len, ci) = (cfg.hidden, st.t, cfg.classifier_index());
        super::reuse(&mut st.dx, t_len * 2 * h, 0.0);
        let (gw, gb) = grads[ci..].split_at_mut(1);
        linear::backward(
            token,
            t_len,
            2 * h,
            cfg.classes,
            &st.layers[cfg.layers - 1].out,
            &st.dlogits,
            &self.params[ci],
            &mut gw[0],
            &mut gb[0],
            Some(&mut st.dx),
        );
    }

    /// The backward recurrences of LSTM layer `l` of several lines at once
    /// from each line's `st.dx` (the gradient of the layer's output): each
    /// direction's `dz` (lstm::recur_backward), the two directions on two
    /// threads when the pool has them.
    pub fn backward_recurrence(
        &self,
        token: Token,
        l: usize,
        prep: &Prepared,
        lines: &mut [&mut LineState],
        rec: &mut [RecScratch; 2],
    ) {
        let h = self.cfg.hidden;
        let mut douts: Vec<&[f32]> = Vec::with_capacity(lines.len());
        let mut dirs: [Vec<&mut DirState>; 2] = Default::default();
        for st in lines.iter_mut() {
            let LineState { dx, layers, .. } = &mut **st;
            let [f, r] = &mut layers[l].dirs;
            douts.push(dx);
            dirs[0].push(f);
            dirs[1].push(r);
        }
        let [mut fwd, mut rev] = dirs;
        let [s0, s1] = rec;
        let douts = &douts;
        crate::dispatch::join(
            || {
                lstm::recur_backward(
                    token,
                    h,
                    false,
                    &prep.w_hh_t[l][0],
                    douts,
                    2 * h,
                    0,
                    &mut fwd,
                    s0,
                )
            },
            || {
                lstm::recur_backward(
                    token,
                    h,
                    true,
                    &prep.w_hh_t[l][1],
                    douts,
                    2 * h,
                    h,
                    &mut rev,
                    s1,
                )
            },
        );
    }

    /// LSTM layer `l`'s weight gradients of one line after its backward
    /// recurrence; `st.dx` becomes the gradient of the layer's input.
    pub fn backward_lstm_grads(
        &self,
        token: Token,
        l: usize,
        prep: &Prepared,
        st: &mut LineState,
        grads: &mut [Vec<f32>],
    ) {
        let cfg = &self.cfg;
        let (h, inp) = (cfg.hidden, cfg.lstm_input(l));
        let x = st.lstm_input(l);
        for (d, ds) in st.layers[l].dirs.iter().enumerate() {
            let base = cfg.lstm_index(l, d);
            let (a, rest) = grads[base..].split_at_mut(1);
            let (bq, cq) = rest.split_at_mut(1);
            lstm::weight_grads(token, inp, h, x, ds, &mut a[0], &mut bq[0], &mut cq[0]);
        }
        self.backward_lstm_input(token, l, prep, st);
    }

    /// LSTM layer `l`'s input gradient of one line after its backward
    /// recurrence: `st.dx`.
    pub fn backward_lstm_input(&self, token: Token, l: usize, prep: &Prepared, st: &mut LineState) {
        let (h, inp) = (self.cfg.hidden, self.cfg.lstm_input(l));
        let LineState { layers, dx, dz, .. } = st;
        let dirs = &layers[l].dirs;
        super::reuse(dx, dirs[0].t * inp, 0.0);
        lstm::input_grad(token, inp, h, dirs, &prep.w_cat_t[l], dz, dx);
    }

    /// LSTM layer `l`'s weight gradients of a batch (`lines` in batch
    /// order, after their backward recurrence), summed over the lines in
    /// their order into the batch gradient `grads` (parameter order): the
    /// same bits as each line's [`Model::backward_lstm_grads`] chained
    /// afterwards, without a per-line copy of the weights' size
    /// (`lstm::chained_weight_grads`). The threads take blocks of
    /// [`CHAINED_ROWS`] gate rows of either direction.
    pub fn chained_lstm_weight_grads(
        &self,
        token: Token,
        l: usize,
        lines: &[&LineState],
        grads: &mut [Vec<f32>],
    ) {
        let cfg = &self.cfg;
        let (h, inp) = (cfg.hidden, cfg.lstm_input(l));
        let g4 = 4 * h;
        let blocks = g4.div_ceil(CHAINED_ROWS);
        let per_dir: [Vec<(&[f32], &DirState)>; 2] = core::array::from_fn(|d| {
            lines
                .iter()
                .map(|st| (st.lstm_input(l), &st.layers[l].dirs[d]))
                .collect()
        });
        let outs: [[Ptr<*mut f32>; 3]; 2] = core::array::from_fn(|d| {
            let base = cfg.lstm_index(l, d);
            core::array::from_fn(|k| {
                let g = &mut grads[base + k];
                assert_eq!(
                    g.len(),
                    [g4 * inp, g4 * h, g4][k],
                    "chained_lstm_weight_grads: gradient sizes"
                );
                Ptr::new(g.as_mut_ptr(), g.len())
            })
        });
        crate::dispatch::par_chunks(2 * blocks, |c| {
            let (d, blk) = (c / blocks, c % blocks);
            let gates = blk * CHAINED_ROWS..((blk + 1) * CHAINED_ROWS).min(g4);
            let [wi, wh, b] = outs[d];
            let m = gates.len();
            // SAFETY: the chunks write disjoint row blocks of the tensors,
            // which `grads` borrows mutably for this call; each block lies
            // inside its tensor (sizes asserted above).
            let (dw_ih, dw_hh, db) = unsafe {
                (
                    wi.slice_mut(gates.start * inp, m * inp),
                    wh.slice_mut(gates.start * h, m * h),
                    b.slice_mut(gates.start, m),
                )
            };
            lstm::chained_weight_grads(token, inp, h, gates, &per_dir[d], dw_ih, dw_hh, db);
        });
    }

    /// The convolution blocks' gradients of one line from `st.dx` (the
    /// gradient of the collapsed features).
    pub fn backward_convs(&self, token: Token, st: &mut LineState, grads: &mut [Vec<f32>]) {
        let cfg = &self.cfg;
        let t_len = st.t;
        // Undo the collapse: dx [T][hf·C] → dy of the last block [hf][T][C].
        let geoms = cfg.geoms(st.width);
        let nb = cfg.blocks();
        let last = geoms[nb - 1];
        let (hf, c) = (last.out_h(), last.o);
        let f = hf * c;
        super::reuse(&mut st.dy, hf * t_len * c, 0.0);
        for hh in 0..hf {
            for t in 0..t_len {
                st.dy[(hh * t_len + t) * c..][..c].copy_from_slice(&st.dx[t * f + hh * c..][..c]);
            }
        }
        for b in (0..nb).rev() {
            let g = &geoms[b];
            let (before, rest) = st.blocks.split_at_mut(b);
            let x: &[f32] = if b == 0 { &st.image } else { &before[b - 1].y };
            let BlockState { win, back, .. } = &mut rest[0];
            let wi = cfg.conv_index(b);
            let (gw, gb) = grads[wi..].split_at_mut(1);
            if b > 0 {
                super::reuse(&mut st.dx, g.h * g.w * g.c, 0.0);
            }
            conv::backward(
                token,
                g,
                x,
                win,
                &st.dy,
                &self.params[wi],
                &mut gw[0],
                &mut gb[0],
                if b > 0 { Some(&mut st.dx) } else { None },
                back,
            );
            if b > 0 {
                std::mem::swap(&mut st.dx, &mut st.dy);
            }
        }
    }
}

/// Transposed weights for one step's backward pass (read-only, shared by
/// every line; filled by [`Model::prepare_into`]).
#[derive(Default)]
pub struct Prepared {
    /// Per block whose channels fill whole 16-element steps, its weight
    /// transposed (`[KP][O]`, for `conv::forward`); empty otherwise.
    pub conv_t: Vec<Vec<f32>>,
    pub w_hh_t: Vec<Vec<Vec<f32>>>,
    pub w_cat_t: Vec<Vec<f32>>,
    /// Workspace of `prepare_into` (one W_ih transposed).
    scratch: Vec<f32>,
}

#[derive(Default)]
pub struct BlockState {
    /// Pooled output `[H/ph][W/pw][O]`.
    pub y: Vec<f32>,
    /// Winner of each pooled element, or conv::NONE.
    pub win: Vec<u32>,
    /// This block's window workspace and backward workspace. Kept per
    /// block (not shared by the blocks of a line) so that no buffer changes
    /// size from one block to the next and none is regrown, zero-filled,
    /// every step.
    col: conv::Windows,
    back: conv::BackScratch,
}

#[derive(Default)]
pub struct LayerState {
    /// `[T][2H]`: forward then reverse hidden states.
    pub out: Vec<f32>,
    pub dirs: [DirState; 2],
}

/// Everything one line's forward and backward passes keep or reuse.
#[derive(Default)]
pub struct LineState {
    pub width: usize,
    pub t: usize,
    pub image: Vec<f32>,
    pub blocks: Vec<BlockState>,
    pub feat: Vec<f32>,
    pub layers: Vec<LayerState>,
    pub logits: Vec<f32>,
    pub dlogits: Vec<f32>,
    conv: Vec<f32>,
    dx: Vec<f32>,
    dy: Vec<f32>,
    /// Both directions' dz side by side (`[T][8H]`, lstm::input_grad).
    dz: Vec<f32>,
}

impl LineState {
    /// The input of LSTM layer `l`: the collapsed features for the first,
    /// the layer below's output for the others.
    fn lstm_input(&self, l: usize) -> &[f32] {
        if l == 0 {
            &self.feat
        } else {
            &self.layers[l - 1].out
        }
    }
}

/// Gate rows per thread chunk of [`Model::chained_lstm_weight_grads`] (a
/// constant, so the chunking is a function of the shape): sixteen of
/// `gemm_nn`'s row tiles. A block of the largest gradient of the default
/// model (96 rows of 384) is 144 KiB, in L2 while every line's product is
/// added to it. Measured (`recognizer_profile`, one and two threads):
/// 96 and 192 rows level, 48 about 1 % slower.
pub const CHAINED_ROWS: usize = 96;
