//! Row gathers and their scatter-add backward (embedding), the class pick
//! of nll_loss, and the counter-based dropout mask.
//!
//! Scatter-adds accumulate in an f64 buffer in increasing index-position
//! order and round each element once, so repeated indices sum in a fixed
//! order. Everything here runs on the calling thread (the bindings set the
//! IEEE floating-point environment around the arithmetic ones).

use crate::error::Error;
use crate::splitmix::{mix, GAMMA};

/// (rows, d) of an embedding table `table` [rows, d] read at `indices`
/// positions into `out` elements.
pub fn embedding_shape(
    op: &str,
    table: &[usize],
    indices: usize,
    out: usize,
) -> crate::error::Result<(usize, usize)> {
    match *table {
        [rows, d] if indices.checked_mul(d) == Some(out) => Ok((rows, d)),
        _ => Err(Error::Value(format!(
            "{op}: table of shape {table:?} and {indices} indices do not give {out} outputs"
        ))),
    }
}

/// (n, c, s) of nll_loss's log-probabilities [n, c, *] for `targets`
/// targets.
pub fn nll_shape(
    op: &str,
    lp: &[usize],
    targets: usize,
) -> crate::error::Result<(usize, usize, usize)> {
    match lp {
        [n, c, rest @ ..] if rest.iter().product::<usize>() * n == targets => {
            Ok((*n, *c, rest.iter().product()))
        }
        _ => Err(Error::Value(format!(
            "{op}: {targets} targets do not match input of shape {lp:?}"
        ))),
    }
}

/// Check that every index lies in `0..n` (an `ignore` value is allowed).
pub fn check_indices(idx: &[i64], n: usize, ignore: Option<i64>) -> Result<(), (usize, i64)> {
    for (i, &v) in idx.iter().enumerate() {
        if Some(v) != ignore && (v < 0 || v as usize >= n) {
            return Err((i, v));
        }
    }
    Ok(())
}

/// `out[i] = table[idx[i]]`, rows of `d` elements.
pub fn gather_rows(table: &[f32], d: usize, idx: &[i64], out: &mut [f32]) {
    for (i, &r) in idx.iter().enumerate() {
        out[i * d..(i + 1) * d].copy_from_slice(&table[r as usize * d..(r as usize + 1) * d]);
    }
}

/// `dtable[r] = Σ g[i]` over positions i with `idx[i] = r` (i increasing,
/// f64, rounded once); rows equal to `skip` get zero.
pub fn scatter_add_rows(g: &[f32], d: usize, idx: &[i64], skip: Option<i64>, dtable: &mut [f32]) {
    let mut acc = crate::storage::scratch_vec(dtable.len(), 0f64);
    for (i, &r) in idx.iter().enumerate() {
        if Some(r) == skip {
            continue;
        }
        let row = &mut acc[r as usize * d..(r as usize + 1) * d];
        for (a, &v) in row.iter_mut().zip(&g[i * d..(i + 1) * d]) {
            *a += v as f64;
        }
    }
    for (o, a) in dtable.iter_mut().zip(&acc) {
        *o = *a as f32;
    }
}

/// nll_loss's pick over `lp [n, c, s]` and `target [n, s]`:
/// `loss[j] = −(w[t]·lp[t])` and `wt[j] = w[t]` (both 0 where t = ignore).
pub fn nll_pick(
    lp: &[f32],
    (n, c, s): (usize, usize, usize),
    target: &[i64],
    weight: Option<&[f32]>,
    ignore: i64,
    loss: &mut [f32],
    wt: &mut [f32],
) {
    for ni in 0..n {
        for si in 0..s {
            let j = ni * s + si;
            let t = target[j];
            if t == ignore {
                loss[j] = 0.0;
                wt[j] = 0.0;
                continue;
            }
            let w = weight.map_or(1.0, |w| w[t as usize]);
            loss[j] = -(w * lp[(ni * c + t as usize) * s + si]);
            wt[j] = w;
        }
    }
}

/// Backward of [`nll_pick`]: `dlp[t] = −(w[t]·g[j])`, every other entry 0.
pub fn nll_scatter(
    g: &[f32],
    (n, c, s): (usize, usize, usize),
    target: &[i64],
    weight: Option<&[f32]>,
    ignore: i64,
    dlp: &mut [f32],
) {
    dlp.fill(0.0);
    for ni in 0..n {
        for si in 0..s {
            let j = ni * s + si;
            let t = target[j];
            if t == ignore {
                continue;
            }
            let w = weight.map_or(1.0, |w| w[t as usize]);
            dlp[(ni * c + t as usize) * s + si] = -(w * g[j]);
        }
    }
}

/// The dropout multiplier of element `i` under `key`: 0 with probability
/// `p`, else `scale`. A pure function of (key, i): no thread can change it.
pub fn dropout_mask(key: u64, p: f64, scale: f32, out: &mut [f32]) {
    let threshold = (p * (1u64 << 53) as f64) as u64;
    for (i, o) in out.iter_mut().enumerate() {
        let u = mix(key ^ mix(i as u64).wrapping_add(GAMMA)) >> 11;
        *o = if u < threshold { 0.0 } else { scale };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_rows_accumulate_and_skip() {
        let g = [1f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut dt = [9f32; 6];
        scatter_add_rows(&g, 2, &[2, 0, 2], Some(0), &mut dt);
        assert_eq!(dt, [0.0, 0.0, 0.0, 0.0, 6.0, 8.0]);
        assert_eq!(check_indices(&[0, 3], 3, None), Err((1, 3)));
    }

    #[test]
    fn a_refused_accumulator_unwinds_as_scratch_refused_before_writing() {
        use crate::storage::{refuse_hook, ScratchRefused};
        let g = [1f32; 6];
        let mut dt = [9f32; 6];
        // The f64 accumulator is 6 · 8 = 48 bytes: refuse requests of 48.
        let r = refuse_hook::with_limit(48, || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                scatter_add_rows(&g, 2, &[2, 0, 2], None, &mut dt)
            }))
        });
        let payload = r.expect_err("the accumulator was granted");
        assert!(
            payload.downcast_ref::<ScratchRefused>().is_some(),
            "not a ScratchRefused"
        );
        assert_eq!(dt, [9f32; 6], "the table was written before the refusal");
        // One byte more is granted.
        refuse_hook::with_limit(49, || scatter_add_rows(&g, 2, &[2, 0, 2], None, &mut dt));
        assert_eq!(dt, [1.0, 1.0, 0.0, 0.0, 2.0, 2.0]);
    }

    #[test]
    fn dropout_rate_is_close_to_p() {
        let mut m = vec![0f32; 100_000];
        dropout_mask(7, 0.3, 2.0, &mut m);
        let dropped = m.iter().filter(|&&v| v == 0.0).count() as f64 / m.len() as f64;
        assert!((dropped - 0.3).abs() < 0.01, "{dropped}");
        let mut all = vec![0f32; 10];
        dropout_mask(7, 0.0, 1.0, &mut all);
        assert!(all.iter().all(|&v| v == 1.0));
    }
}
