//! crnn-v0's configuration and its parameters: the trainer's parameter order
//! (docs/recognizer.md, "The arithmetic contract"),
//! each tensor's run-time (padded) and natural layouts.

use super::conv::Geom;
use crate::error::{Error, Result};

/// The architecture (docs/recognizer.md, "Architecture (crnn-v0)").
/// `classes` counts the blank (class 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub height: usize,
    pub channels: Vec<usize>,
    /// (height factor, width factor) of each block's max pooling.
    pub pools: Vec<(usize, usize)>,
    pub hidden: usize,
    pub layers: usize,
    pub classes: usize,
}

/// What a parameter is, for decay flags and tolerances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    ConvWeight,
    ConvBias,
    LstmWih,
    LstmWhh,
    LstmBias,
    ClassifierWeight,
    ClassifierBias,
}

impl Kind {
    pub fn is_bias(self) -> bool {
        matches!(self, Kind::ConvBias | Kind::LstmBias | Kind::ClassifierBias)
    }
}

/// One parameter tensor: its container name and natural shape, and its
/// run-time layout `rows × cols` (convolution rows padded to 16).
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub shape: Vec<usize>,
    pub rows: usize,
    pub cols: usize,
    /// Real (unpadded) columns: `cols` except for convolution weights.
    pub real_cols: usize,
    pub kind: Kind,
}

impl ParamInfo {
    pub fn numel(&self) -> usize {
        self.rows * self.cols
    }
    pub fn natural_numel(&self) -> usize {
        self.rows * self.real_cols
    }
}

impl Config {
    pub fn validate(&self) -> Result<()> {
        if self.height == 0 {
            return Err(Error::Value("config: height must be at least 1".into()));
        }
        if self.channels.is_empty() {
            return Err(Error::Value(
                "config: at least one convolution block is needed".into(),
            ));
        }
        if self.channels.len() != self.pools.len() {
            return Err(Error::Value(format!(
                "config: {} channel counts but {} pools; give one pool per block",
                self.channels.len(),
                self.pools.len()
            )));
        }
        if self.channels.iter().any(|&c| c == 0) {
            return Err(Error::Value(
                "config: channel counts must be at least 1".into(),
            ));
        }
        if self.pools.iter().any(|&(a, b)| a == 0 || b == 0) {
            return Err(Error::Value(
                "config: pool factors must be at least 1".into(),
            ));
        }
        if self.hidden == 0 || self.layers == 0 {
            return Err(Error::Value(
                "config: hidden and layers must be at least 1".into(),
            ));
        }
        if self.classes < 2 {
            return Err(Error::Value(
                "config: the charset must hold at least one character".into(),
            ));
        }
        if self
            .pools
            .iter()
            .try_fold(1usize, |a, p| a.checked_mul(p.1))
            .is_none()
        {
            return Err(Error::Value(
                "config: the pool widths multiply beyond the largest line width".into(),
            ));
        }
        if self.final_height() == 0 {
            return Err(Error::Value(format!(
                "config: height {} pools down to 0 rows",
                self.height
            )));
        }
        if self.parameter_bytes().is_none() {
            return Err(Error::Value(format!(
                "config: channels {:?}, hidden {}, layers {} and {} classes give more parameter bytes than \
                 the address space holds",
                self.channels, self.hidden, self.layers, self.classes
            )));
        }
        Ok(())
    }

    /// The bytes of every run-time parameter (rows padded as [`Self::params`]
    /// pads them), in checked arithmetic, or None past `isize::MAX`: a
    /// config read from a file can then never wrap a size.
    fn parameter_bytes(&self) -> Option<usize> {
        let bytes = self.parameter_elements(true)?.checked_mul(4)?;
        (bytes <= isize::MAX as usize).then_some(bytes)
    }

    /// The parameters' element count, natural (`padded` false: as a file
    /// stores them) or run-time (convolution rows padded to 16), in checked
    /// arithmetic; None when it overflows.
    pub fn parameter_elements(&self, padded: bool) -> Option<usize> {
        let mut total = 0usize;
        let mut c = 1usize;
        for &o in &self.channels {
            let k = c.checked_mul(9)?;
            let row = if padded {
                k.div_ceil(16).checked_mul(16)?
            } else {
                k
            };
            total = total.checked_add(o.checked_mul(row)?.checked_add(o)?)?;
            c = o;
        }
        let h4 = self.hidden.checked_mul(4)?;
        let features = (self.pools.iter().fold(self.height, |h, p| h / p.0)).checked_mul(c)?;
        // Both directions of a layer reading `inp` features (no loop over
        // the layers: a file's `layers` may be any number).
        let layer = |inp: usize| -> Option<usize> {
            h4.checked_mul(inp)?
                .checked_add(h4.checked_mul(self.hidden)?)?
                .checked_add(h4)?
                .checked_mul(2)
        };
        let later = layer(self.hidden.checked_mul(2)?)?.checked_mul(self.layers - 1)?;
        total = total.checked_add(layer(features)?)?.checked_add(later)?;
        let cls = self
            .classes
            .checked_mul(self.hidden.checked_mul(2)?.checked_add(1)?)?;
        total.checked_add(cls)
    }

    pub fn blocks(&self) -> usize {
        self.channels.len()
    }

    /// Height after every pooling.
    pub fn final_height(&self) -> usize {
        self.pools.iter().fold(self.height, |h, p| h / p.0)
    }

    /// Time steps of a line `width` pixels wide: each pool divides the width
    /// (rounding down), the same as `width / min_width()` rounding down
    /// (⌊⌊w/a⌋/b⌋ = ⌊w/(ab)⌋ for positive integers).
    pub fn time_steps(&self, width: usize) -> usize {
        self.pools.iter().fold(width, |w, p| w / p.1)
    }

    /// The narrowest image that leaves one time step.
    pub fn min_width(&self) -> usize {
        self.pools.iter().map(|p| p.1).product()
    }

    pub fn features(&self) -> usize {
        self.final_height() * self.channels[self.blocks() - 1]
    }

    /// Geometry of every block for a line `width` pixels wide.
    pub fn geoms(&self, width: usize) -> Vec<Geom> {
        let (mut h, mut w, mut c) = (self.height, width, 1);
        let mut out = Vec::new();
        for (b, &o) in self.channels.iter().enumerate() {
            let (ph, pw) = self.pools[b];
            let g = Geom { h, w, c, o, ph, pw };
            out.push(g);
            h = g.out_h();
            w = g.out_w();
            c = o;
        }
        out
    }

    pub fn lstm_input(&self, layer: usize) -> usize {
        if layer == 0 {
            self.features()
        } else {
            2 * self.hidden
        }
    }

    /// Index of convolution block b's weight (bias is +1).
    pub fn conv_index(&self, b: usize) -> usize {
        2 * b
    }
    /// Index of LSTM layer l, direction d (0 forward, 1 reverse): W_ih; W_hh
    /// is +1, b is +2.
    pub fn lstm_index(&self, layer: usize, dir: usize) -> usize {
        2 * self.blocks() + (layer * 2 + dir) * 3
    }
    /// Index of the classifier weight (bias is +1).
    pub fn classifier_index(&self) -> usize {
        2 * self.blocks() + 6 * self.layers
    }
    /// The indices of every LSTM parameter (each layer's and direction's
    /// W_ih, W_hh and b), which lie between the convolutions' and the
    /// classifier's.
    pub fn lstm_params(&self) -> std::ops::Range<usize> {
        self.lstm_index(0, 0)..self.classifier_index()
    }

    /// Every parameter, in the trainer's parameter order.
    pub fn params(&self) -> Vec<ParamInfo> {
        let mut v = Vec::new();
        let mut c = 1;
        for (b, &o) in self.channels.iter().enumerate() {
            let g = Geom {
                h: 1,
                w: 1,
                c,
                o,
                ph: 1,
                pw: 1,
            };
            v.push(ParamInfo {
                name: format!("conv{}.weight", b + 1),
                shape: vec![o, 3, 3, c],
                rows: o,
                cols: g.kp(),
                real_cols: g.k(),
                kind: Kind::ConvWeight,
            });
            v.push(ParamInfo {
                name: format!("conv{}.bias", b + 1),
                shape: vec![o],
                rows: 1,
                cols: o,
                real_cols: o,
                kind: Kind::ConvBias,
            });
            c = o;
        }
        let h = self.hidden;
        for l in 0..self.layers {
            let inp = self.lstm_input(l);
            for d in ["fwd", "rev"] {
                let base = format!("lstm{}.{d}", l + 1);
                let mut push =
                    |suffix: &str, rows: usize, cols: usize, kind: Kind, shape: Vec<usize>| {
                        v.push(ParamInfo {
                            name: format!("{base}.{suffix}"),
                            shape,
                            rows,
                            cols,
                            real_cols: cols,
                            kind,
                        })
                    };
                push("w_ih", 4 * h, inp, Kind::LstmWih, vec![4 * h, inp]);
                push("w_hh", 4 * h, h, Kind::LstmWhh, vec![4 * h, h]);
                push("b", 1, 4 * h, Kind::LstmBias, vec![4 * h]);
            }
        }
        let k = self.classes;
        v.push(ParamInfo {
            name: "classifier.weight".into(),
            shape: vec![k, 2 * h],
            rows: k,
            cols: 2 * h,
            real_cols: 2 * h,
            kind: Kind::ClassifierWeight,
        });
        v.push(ParamInfo {
            name: "classifier.bias".into(),
            shape: vec![k],
            rows: 1,
            cols: k,
            real_cols: k,
            kind: Kind::ClassifierBias,
        });
        v
    }
}

/// Run-time layout from natural layout (pads convolution rows with zeros).
pub fn to_runtime(info: &ParamInfo, natural: &[f32]) -> Vec<f32> {
    assert_eq!(natural.len(), info.natural_numel());
    if info.cols == info.real_cols {
        return natural.to_vec();
    }
    let mut out = crate::storage::scratch_vec(info.numel(), 0f32);
    for r in 0..info.rows {
        out[r * info.cols..][..info.real_cols]
            .copy_from_slice(&natural[r * info.real_cols..][..info.real_cols]);
    }
    out
}

/// Natural layout from run-time layout (drops the padding).
pub fn to_natural(info: &ParamInfo, rt: &[f32]) -> Vec<f32> {
    if info.cols == info.real_cols {
        return rt.to_vec();
    }
    let mut out = Vec::with_capacity(info.natural_numel());
    for r in 0..info.rows {
        out.extend_from_slice(&rt[r * info.cols..][..info.real_cols]);
    }
    out
}
