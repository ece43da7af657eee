//! The crnn-v0 text-line recognizer trainer: a fused forward and backward
//! pass for one architecture whose every sum is a 16-lane dot product, CTC
//! in double precision, the batch gradient in line order, global-norm
//! clipping and AdamW (docs/recognizer.md, "The arithmetic contract"). The
//! same bits on every kernel path, thread count and OS.

pub mod config;
pub mod conv;
pub mod ctc;
pub mod dot16;
pub mod dot16_nn;
pub mod linear;
pub mod lstm;
pub mod model;
pub mod trainer;

pub use model::{Config, Model};

/// Size a reused buffer to `n` elements without clearing what it already
/// holds: only for buffers that the next operation overwrites completely
/// (new elements, when it grows, are `fill`). Growing past the capacity
/// asks for the new block fallibly (`storage::scratch_vec`): a refusal
/// unwinds as `ScratchRefused`, which the bindings make `MemoryError`,
/// instead of aborting the process.
#[inline]
pub(crate) fn reuse<T: Copy>(v: &mut Vec<T>, n: usize, fill: T) {
    if v.len() >= n {
        v.truncate(n);
    } else if v.capacity() >= n {
        v.resize(n, fill);
    } else {
        let mut grown = crate::storage::scratch_vec(n, fill);
        grown[..v.len()].copy_from_slice(v);
        *v = grown;
    }
}
pub use trainer::{Hyper, Line, Trainer};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod reuse_tests {
    use super::reuse;
    use crate::storage::{refuse_hook, ScratchRefused};

    #[test]
    fn growing_keeps_the_contents_and_a_refusal_is_scratch_refused() {
        let mut v = vec![1f32, 2.0];
        reuse(&mut v, 5, 0.5);
        assert_eq!(v, [1.0, 2.0, 0.5, 0.5, 0.5]);
        reuse(&mut v, 1, 9.0);
        assert_eq!(v, [1.0]);
        let refused = std::panic::catch_unwind(|| {
            let mut w = vec![0f32; 4];
            refuse_hook::with_limit(64, || reuse(&mut w, 1000, 0.0));
        });
        assert!(refused.unwrap_err().is::<ScratchRefused>());
    }
}
