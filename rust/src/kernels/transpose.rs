//! Matrix transposes (data movement only, so every path gives the same
//! bits): the operands the dot16 products and the recurrent layers want with
//! rows along the other axis. On the AVX paths 8×8 blocks go through
//! registers; elsewhere a blocked scalar loop.

#[cfg(target_arch = "x86_64")]
use crate::dispatch::KernelPath;
#[cfg(target_arch = "x86_64")]
use crate::ptr::Ptr;
use crate::simd::Token;

/// `out[j][i] = x[i][j]` for an r×c row-major `x` (out is c×r), on
/// `token`'s path.
pub fn transpose(token: Token, x: &[f32], r: usize, c: usize, out: &mut [f32]) {
    transpose_ld(token, x, r, c, c, out)
}

/// `out[j][i] = x[i * ldx + j]` for i < r, j < c (out is c×r), on `token`'s
/// path.
pub fn transpose_ld(token: Token, x: &[f32], r: usize, c: usize, ldx: usize, out: &mut [f32]) {
    if r == 0 || c == 0 {
        return;
    }
    assert!(x.len() >= (r - 1) * ldx + c && out.len() >= r * c);
    // Data movement only: any path may do it, and the AVX one is several
    // times faster than the scalar loop. It runs only where the current
    // path is an AVX one, so a forced scalar or v128 path executes no AVX.
    #[cfg(target_arch = "x86_64")]
    if matches!(token.path(), KernelPath::Avx2 | KernelPath::Avx512) {
        // SAFETY: a token for these paths exists only where AVX2 (hence
        // AVX) is available; the bounds were checked above.
        unsafe {
            transpose_avx(
                Ptr::new(x.as_ptr(), x.len()),
                r,
                c,
                ldx,
                Ptr::new(out.as_mut_ptr(), out.len()),
            )
        };
        return;
    }
    const B: usize = 16;
    for i0 in (0..r).step_by(B) {
        for j0 in (0..c).step_by(B) {
            for i in i0..(i0 + B).min(r) {
                for j in j0..(j0 + B).min(c) {
                    out[j * r + i] = x[i * ldx + j];
                }
            }
        }
    }
}

/// [`transpose_ld`] in 8×8 blocks of AVX registers (unpack, shuffle and
/// 128-bit permutes), the edges element by element.
///
/// # Safety
/// AVX must be available; `x` valid for `(r − 1)·ldx + c` reads, `out` for
/// `r·c` writes (the extents of the `Ptr`s, asserted in debug builds).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_avx(x: Ptr<*const f32>, r: usize, c: usize, ldx: usize, out: Ptr<*mut f32>) {
    use std::arch::x86_64::*;
    let (r8, c8) = (r / 8 * 8, c / 8 * 8);
    // SAFETY: every index below is inside the bounds the caller guarantees
    // (rows < r, columns < c).
    unsafe {
        for i0 in (0..r8).step_by(8) {
            for j0 in (0..c8).step_by(8) {
                let row = |a: usize| x.range((i0 + a) * ldx + j0, 8);
                let (r0, r1, r2, r3) = (
                    _mm256_loadu_ps(row(0)),
                    _mm256_loadu_ps(row(1)),
                    _mm256_loadu_ps(row(2)),
                    _mm256_loadu_ps(row(3)),
                );
                let (r4, r5, r6, r7) = (
                    _mm256_loadu_ps(row(4)),
                    _mm256_loadu_ps(row(5)),
                    _mm256_loadu_ps(row(6)),
                    _mm256_loadu_ps(row(7)),
                );
                let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
                let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
                let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
                let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
                let (u0, u1) = (
                    _mm256_shuffle_ps::<0x44>(t0, t2),
                    _mm256_shuffle_ps::<0xEE>(t0, t2),
                );
                let (u2, u3) = (
                    _mm256_shuffle_ps::<0x44>(t1, t3),
                    _mm256_shuffle_ps::<0xEE>(t1, t3),
                );
                let (u4, u5) = (
                    _mm256_shuffle_ps::<0x44>(t4, t6),
                    _mm256_shuffle_ps::<0xEE>(t4, t6),
                );
                let (u6, u7) = (
                    _mm256_shuffle_ps::<0x44>(t5, t7),
                    _mm256_shuffle_ps::<0xEE>(t5, t7),
                );
                let col = |b: usize| out.range((j0 + b) * r + i0, 8);
                _mm256_storeu_ps(col(0), _mm256_permute2f128_ps::<0x20>(u0, u4));
                _mm256_storeu_ps(col(1), _mm256_permute2f128_ps::<0x20>(u1, u5));
                _mm256_storeu_ps(col(2), _mm256_permute2f128_ps::<0x20>(u2, u6));
                _mm256_storeu_ps(col(3), _mm256_permute2f128_ps::<0x20>(u3, u7));
                _mm256_storeu_ps(col(4), _mm256_permute2f128_ps::<0x31>(u0, u4));
                _mm256_storeu_ps(col(5), _mm256_permute2f128_ps::<0x31>(u1, u5));
                _mm256_storeu_ps(col(6), _mm256_permute2f128_ps::<0x31>(u2, u6));
                _mm256_storeu_ps(col(7), _mm256_permute2f128_ps::<0x31>(u3, u7));
            }
            for i in i0..i0 + 8 {
                for j in c8..c {
                    out.write(j * r + i, x.read(i * ldx + j));
                }
            }
        }
        for i in r8..r {
            for j in 0..c {
                out.write(j * r + i, x.read(i * ldx + j));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::available_paths;

    #[test]
    fn transpose_moves_every_element_on_every_path() {
        let mut bits = 0x2545_f491u32;
        for (r, c, ldx) in [
            (1, 1, 1),
            (8, 8, 8),
            (9, 17, 20),
            (16, 8, 11),
            (23, 5, 5),
            (5, 23, 30),
            (64, 40, 41),
        ] {
            let x: Vec<f32> = (0..r * ldx)
                .map(|_| {
                    // Any bit pattern (NaN payloads included) must move unchanged.
                    bits ^= bits << 13;
                    bits ^= bits >> 17;
                    bits ^= bits << 5;
                    f32::from_bits(bits)
                })
                .collect();
            for path in available_paths() {
                let mut out = vec![0f32; r * c];
                transpose_ld(Token::new(path).unwrap(), &x, r, c, ldx, &mut out);
                for i in 0..r {
                    for j in 0..c {
                        assert_eq!(
                            out[j * r + i].to_bits(),
                            x[i * ldx + j].to_bits(),
                            "{path:?} {r}x{c} ({i}, {j})"
                        );
                    }
                }
            }
        }
    }
}
