use super::forward::{forward_padded, wide_product};
use super::*;
use crate::dispatch::Mode;
use crate::ptr::Ptr;
use crate::simd::Token;

fn direct(s: &Conv2d, x: &[f32], wt: &[f32]) -> Vec<f64> {
    let (cg, og) = (s.c_in / s.groups, s.c_out / s.groups);
    let mut out = vec![0f64; s.n * s.c_out * s.p()];
    for ni in 0..s.n {
        for o in 0..s.c_out {
            let g = o / og;
            for oy in 0..s.oh {
                for ox in 0..s.ow {
                    let mut acc = 0f64;
                    for c in 0..cg {
                        for ky in 0..s.kh {
                            for kx in 0..s.kw {
                                let iy = (oy * s.stride.0 + ky * s.dilation.0) as isize
                                    - s.padding.0 as isize;
                                let ix = (ox * s.stride.1 + kx * s.dilation.1) as isize
                                    - s.padding.1 as isize;
                                if iy < 0 || ix < 0 || iy >= s.h as isize || ix >= s.w as isize {
                                    continue;
                                }
                                let xv = x[((ni * s.c_in + g * cg + c) * s.h + iy as usize) * s.w
                                    + ix as usize];
                                acc +=
                                    xv as f64 * wt[((o * cg + c) * s.kh + ky) * s.kw + kx] as f64;
                            }
                        }
                    }
                    out[((ni * s.c_out + o) * s.oh + oy) * s.ow + ox] = acc;
                }
            }
        }
    }
    out
}

fn geometry(
    n: usize,
    c_in: usize,
    h: usize,
    w: usize,
    c_out: usize,
    k: usize,
    st: usize,
    pad: usize,
    dil: usize,
    groups: usize,
) -> Conv2d {
    Conv2d {
        n,
        c_in,
        h,
        w,
        c_out,
        kh: k,
        kw: k,
        stride: (st, st),
        padding: (pad, pad),
        dilation: (dil, dil),
        groups,
        oh: out_size(h, k, st, pad, dil),
        ow: out_size(w, k, st, pad, dil),
    }
}

fn values(n: usize, seed: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as f32 * 0.7 + seed).sin() * 3.0).fract())
        .collect()
}

/// Groups, depthwise, stride with dilation, 1×1, no padding with
/// dilation, stride 3.
fn geometries() -> [Conv2d; 6] {
    [
        geometry(2, 4, 7, 6, 6, 3, 1, 1, 1, 2),
        geometry(1, 3, 9, 8, 4, 3, 2, 2, 2, 1),
        geometry(2, 5, 5, 5, 5, 3, 1, 1, 1, 5),
        geometry(3, 4, 4, 4, 8, 1, 1, 0, 1, 1),
        geometry(1, 2, 11, 5, 3, 3, 1, 0, 2, 1),
        geometry(1, 2, 10, 7, 2, 3, 3, 2, 1, 1),
    ]
}

#[test]
fn forward_matches_direct_sum_and_adjoints_agree() {
    for s in geometries() {
        let x = values(s.n * s.c_in * s.h * s.w, 0.3);
        let wt = values(s.c_out * s.k(), 1.1);
        let dy = values(s.n * s.c_out * s.p(), 2.7);
        for mode in [Mode::Exact, Mode::Fast] {
            let mut out = vec![0f32; dy.len()];
            // SAFETY: the test's buffers hold every element the call reaches.
            unsafe {
                forward(
                    Token::current(),
                    mode,
                    &s,
                    x.as_ptr(),
                    wt.as_ptr(),
                    None,
                    out.as_mut_ptr(),
                )
            };
            let want = direct(&s, &x, &wt);
            for (a, b) in out.iter().zip(&want) {
                assert!((*a as f64 - b).abs() < 1e-4, "{s:?}");
            }
            // <dy, conv(x)> = <input_grad(dy), x> = <weight_grad(x, dy), w>.
            let mut dx = vec![f32::NAN; x.len()];
            let mut dw = vec![f32::NAN; wt.len()];
            // SAFETY: the test's buffers hold every element the call reaches.
            unsafe {
                input_grad(
                    Token::current(),
                    mode,
                    &s,
                    dy.as_ptr(),
                    wt.as_ptr(),
                    dx.as_mut_ptr(),
                );
                weight_grad(
                    Token::current(),
                    mode,
                    &s,
                    x.as_ptr(),
                    dy.as_ptr(),
                    dw.as_mut_ptr(),
                );
            }
            let lhs: f64 = dy.iter().zip(&want).map(|(a, b)| *a as f64 * b).sum();
            let via_x: f64 = dx.iter().zip(&x).map(|(a, b)| *a as f64 * *b as f64).sum();
            let via_w: f64 = dw.iter().zip(&wt).map(|(a, b)| *a as f64 * *b as f64).sum();
            assert!(
                (lhs - via_x).abs() < 1e-3 * (1.0 + lhs.abs()),
                "{s:?} {lhs} {via_x}"
            );
            assert!(
                (lhs - via_w).abs() < 1e-3 * (1.0 + lhs.abs()),
                "{s:?} {lhs} {via_w}"
            );
        }
    }
}

/// The input gradient's definition in exact mode: each dcols entry the
/// canonical sum over the group's output channels (+0, then a rounded
/// multiply and a rounded add per channel, increasing), each input
/// element +0 plus its taps in (ky, kx) order.
fn input_grad_definition(s: &Conv2d, dy: &[f32], wt: &[f32]) -> Vec<f32> {
    let (og, cg, k) = (s.og(), s.cg(), s.k());
    let mut dx = vec![0f32; s.n * s.c_in * s.h * s.w];
    for ni in 0..s.n {
        for ci in 0..s.c_in {
            let (g, c) = (ci / cg, ci % cg);
            for iy in 0..s.h {
                for ix in 0..s.w {
                    let mut acc = 0f32;
                    for ky in 0..s.kh {
                        for kx in 0..s.kw {
                            let ty = (iy + s.padding.0) as isize - (ky * s.dilation.0) as isize;
                            let tx = (ix + s.padding.1) as isize - (kx * s.dilation.1) as isize;
                            if ty < 0 || tx < 0 {
                                continue;
                            }
                            let (ty, tx) = (ty as usize, tx as usize);
                            if ty % s.stride.0 != 0 || tx % s.stride.1 != 0 {
                                continue;
                            }
                            let (oy, ox) = (ty / s.stride.0, tx / s.stride.1);
                            if oy >= s.oh || ox >= s.ow {
                                continue;
                            }
                            let r = (c * s.kh + ky) * s.kw + kx;
                            let mut term = 0f32;
                            for o in 0..og {
                                let oc = g * og + o;
                                let prod = wt[oc * k + r]
                                    * dy[((ni * s.c_out + oc) * s.oh + oy) * s.ow + ox];
                                term += prod;
                            }
                            acc += term;
                        }
                    }
                    dx[((ni * s.c_in + ci) * s.h + iy) * s.w + ix] = acc;
                }
            }
        }
    }
    dx
}

/// One image large enough that [`input_grad`] splits its channels (64
/// input channels: 576 rows of Wᵀ, one extra chunk; 16 × 16, 16 outputs:
/// 2.4 M multiply-adds, two chunks' worth; so two chunks of 32 channels),
/// and a batch of 8 that does not.
fn split_channel_geometries() -> [Conv2d; 2] {
    [
        geometry(1, 64, 16, 16, 16, 3, 1, 1, 1, 1),
        geometry(8, 4, 16, 16, 8, 3, 1, 1, 1, 1),
    ]
}

#[test]
fn input_grad_gives_the_definition_bits() {
    let [one, batch] = split_channel_geometries();
    assert_eq!(super::backward::channels_per_chunk(&one), 32);
    assert_eq!(super::backward::channels_per_chunk(&batch), 4);
    for s in geometries().into_iter().chain(split_channel_geometries()) {
        let wt = values(s.c_out * s.k(), 1.1);
        let dy = values(s.n * s.c_out * s.p(), 2.7);
        let want = input_grad_definition(&s, &dy, &wt);
        let mut dx = vec![f32::NAN; want.len()];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            input_grad(
                Token::current(),
                Mode::Exact,
                &s,
                dy.as_ptr(),
                wt.as_ptr(),
                dx.as_mut_ptr(),
            )
        };
        for (a, b) in dx.iter().zip(&want) {
            assert_eq!(a.to_bits(), b.to_bits(), "{s:?}");
        }
    }
}

/// The input gradient by blocks of 1, 2, 3 and all output rows (blocks
/// run last to first, each a product and a col2im of its columns), in
/// chunks of 1, 2 and all of a group's input channels, gives the
/// definition's bits: each input element's taps keep their (ky, kx) order
/// across block boundaries, whatever the stride, dilation and padding, and
/// a chunk's rows of Wᵀ give the same sums as the whole group's.
#[test]
fn input_grad_by_blocks_of_rows_and_chunks_of_channels_gives_the_definition_bits() {
    for s in geometries() {
        let wt = values(s.c_out * s.k(), 0.7);
        let dy = values(s.n * s.c_out * s.p(), 1.9);
        let want = input_grad_definition(&s, &dy, &wt);
        assert!(s.oh >= 3, "a geometry with fewer than 3 output rows: {s:?}");
        for (rows, channels) in [1, 2, 3, s.oh]
            .into_iter()
            .flat_map(|r| [1, 2, s.cg()].map(|c| (r, c)))
        {
            for path in crate::dispatch::available_paths() {
                let token = Token::new(path).unwrap();
                let mut dx = vec![f32::NAN; want.len()];
                // SAFETY: the test's buffers hold every element the call reaches.
                unsafe {
                    super::backward::input_grad_in_pieces(
                        token,
                        Mode::Exact,
                        &s,
                        dy.as_ptr(),
                        wt.as_ptr(),
                        dx.as_mut_ptr(),
                        rows,
                        channels,
                    )
                };
                for (a, b) in dx.iter().zip(&want) {
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "{s:?}, blocks of {rows} rows, {channels} channels, {path:?}"
                    );
                }
            }
        }
    }
}

/// The im2col entry of item `ni`, group `g`, row r = (c, ky, kx), output
/// (oy, ox): the input element the tap reads, or +0 in the padding —
/// from the geometry, independently of `im2col` and the padded copy.
fn tap_value(s: &Conv2d, x: &[f32], ni: usize, g: usize, r: usize, oy: usize, ox: usize) -> f32 {
    let (c, ky, kx) = (r / (s.kh * s.kw), r / s.kw % s.kh, r % s.kw);
    let iy = (oy * s.stride.0 + ky * s.dilation.0) as isize - s.padding.0 as isize;
    let ix = (ox * s.stride.1 + kx * s.dilation.1) as isize - s.padding.1 as isize;
    if iy < 0 || ix < 0 || iy >= s.h as isize || ix >= s.w as isize {
        return 0.0;
    }
    x[((ni * s.c_in + g * s.cg() + c) * s.h + iy as usize) * s.w + ix as usize]
}

/// The weight gradient's definition in exact mode: per item, each entry
/// the canonical sum over output positions (+0, then a rounded multiply
/// and a rounded add per position, row-major increasing); the items'
/// parts added to +0 in item order.
fn weight_grad_definition(s: &Conv2d, mode: Mode, x: &[f32], dy: &[f32]) -> Vec<f32> {
    let (og, k) = (s.og(), s.k());
    let mut dw = vec![0f32; s.c_out * k];
    for (oc, r) in (0..s.c_out).flat_map(|o| (0..k).map(move |r| (o, r))) {
        let g = oc / og;
        let mut total = 0f32;
        for ni in 0..s.n {
            let mut acc = 0f32;
            for oy in 0..s.oh {
                for ox in 0..s.ow {
                    let xv = tap_value(s, x, ni, g, r, oy, ox);
                    let dv = dy[((ni * s.c_out + oc) * s.oh + oy) * s.ow + ox];
                    acc = match mode {
                        Mode::Exact => acc + dv * xv,
                        Mode::Fast => dv.mul_add(xv, acc),
                    };
                }
            }
            total += acc;
        }
        dw[oc * k + r] = total;
    }
    dw
}

/// Bit for bit in both modes, on the small geometries and on ones whose
/// output rows make several blocks of the blocked product
/// (`forward_block_rows`), through the im2col block and (stride 1, k ≥
/// 32) packed straight from the padded input: dilation, groups, padding
/// 0 and 2, odd output widths; an infinite input element. Each also in
/// chunks of 1, 2 and all of a group's input channels (a split only
/// applies to the padded-input product), and one image whose own call
/// splits.
#[test]
fn weight_grad_gives_the_definition_bits() {
    let mut cases = geometries().to_vec();
    cases.extend(split_channel_geometries());
    cases.push(geometry(2, 8, 40, 64, 3, 3, 1, 1, 1, 1));
    cases.push(geometry(1, 6, 37, 70, 4, 3, 1, 1, 1, 2));
    cases.push(geometry(2, 16, 21, 66, 5, 1, 1, 0, 1, 1));
    cases.push(geometry(1, 8, 70, 33, 4, 3, 1, 2, 2, 2));
    cases.push(geometry(2, 4, 60, 45, 3, 3, 1, 0, 1, 1));
    let in_place = cases
        .iter()
        .filter(|s| s.reads_padded_input() && s.oh > 30)
        .count();
    assert!(in_place >= 3, "too few cases read the padded input");
    for s in cases {
        if s.oh > 30 {
            assert!(
                s.forward_block_rows() < s.oh,
                "{s:?}: one block tests no continuation"
            );
        }
        let mut x = values(s.n * s.c_in * s.h * s.w, 0.3);
        x[s.w + 1] = f32::INFINITY;
        let dy = values(s.n * s.c_out * s.p(), 2.7);
        for mode in [Mode::Exact, Mode::Fast] {
            let want = weight_grad_definition(&s, mode, &x, &dy);
            for channels in [None, Some(1), Some(2), Some(s.cg())] {
                let mut dw = vec![f32::NAN; want.len()];
                // SAFETY: the test's buffers hold every element the call reaches.
                unsafe {
                    let (t, x, dy, dw) =
                        (Token::current(), x.as_ptr(), dy.as_ptr(), dw.as_mut_ptr());
                    match channels {
                        None => weight_grad(t, mode, &s, x, dy, dw),
                        Some(c) => {
                            super::backward::weight_grad_in_pieces(t, mode, &s, x, dy, dw, c)
                        }
                    }
                };
                for (i, (a, b)) in dw.iter().zip(&want).enumerate() {
                    let same = a.to_bits() == b.to_bits()
                        || (mode == Mode::Fast && a.is_nan() && b.is_nan());
                    assert!(
                        same,
                        "{s:?} {mode:?} {channels:?} channels, entry {i}: {a:e} vs {b:e}"
                    );
                }
            }
        }
    }
}

/// The im2col product written out: each output the canonical sum over
/// k = (c, ky, kx) of weight × im2col entry (+0 in the padding), in the
/// mode's arithmetic (exact: NaN canonical), then the bias.
fn forward_definition(s: &Conv2d, mode: Mode, x: &[f32], wt: &[f32], bias: &[f32]) -> Vec<f32> {
    let (og, k) = (s.og(), s.k());
    let mut out = vec![0f32; s.n * s.c_out * s.p()];
    for (ni, oc) in (0..s.n).flat_map(|n| (0..s.c_out).map(move |o| (n, o))) {
        let g = oc / og;
        for (oy, ox) in (0..s.oh).flat_map(|y| (0..s.ow).map(move |x| (y, x))) {
            let mut acc = 0f32;
            for r in 0..k {
                let xv = tap_value(s, x, ni, g, r, oy, ox);
                let wv = wt[oc * k + r];
                acc = match mode {
                    Mode::Exact => acc + wv * xv,
                    Mode::Fast => wv.mul_add(xv, acc),
                };
            }
            if mode == Mode::Exact && acc.is_nan() {
                acc = f32::from_bits(crate::kernels::CANONICAL_NAN);
            }
            out[((ni * s.c_out + oc) * s.oh + oy) * s.ow + ox] = acc + bias[oc];
        }
    }
    out
}

/// The forward over a padded input read in place gives the im2col
/// product's bits on every available path, in both modes: stride 1
/// with padding, dilation, groups, a 5×5 kernel, outputs narrower than
/// a register tile, k over several k blocks; infinite weights make the
/// padding's terms NaN (inf × +0), which the padded copy must reproduce.
#[test]
fn padded_forward_gives_the_im2col_products_bits() {
    let cases = [
        geometry(2, 8, 7, 20, 6, 3, 1, 1, 1, 1),
        geometry(1, 6, 9, 19, 5, 3, 1, 2, 2, 1),
        geometry(2, 8, 6, 33, 4, 3, 1, 1, 1, 2),
        geometry(1, 4, 8, 40, 7, 3, 1, 0, 1, 1),
        geometry(1, 2, 9, 17, 3, 5, 1, 2, 1, 1),
        geometry(2, 16, 5, 5, 9, 3, 1, 1, 1, 1),
        geometry(1, 32, 4, 20, 7, 3, 1, 1, 1, 1),
    ];
    // Both shapes of the product run: per output row on some (case, path)
    // pairs, over the padded row width on others (the tile widths are 4,
    // 8, 16 and 48 columns).
    let paths = crate::dispatch::available_paths();
    let wide: Vec<bool> = cases
        .iter()
        .flat_map(|s| paths.iter().map(|&p| wide_product(s, p)))
        .collect();
    assert!(wide.contains(&true), "no case runs the wide product");
    if paths.len() > 1 {
        assert!(wide.contains(&false), "no case runs the per-row product");
    }
    for s in cases {
        assert!(s.reads_padded_input(), "{s:?} takes the im2col path");
        let x = values(s.n * s.c_in * s.h * s.w, 0.3);
        let mut wt = values(s.c_out * s.k(), 1.1);
        let bias = values(s.c_out, 0.9);
        // An infinite weight on a corner tap of the first output channel
        // and a negative zero elsewhere.
        wt[0] = f32::INFINITY;
        wt[s.k() + 1] = -0.0;
        for mode in [Mode::Exact, Mode::Fast] {
            let want = forward_definition(&s, mode, &x, &wt, &bias);
            for path in crate::dispatch::available_paths() {
                let token = Token::new(path).unwrap();
                let mut out = vec![f32::NAN; want.len()];
                // SAFETY: the vectors hold the shapes `s` describes.
                unsafe {
                    forward_padded(
                        token,
                        mode,
                        &s,
                        x.as_ptr(),
                        wt.as_ptr(),
                        Some(bias.as_ptr()),
                        out.as_mut_ptr(),
                    )
                };
                for (i, (a, b)) in out.iter().zip(&want).enumerate() {
                    let same = a.to_bits() == b.to_bits()
                        || (mode == Mode::Fast && a.is_nan() && b.is_nan());
                    assert!(same, "{s:?} {path:?} {mode:?} output {i}: {a:e} vs {b:e}");
                }
            }
        }
    }
}

#[test]
fn output_size_rule() {
    assert_eq!(out_size(5, 3, 1, 0, 1), 3);
    assert_eq!(out_size(5, 3, 2, 1, 1), 3);
    assert_eq!(out_size(2, 3, 1, 0, 1), 0);
    assert_eq!(out_size(7, 3, 1, 0, 3), 1);
}

/// Debug builds (and so `cargo test`, whose profile keeps debug assertions)
/// check each access of a kernel's scratch against the buffer's real size
/// (`Buffer::f32_ptr`): a padded copy one element short of cg·hp·wp is
/// caught at the first write past it, not run over.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "outside an extent")]
fn a_short_scratch_buffer_fails_a_debug_assertion() {
    let s = geometry(1, 2, 4, 5, 3, 3, 1, 1, 1, 1);
    let x = values(s.n * s.c_in * s.h * s.w, 0.3);
    let (hp, wp) = s.padded_hw();
    let short = crate::storage::Buffer::new((s.cg() * hp * wp - 1) * 4);
    // SAFETY: x holds the whole input; the destination is deliberately one
    // element short, which the debug assertion must refuse before writing.
    unsafe { s.pad_group(Ptr::new(x.as_ptr(), x.len()), 0, 0, short.f32_ptr()) };
}

/// The same buffer at its full size passes (the test above fails for the
/// short size, not for any call).
#[test]
fn a_full_scratch_buffer_passes_the_debug_assertions() {
    let s = geometry(1, 2, 4, 5, 3, 3, 1, 1, 1, 1);
    let x = values(s.n * s.c_in * s.h * s.w, 0.3);
    let (hp, wp) = s.padded_hw();
    let full = crate::storage::Buffer::new(s.cg() * hp * wp * 4);
    // SAFETY: as above, at the size pad_group needs.
    unsafe { s.pad_group(Ptr::new(x.as_ptr(), x.len()), 0, 0, full.f32_ptr()) };
    // SAFETY: the buffer holds cg·hp·wp f32, all written.
    let got = unsafe { full.f32_ptr().slice(0, s.cg() * hp * wp) };
    assert_eq!(got[wp + 1], x[0]);
    assert_eq!(got[0], 0.0);
}
