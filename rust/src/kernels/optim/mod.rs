//! Optimizer kernels: the AdamW / Adam step, the SGD step, and the helpers of
//! gradient clipping (global norm in double precision, scaling, clamping).
//!
//! One AdamW kernel serves both the engine's `onemodel.optim.AdamW` and the
//! crnn-v0 recognizer trainer. Its arithmetic is the recognizer
//! specification's ("scalars in double rounded once; every element operation
//! rounded separately, in PyTorch's single-tensor order"):
//!
//! ```text
//! c1 = 1 − β1ᵗ, c2 = 1 − β2ᵗ        (β^t a running product of doubles)
//! stepSize = f32(lr / c1)   sqrtC2 = f32(sqrt(c2))   decay = f32(1 − lr·wd)
//! p = p * decay
//! m = m + (1 − β1) * (g − m)
//! v = v * β2 + (1 − β2) * (g * g)
//! p = p − stepSize * (m / (sqrt(v) / sqrtC2 + eps))
//! ```
//!
//! with `1 − β1`, `β2`, `1 − β2` and `eps` also computed in double and rounded
//! once. Every step of every element is one IEEE binary32 operation (Rust
//! never contracts `a * b + c` into an fma), so the result does not depend on
//! the instruction set, the thread count or the OS.
//!
//! The tensors of one call are laid end to end and cut every [`CHUNK`]
//! elements (small tensors share a chunk, large ones span several); the
//! chunks go to the library's thread pool together. The work is
//! element-wise, so neither the cut nor the order the chunks run in can
//! change a bit. The loops are written once, as plain
//! scalar Rust, and compiled inside each kernel path's `#[target_feature]`
//! trampoline (through [`crate::simd::run_on`]), where the compiler
//! vectorises them for that instruction set without changing any operation.
//!
//! A NaN written by these kernels is always the canonical quiet NaN
//! (`0x7FC00000`), so NaN payloads cannot differ between paths either.
//!
//! One module per job: [`adam`] (Adam / AdamW), [`sgd`], [`clip`] (global
//! norms, scaling and clamping); this one holds what they share, the cut of
//! a call's tensors into chunks.

mod adam;
mod clip;
mod sgd;
#[cfg(test)]
mod tests;

pub use adam::*;
pub use clip::*;
pub use sgd::*;

use super::canonical;
use crate::dispatch::par_chunks_sized;

/// Elements per unit of work: a constant, so the chunking depends on the
/// tensor sizes alone (and, the work being element-wise, not even on them).
pub const CHUNK: usize = 8192;

/// Every NaN these kernels write is the canonical one (the bit test of
/// [`canonical`]).
#[inline(always)]
fn canon(x: f32) -> f32 {
    canonical(x, true)
}
unsafe impl Sync for AdamSlot {}

/// The work of one call: the tensors' elements laid end to end and cut
/// every CHUNK elements. Each chunk is a list of pieces `(slot, first, end)`,
/// so small tensors share a chunk and large ones span several. The cut
/// depends on the sizes alone; the work being element-wise, not even the
/// bits depend on it.
struct Plan {
    pieces: Vec<(usize, usize, usize)>,
    /// Chunk `c` is `pieces[starts[c]..starts[c + 1]]`.
    starts: Vec<usize>,
}

impl Plan {
    fn new(lens: impl Iterator<Item = usize>) -> Plan {
        let mut pieces = Vec::new();
        let mut starts = vec![0];
        let mut room = CHUNK;
        for (s, n) in lens.enumerate() {
            let mut a = 0;
            while a < n {
                let b = n.min(a + room);
                pieces.push((s, a, b));
                room -= b - a;
                a = b;
                if room == 0 {
                    starts.push(pieces.len());
                    room = CHUNK;
                }
            }
        }
        if *starts.last().unwrap() != pieces.len() {
            starts.push(pieces.len());
        }
        Plan { pieces, starts }
    }

    fn chunks(&self) -> usize {
        self.starts.len() - 1
    }

    /// Run `body(slot, first, end)` for every piece, chunks on the pool.
    fn run(&self, body: impl Fn(usize, usize, usize) + Sync + Send) {
        let work = self.pieces.iter().map(|&(_, a, b)| b - a).sum();
        par_chunks_sized(self.chunks(), work, |c| {
            for &(s, a, b) in &self.pieces[self.starts[c]..self.starts[c + 1]] {
                body(s, a, b);
            }
        });
    }
}

fn check_len(op: &str, what: &str, n: usize, got: usize) {
    assert!(
        got == n,
        "{op}: {what}: length {got} differs from the parameter's {n}"
    );
}
