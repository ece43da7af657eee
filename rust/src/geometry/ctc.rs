//! CTC loss's sizes and arguments (torch.nn.functional.ctc_loss): log
//! probabilities `[T, N, C]` or unbatched `[T, C]`, targets padded `[N, S]`
//! or concatenated 1-D, one input and one target length per line, the blank
//! a class, and the reduction. The constructor returns the lines' labels
//! the kernel (`kernels::ctc`) reads, or an error naming `ctc_loss`.

use super::tuple;
use crate::error::{Error, Result};

const OP: &str = "ctc_loss";

/// How the per-line losses are combined (torch's `reduction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    None,
    Mean,
    Sum,
}

impl Reduction {
    pub fn parse(name: &str) -> Result<Reduction> {
        match name {
            "none" => Ok(Reduction::None),
            "mean" => Ok(Reduction::Mean),
            "sum" => Ok(Reduction::Sum),
            _ => Err(Error::Value(format!(
                "{OP}: reduction must be 'none', 'mean' or 'sum', got '{name}'"
            ))),
        }
    }
}

/// A checked CTC call: the batched `[T, N, C]`, each line's input length
/// and labels (all in `0..C`, none the blank).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtcGeometry {
    /// `[T, N, C]` (N = 1 for an unbatched call).
    pub log_probs: [usize; 3],
    /// Whether log_probs was `[T, C]`.
    pub unbatched: bool,
    pub blank: usize,
    pub input_lengths: Vec<usize>,
    pub lines: Vec<Vec<i64>>,
}

fn value(message: String) -> Error {
    Error::Value(format!("{OP}: {message}"))
}

/// One length per line of a batch of `n`, or an error naming `what`.
fn per_line(what: &str, lengths: &[i128], n: usize) -> Result<()> {
    if lengths.len() != n {
        return Err(value(format!("{what} has {} entries for a batch of {n}", lengths.len())));
    }
    Ok(())
}

impl CtcGeometry {
    /// `targets` holds the target tensor's values in row-major order and
    /// `targets_shape` its shape; lengths and blank are the user's ints.
    pub fn new(
        log_probs: &[usize],
        targets_shape: &[usize],
        targets: &[i64],
        input_lengths: &[i128],
        target_lengths: &[i128],
        blank: i128,
    ) -> Result<CtcGeometry> {
        let (lp, unbatched) = match *log_probs {
            [t, c] => ([t, 1, c], true),
            [t, n, c] => ([t, n, c], false),
            _ => {
                return Err(value(format!(
                    "log_probs must be [T, B, C] or [T, C], got shape {}",
                    tuple(log_probs)
                )))
            }
        };
        let [t, n, c] = lp;
        let blank = match usize::try_from(blank) {
            Ok(b) if b < c => b,
            _ => return Err(value(format!("blank {blank} is not a class of {c}"))),
        };
        per_line("input_lengths", input_lengths, n)?;
        per_line("target_lengths", target_lengths, n)?;
        let input_lengths = input_lengths
            .iter()
            .enumerate()
            .map(|(b, &l)| match usize::try_from(l) {
                Ok(s) if s <= t => Ok(s),
                _ => Err(value(format!(
                    "input_lengths[{b}] = {l} is outside 0..{t} for log_probs of shape {}",
                    tuple(&lp)
                ))),
            })
            .collect::<Result<Vec<usize>>>()?;
        if let Some((b, l)) = target_lengths.iter().enumerate().find(|(_, &l)| l < 0) {
            return Err(value(format!("target_lengths[{b}] = {l} is negative")));
        }
        if targets_shape.iter().product::<usize>() != targets.len() {
            return Err(value(format!(
                "targets of shape {} hold {} values",
                tuple(targets_shape),
                targets.len()
            )));
        }
        let lines = Self::lines(targets_shape, targets, &target_lengths, n, unbatched)?;
        for (b, line) in lines.iter().enumerate() {
            for &v in line {
                if v == blank as i64 {
                    return Err(value(format!("target of line {b} contains the blank label {blank}")));
                }
                if v < 0 || v as u64 >= c as u64 {
                    return Err(value(format!("label {v} in line {b} is outside 0..{}", c as i128 - 1)));
                }
            }
        }
        Ok(CtcGeometry {
            log_probs: lp,
            unbatched,
            blank,
            input_lengths,
            lines,
        })
    }

    /// Each line's labels: row b's first `target_lengths[b]` of padded
    /// targets, or consecutive runs of concatenated ones. An unbatched
    /// call's 1-D targets longer than its one length are a padded row.
    /// The lengths are ≥ 0 (checked by the caller), as the user gave them.
    fn lines(shape: &[usize], targets: &[i64], target_lengths: &[i128], n: usize, unbatched: bool) -> Result<Vec<Vec<i64>>> {
        let padded = match *shape {
            [s] if unbatched && s as i128 != target_lengths[0] => Some((1, s)),
            [rows, s] if !(unbatched && rows != 1) => Some((rows, s)),
            [_] => None,
            _ => {
                return Err(value(format!(
                    "targets must be [B, S] or 1-D, got shape {}",
                    tuple(shape)
                )))
            }
        };
        if let Some((rows, width)) = padded {
            if rows != n {
                return Err(value(format!(
                    "padded targets of shape {} for a batch of {n}",
                    tuple(shape)
                )));
            }
            return target_lengths
                .iter()
                .enumerate()
                .map(|(b, &l)| match usize::try_from(l) {
                    Ok(l) if l <= width => Ok(targets[b * width..b * width + l].to_vec()),
                    _ => Err(value(format!(
                        "target_lengths[{b}] = {l} exceeds the padded target width {width}"
                    ))),
                })
                .collect();
        }
        let sum = target_lengths.iter().try_fold(0u128, |a, &l| a.checked_add(l as u128));
        if sum != Some(targets.len() as u128) {
            let sum = sum.map_or("more than 2**128".to_string(), |s| s.to_string());
            return Err(value(format!(
                "target_lengths sum to {sum} but the concatenated targets have {} labels",
                targets.len()
            )));
        }
        let mut pos = 0;
        Ok(target_lengths
            .iter()
            .map(|&l| {
                let l = l as usize; // ≤ the sum, which is targets.len()
                pos += l;
                targets[pos - l..pos].to_vec()
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(lp: &[usize], ts: &[usize], t: &[i64], il: &[i128], tl: &[i128], blank: i128) -> Result<CtcGeometry> {
        CtcGeometry::new(lp, ts, t, il, tl, blank)
    }

    #[test]
    fn padded_and_concatenated_targets_give_the_same_lines() {
        let p = geo(&[4, 2, 3], &[2, 2], &[1, 2, 2, 0], &[4, 3], &[2, 1], 0).unwrap();
        let c = geo(&[4, 2, 3], &[3], &[1, 2, 2], &[4, 3], &[2, 1], 0).unwrap();
        assert_eq!(p.lines, vec![vec![1, 2], vec![2]]);
        assert_eq!(p, c);
        assert_eq!(p.input_lengths, vec![4, 3]);
    }

    #[test]
    fn unbatched_calls_take_a_row_or_a_run() {
        let g = geo(&[4, 3], &[3], &[1, 2, 1], &[4], &[2], 0).unwrap();
        assert!(g.unbatched);
        assert_eq!((g.log_probs, g.lines), ([4, 1, 3], vec![vec![1, 2]]));
        assert_eq!(geo(&[4, 3], &[2], &[1, 2], &[4], &[2], 0).unwrap().lines, vec![vec![1, 2]]);
        assert!(geo(&[4, 3], &[2, 1], &[1, 2], &[4], &[1], 0).is_err());
    }

    #[test]
    fn bad_sizes_name_ctc_loss() {
        let err = |r: Result<CtcGeometry>| match r {
            Err(Error::Value(m)) => m,
            other => panic!("{other:?}"),
        };
        let lp = [4, 2, 3];
        assert!(err(geo(&lp, &[2, 1], &[1, 1], &[4, 5], &[1, 1], 0)).contains("input_lengths[1] = 5"));
        assert!(err(geo(&lp, &[2, 1], &[1, 1], &[-1, 4], &[1, 1], 0)).contains("input_lengths[0] = -1"));
        assert!(err(geo(&lp, &[2, 1], &[1, 1], &[4, 4], &[-1, 1], 0)).contains("negative"));
        assert!(err(geo(&lp, &[2, 1], &[1, 1], &[4, 4], &[2, 1], 0)).contains("padded target width"));
        assert!(err(geo(&lp, &[2, 2], &[1, 0, 1, 1], &[4, 4], &[2, 2], 0)).contains("blank label 0"));
        assert!(err(geo(&lp, &[2, 2], &[1, 3, 1, 1], &[4, 4], &[2, 2], 0)).contains("outside 0..2"));
        assert!(err(geo(&lp, &[2], &[1, 1], &[4, 4], &[2, 1], 0)).contains("sum to 3"));
        assert!(err(geo(&lp, &[2], &[1, 1], &[4], &[1, 1], 0)).contains("entries for a batch of 2"));
        assert!(err(geo(&lp, &[2], &[1, 1], &[4, 4], &[1, 1], 3)).contains("blank 3"));
        assert!(err(geo(&[4], &[2], &[1, 1], &[4], &[1], 0)).contains("(4,)"));
        assert!(err(geo(&lp, &[2, 1, 1], &[1, 1], &[4, 4], &[1, 1], 0)).contains("(2, 1, 1)"));
        // Lengths past usize sum without wrapping.
        let huge = i128::from(u64::MAX);
        assert!(err(geo(&lp, &[2], &[1, 1], &[4, 4], &[huge, 2], 0)).contains("sum to 18446744073709551617"));
        assert!(err(geo(&lp, &[2, 1], &[1, 1], &[4, 4], &[huge + 1, 1], 0)).contains("= 18446744073709551616 exceeds"));
        assert!(err(geo(&[4, 3, 3], &[2], &[1, 1], &[4, 4, 4], &[i128::MAX, i128::MAX, i128::MAX], 0)).contains("sum to more"));
        assert!(Reduction::parse("avg").is_err());
        assert_eq!(Reduction::parse("sum"), Ok(Reduction::Sum));
    }
}
