//! Strided views: a base pointer plus shape and strides in elements.
//!
//! Kernels take operands as [`View`]s so that transposes, slices with steps
//! and broadcasts (stride 0) are read in place without a copy. Outputs are
//! written contiguously unless a kernel says otherwise.

/// Shape and strides (in elements) of one operand, relative to a base pointer
/// that the caller already offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
}

impl Layout {
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
        }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_contiguous(&self) -> bool {
        is_contiguous(&self.shape, &self.strides)
    }
}

/// Whether `strides` are the row-major strides of `shape` (dimensions of
/// size 1 may have any stride; a shape with a 0 has no element to place, so
/// any strides are contiguous, as torch says).
pub fn is_contiguous(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected = 1isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n != 1 && s != expected {
            return false;
        }
        expected *= n as isize;
    }
    true
}

/// Row-major strides of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for d in (0..shape.len()).rev() {
        strides[d] = acc;
        acc *= shape[d].max(1) as isize;
    }
    strides
}

/// Several operands over one shape, with dimensions of size 1 dropped and
/// adjacent dimensions merged wherever every operand allows it. Iterating
/// the result in row-major order visits the same elements in the same order
/// as iterating the original shape.
#[derive(Clone, Debug)]
pub struct Coalesced {
    pub shape: Vec<usize>,
    /// strides[operand][dim]
    pub strides: Vec<Vec<isize>>,
}

pub fn coalesce(shape: &[usize], operands: &[&[isize]]) -> Coalesced {
    let mut out_shape: Vec<usize> = Vec::with_capacity(shape.len());
    let mut out_strides: Vec<Vec<isize>> = vec![Vec::with_capacity(shape.len()); operands.len()];
    for d in 0..shape.len() {
        let n = shape[d];
        if n == 1 {
            continue;
        }
        if let Some(&last_n) = out_shape.last() {
            let mergeable = operands
                .iter()
                .zip(&out_strides)
                .all(|(s, os)| *os.last().unwrap() == s[d] * n as isize);
            if mergeable {
                *out_shape.last_mut().unwrap() = last_n * n;
                for (os, s) in out_strides.iter_mut().zip(operands) {
                    *os.last_mut().unwrap() = s[d];
                }
                continue;
            }
        }
        out_shape.push(n);
        for (os, s) in out_strides.iter_mut().zip(operands) {
            os.push(s[d]);
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for os in out_strides.iter_mut() {
            os.push(0);
        }
    }
    Coalesced {
        shape: out_shape,
        strides: out_strides,
    }
}

/// Visit the rows of a coalesced iteration space: calls
/// `f(row_offsets, inner_len)` for each combination of outer indices, in
/// row-major order, where `row_offsets[k]` is operand k's element offset of
/// the row start and the inner dimension is the last one of `c`.
/// Rows are numbered; `first_row..first_row + rows` restricts the visit so
/// that threads can take disjoint row ranges.
pub fn for_each_row(c: &Coalesced, first_row: usize, rows: usize, mut f: impl FnMut(&[isize])) {
    let nd = c.shape.len();
    let outer = &c.shape[..nd - 1];
    let nops = c.strides.len();
    // Decompose first_row into outer indices.
    let mut idx = vec![0usize; outer.len()];
    let mut r = first_row;
    for d in (0..outer.len()).rev() {
        idx[d] = r % outer[d];
        r /= outer[d];
    }
    let mut offs = vec![0isize; nops];
    for k in 0..nops {
        offs[k] = (0..outer.len())
            .map(|d| idx[d] as isize * c.strides[k][d])
            .sum();
    }
    for _ in 0..rows {
        f(&offs);
        // Increment the outer index (row-major), updating offsets.
        for d in (0..outer.len()).rev() {
            idx[d] += 1;
            for k in 0..nops {
                offs[k] += c.strides[k][d];
            }
            if idx[d] < outer[d] {
                break;
            }
            for k in 0..nops {
                offs[k] -= c.strides[k][d] * outer[d] as isize;
            }
            idx[d] = 0;
        }
    }
}

/// Number of rows `for_each_row` visits.
pub fn row_count(c: &Coalesced) -> usize {
    c.shape[..c.shape.len() - 1].iter().product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_layouts() {
        assert_eq!(contiguous_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert!(Layout::contiguous(&[2, 3]).is_contiguous());
        let t = Layout {
            shape: vec![3, 2],
            strides: vec![1, 3],
        };
        assert!(!t.is_contiguous());
        let ones = Layout {
            shape: vec![1, 5],
            strides: vec![99, 1],
        };
        assert!(ones.is_contiguous());
        // No element: contiguous whatever the strides (a fuzz finding: a
        // [0, 0] output with strides [1, 1] was refused by the kernels).
        assert!(is_contiguous(&[0, 0], &[1, 1]));
        assert!(is_contiguous(&[3, 0, 2], &[7, 5, 3]));
        assert!(is_contiguous(&[4, 0, 3], &contiguous_strides(&[4, 0, 3])));
        assert!(is_contiguous(&[4, 0], &[1, 1]));
    }

    #[test]
    fn coalesce_merges_contiguous_and_keeps_broadcast() {
        let c = coalesce(&[2, 3, 4], &[&[12, 4, 1], &[0, 0, 1]]);
        assert_eq!(c.shape, vec![6, 4]);
        assert_eq!(c.strides, vec![vec![4, 1], vec![0, 1]]);
        let c = coalesce(&[2, 3, 4], &[&[12, 4, 1]]);
        assert_eq!(c.shape, vec![24]);
    }

    #[test]
    fn rows_visit_in_row_major_order() {
        // A transposed 3x2 view of a 2x3 matrix.
        let c = coalesce(&[3, 2], &[&[1, 3]]);
        let mut seen = vec![];
        for_each_row(&c, 0, row_count(&c), |o| {
            for j in 0..c.shape[1] {
                seen.push(o[0] + j as isize * c.strides[0][1]);
            }
        });
        assert_eq!(seen, vec![0, 3, 1, 4, 2, 5]);
        // A partial range starting mid-way.
        let mut part = vec![];
        for_each_row(&c, 1, 2, |o| part.push(o[0]));
        assert_eq!(part, vec![1, 2]);
    }
}
