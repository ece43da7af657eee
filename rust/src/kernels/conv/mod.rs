//! 2-D convolution (NCHW, contiguous operands) on the canonical GEMM.
//!
//! One description, [`Conv2d`], serves the three kernels and both
//! convolution operators: `conv2d` runs [`forward`], its backward runs
//! [`input_grad`] and [`weight_grad`]; `conv_transpose2d` is the adjoint, so
//! its forward is [`input_grad`] (with the transposed convolution's output as
//! the convolution's "input") and its backward is [`forward`] and
//! [`weight_grad`] with the roles swapped.
//!
//! Orders (the bits depend on them, never on threads or paths):
//! * forward: per batch item and group, `out = W_g · cols` with cols the
//!   im2col matrix `[(c, ky, kx), (oy, ox)]`; each output is one GEMM
//!   accumulator over k = (c, ky, kx) increasing. The bias is one IEEE add
//!   afterwards.
//! * input gradient: `dcols = W_gᵀ · dY_g` (one accumulator over the
//!   group's output channels, increasing), then col2im: each input element
//!   starts at +0 and adds the taps that read it in (ky, kx) increasing
//!   order, one f32 add each.
//! * weight gradient: per batch item `T_n = dY_n · cols_nᵀ` (one accumulator
//!   over the output positions (oy, ox), increasing; `cols_nᵀ` is a
//!   transposed view of the im2col matrix, which the GEMM packs); then
//!   `dW = ((+0 + T_0) + T_1) + …` in batch-item order, one f32 add per item.
//!
//! Where cols comes from changes speed, never bits: for stride 1 and k ≥ 32
//! (`Conv2d::reads_padded_input`) the forward and the weight gradient read
//! it from a zero-padded copy of the input (the GEMM's `B::OffsetRows`,
//! `B::OffsetCols`: the same entries, the padding's +0 included); else
//! im2col writes it, a block of output rows at a time.
//!
//! Threads take whole (item, group) pairs, or fixed-size element chunks of
//! the item-order sum: the chunking is a function of the shape only.
//!
//! Modules: `geometry` (the description and its checks), `im2col` (the
//! im2col matrix, its adjoint col2im and the zero-padded copy), `forward`,
//! `backward` (input and weight gradients).

mod backward;
mod forward;
mod geometry;
mod im2col;
#[cfg(test)]
mod tests;

pub use backward::{input_grad, weight_grad};
pub use forward::forward;
pub use geometry::{out_size, Conv2d};
