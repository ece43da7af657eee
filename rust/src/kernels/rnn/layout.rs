//! The sizes of one recurrent layer call and the shape of every buffer it
//! reads and writes: the one description the kernels, the bindings and the
//! Python operator (which allocates the buffers from it) share.
//!
//! A call runs one direction or two over the same input x [T, B, I]; its
//! output packs what the layer returns, [T + R, B, D·H] with direction k in
//! columns k·H..(k+1)·H (R = 1 for an LSTM: row T holds the final cells).
//! Forward saves for backward, per direction, the activated gates [T, B,
//! G·H] and then the cell's [T, B, H] states (see [`Cell::saved_states`]).

use super::Dims;
use crate::error::{Error, Result};

/// The recurrent cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    Lstm,
    Gru,
}

impl Cell {
    pub fn parse(name: &str) -> Result<Cell> {
        match name {
            "lstm" => Ok(Cell::Lstm),
            "gru" => Ok(Cell::Gru),
            other => Err(Error::Value(format!(
                "recurrent layer: unknown cell {other:?} (lstm or gru)"
            ))),
        }
    }

    /// The operator's name in messages.
    pub fn op(self) -> &'static str {
        match self {
            Cell::Lstm => "lstm_layer",
            Cell::Gru => "gru_layer",
        }
    }

    /// Gates per step: i, f, g, o or r, z, n.
    pub fn gates(self) -> usize {
        match self {
            Cell::Lstm => 4,
            Cell::Gru => 3,
        }
    }

    /// The [T, B, H] states saved after the gates, in order: an LSTM's
    /// cells, tanh(cells) and the hidden state each step started from; a
    /// GRU's W_hn·h + b_hn and the hidden state each step started from.
    pub fn saved_states(self) -> &'static [&'static str] {
        match self {
            Cell::Lstm => &["cells", "tanh_cells", "h_prev"],
            Cell::Gru => &["hp_n", "h_prev"],
        }
    }

    /// Rows of the output after the T steps (the LSTM's final cells).
    pub fn extra_rows(self) -> usize {
        match self {
            Cell::Lstm => 1,
            Cell::Gru => 0,
        }
    }

    /// Whether the cell has a cell state (c0, dc0).
    pub fn has_cell(self) -> bool {
        self == Cell::Lstm
    }
}

/// One call: the cell, the sizes and the number of directions.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub cell: Cell,
    pub dims: Dims,
    pub directions: usize,
}

/// The largest element count of one buffer: its bytes must fit an isize.
const MAX_ELEMENTS: usize = isize::MAX as usize / 4;

/// A buffer of the call, for [`Layout::shape`] and [`Layout::expect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    Input,
    WeightIh,
    WeightHh,
    Bias,
    /// h0, c0 and their gradients.
    State,
    Output,
    /// The k-th saved buffer: 0 the gates, then [`Cell::saved_states`].
    Saved(usize),
}

impl Layout {
    /// Multiply-adds of the forward over every direction: G·H outputs per
    /// step and line, each a sum over I + H. What the thread threshold of
    /// the two directions compares (`dispatch::join_macs`).
    pub fn macs(&self) -> usize {
        let Dims { t, b, i, h } = self.dims;
        [self.directions, t, b, self.cell.gates() * h, i + h]
            .iter()
            .fold(1usize, |acc, &f| acc.saturating_mul(f))
    }

    /// The call over x [T, B, I] with W_hh [G·H, H] and `directions`
    /// directions (1 or 2). Refuses a size whose buffers could not exist.
    pub fn new(cell: Cell, x: &[usize], w_hh: &[usize], directions: usize) -> Result<Layout> {
        let op = cell.op();
        let gates = cell.gates();
        if directions != 1 && directions != 2 {
            return Err(Error::Value(format!(
                "{op}: expected one or two directions, got {directions}"
            )));
        }
        let ([t, b, i], [gh, h]) = (x, w_hh) else {
            return Err(Error::Value(format!(
                "{op}: expected input [T, B, input_size] and weight_hh [{gates}·hidden, hidden], got shapes {x:?} and {w_hh:?}"
            )));
        };
        if h.checked_mul(gates) != Some(*gh) {
            return Err(Error::Value(format!(
                "{op}: weight_hh must be [{gates}·hidden, hidden], got shape {w_hh:?}"
            )));
        }
        let layout = Layout {
            cell,
            dims: Dims {
                t: *t,
                b: *b,
                i: *i,
                h: *h,
            },
            directions,
        };
        // Every buffer's element count, checked: the largest are the
        // output, the saved gates and the weights.
        for what in [
            Buffer::Input,
            Buffer::WeightIh,
            Buffer::WeightHh,
            Buffer::Output,
            Buffer::Saved(0),
        ] {
            let numel = layout
                .shape(what)
                .and_then(|s| s.iter().try_fold(1usize, |a, &n| a.checked_mul(n)));
            if numel.is_none_or(|n| n > MAX_ELEMENTS) {
                return Err(Error::Value(format!(
                    "{op}: input {x:?} with hidden size {h} and {directions} direction(s) needs a {what:?} buffer larger than memory can hold"
                )));
            }
        }
        Ok(layout)
    }

    /// The shape of a buffer (None when a size overflows).
    fn shape(&self, what: Buffer) -> Option<Vec<usize>> {
        let Dims { t, b, i, h } = self.dims;
        let gh = self.cell.gates().checked_mul(h)?;
        Some(match what {
            Buffer::Input => vec![t, b, i],
            Buffer::WeightIh => vec![gh, i],
            Buffer::WeightHh => vec![gh, h],
            Buffer::Bias => vec![gh],
            Buffer::State => vec![b, h],
            Buffer::Output => vec![
                t.checked_add(self.cell.extra_rows())?,
                b,
                self.directions.checked_mul(h)?,
            ],
            Buffer::Saved(0) => vec![t, b, gh],
            Buffer::Saved(_) => vec![t, b, h],
        })
    }

    /// The shape of `what` (its sizes were checked by [`Layout::new`]).
    pub fn shape_of(&self, what: Buffer) -> Vec<usize> {
        self.shape(what).expect("Layout::new checked the sizes")
    }

    /// The shapes of one direction's saved buffers, in order.
    pub fn saved_shapes(&self) -> Vec<Vec<usize>> {
        (0..=self.cell.saved_states().len())
            .map(|k| self.shape_of(Buffer::Saved(k)))
            .collect()
    }

    /// `shape` must be the shape of `what` (`name` names it in the error).
    pub fn expect(&self, what: Buffer, name: &str, shape: &[usize]) -> Result<()> {
        let want = self.shape_of(what);
        if shape != want.as_slice() {
            return Err(Error::Value(format!(
                "{}: {name} must have shape {want:?}, got {shape:?}",
                self.cell.op()
            )));
        }
        Ok(())
    }

    /// Elements of `what`.
    pub fn len(&self, what: Buffer) -> usize {
        self.shape_of(what).iter().product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_cell() {
        let l = Layout::new(Cell::Lstm, &[5, 2, 3], &[16, 4], 2).unwrap();
        assert_eq!(l.shape_of(Buffer::Output), [6, 2, 8]);
        assert_eq!(
            l.saved_shapes(),
            [vec![5, 2, 16], vec![5, 2, 4], vec![5, 2, 4], vec![5, 2, 4]]
        );
        let g = Layout::new(Cell::Gru, &[5, 2, 3], &[12, 4], 1).unwrap();
        assert_eq!(g.shape_of(Buffer::Output), [5, 2, 4]);
        assert_eq!(g.saved_shapes().len(), 3);
        assert!(Layout::new(Cell::Gru, &[5, 2, 3], &[16, 4], 1).is_err());
        assert!(Layout::new(Cell::Lstm, &[5, 2, 3], &[16, 4], 3).is_err());
    }

    #[test]
    fn absurd_sizes_are_refused_not_wrapped() {
        let big = 1usize << 40;
        assert!(Layout::new(Cell::Lstm, &[big, big, 3], &[16, 4], 1).is_err());
        assert!(Layout::new(Cell::Lstm, &[2, 2, 3], &[usize::MAX - 3, usize::MAX / 4], 1).is_err());
        assert!(Layout::new(Cell::Gru, &[1, 1, 1], &[3 << 32, 1 << 32], 2).is_err());
    }
}
