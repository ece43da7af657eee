//! Strided copies and fills, for 1-, 4- and 8-byte elements.

use crate::layout::{coalesce, for_each_row, row_count};
use crate::ptr::Ptr;

/// Copy `shape` elements from `src` (strides in elements, possibly 0 for
/// broadcast) to `dst`, element size `elem` (1, 4 or 8 bytes), in row-major
/// order.
///
/// # Safety
/// `src` and `dst` must be valid for every offset the strides reach; the
/// destination must not overlap the source except element-for-element.
pub unsafe fn copy_strided(
    shape: &[usize],
    src: *const u8,
    src_strides: &[isize],
    dst: *mut u8,
    dst_strides: &[isize],
    elem: usize,
) {
    if shape.contains(&0) {
        return;
    }
    let c = coalesce(shape, &[dst_strides, src_strides]);
    let inner = *c.shape.last().unwrap();
    let (ds, ss) = (*c.strides[0].last().unwrap(), *c.strides[1].last().unwrap());
    // What each view reaches, so that debug builds check every access of
    // the rows below against it (release builds carry only the address).
    let (dn, sn) = (reach(shape, dst_strides), reach(shape, src_strides));
    for_each_row(&c, 0, row_count(&c), |o| {
        let (od, os) = (o[0] as usize, o[1] as usize);
        // SAFETY: the caller guarantees every reached offset is valid; the
        // Ptr extents are the views' reach, so each access is also asserted
        // in debug builds.
        unsafe {
            match elem {
                4 => {
                    let (d, s) = (
                        Ptr::new(dst as *mut u32, dn),
                        Ptr::new(src as *const u32, sn),
                    );
                    if ds == 1 && ss == 1 {
                        std::ptr::copy(s.range(os, inner), d.range(od, inner), inner);
                    } else if ds == 1
                        && ss == 0
                        && !overlaps(s.range(os, 1), d.range(od, inner), inner)
                    {
                        // A broadcast row (sum's and mean's backward): one
                        // value, read once, stored over a contiguous run.
                        let v = s.read(os);
                        d.slice_mut(od, inner).fill(v);
                    } else {
                        strided_row(d.offset(od), ds, s.offset(os), ss, inner);
                    }
                }
                8 => {
                    let (d, s) = (
                        Ptr::new(dst as *mut u64, dn),
                        Ptr::new(src as *const u64, sn),
                    );
                    strided_row(d.offset(od), ds, s.offset(os), ss, inner);
                }
                1 => {
                    let (d, s) = (Ptr::new(dst, dn), Ptr::new(src, sn));
                    if ds == 1 && ss == 1 {
                        std::ptr::copy(s.range(os, inner), d.range(od, inner), inner);
                    } else {
                        strided_row(d.offset(od), ds, s.offset(os), ss, inner);
                    }
                }
                _ => unreachable!("element size {elem}"),
            }
        }
    });
}

/// Elements from the base that a view of `shape` and (non-negative)
/// `strides` reaches: its largest offset + 1 (0 for an empty view).
pub fn reach(shape: &[usize], strides: &[isize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().zip(strides).fold(1, |r, (&n, &st)| {
        debug_assert!(st >= 0, "reach: negative stride in {strides:?}");
        r + (n - 1) * st as usize
    })
}

/// `d[j·ds] = s[j·ss]` for j < n.
///
/// # Safety
/// Every element reached must be valid (asserted in debug builds).
#[inline(always)]
unsafe fn strided_row<T: Copy>(d: Ptr<*mut T>, ds: isize, s: Ptr<*const T>, ss: isize, n: usize) {
    let (ds, ss) = (ds as usize, ss as usize);
    for j in 0..n {
        // SAFETY: guaranteed by the caller.
        unsafe { d.write(j * ds, s.read(j * ss)) };
    }
}

/// Whether the element at `s` lies in the `n` elements from `d` (then a
/// broadcast source would be overwritten by the row it is copied to).
fn overlaps(s: *const u32, d: *mut u32, n: usize) -> bool {
    let (s, d) = (s as usize, d as usize);
    s >= d && s < d + 4 * n
}

/// Fill a strided destination with one 1-, 4- or 8-byte pattern.
///
/// # Safety
/// `dst` must be valid for every offset the strides reach.
pub unsafe fn fill_strided(
    shape: &[usize],
    dst: *mut u8,
    dst_strides: &[isize],
    bits: u64,
    elem: usize,
) {
    if shape.contains(&0) {
        return;
    }
    let c = coalesce(shape, &[dst_strides]);
    let inner = *c.shape.last().unwrap();
    let ds = *c.strides[0].last().unwrap() as usize;
    let dn = reach(shape, dst_strides);
    for_each_row(&c, 0, row_count(&c), |o| {
        let od = o[0] as usize;
        // SAFETY: the caller guarantees every reached offset is valid; the
        // extent is the view's reach (asserted in debug builds).
        unsafe {
            for j in 0..inner {
                match elem {
                    4 => Ptr::new(dst as *mut u32, dn).write(od + j * ds, bits as u32),
                    1 => Ptr::new(dst, dn).write(od + j * ds, bits as u8),
                    _ => Ptr::new(dst as *mut u64, dn).write(od + j * ds, bits),
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_copy() {
        let src: Vec<f32> = (0..6).map(|x| x as f32).collect(); // 2x3
        let mut dst = vec![0f32; 6]; // 3x2 contiguous
                                     // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            copy_strided(
                &[3, 2],
                src.as_ptr() as _,
                &[1, 3],
                dst.as_mut_ptr() as _,
                &[2, 1],
                4,
            );
        }
        assert_eq!(dst, vec![0., 3., 1., 4., 2., 5.]);
    }

    #[test]
    fn broadcast_fill_and_i64() {
        let src = [7i64, 9];
        let mut dst = [0i64; 6];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            copy_strided(
                &[3, 2],
                src.as_ptr() as _,
                &[0, 1],
                dst.as_mut_ptr() as _,
                &[2, 1],
                8,
            );
        }
        assert_eq!(dst, [7, 9, 7, 9, 7, 9]);
        // A 4-byte broadcast row keeps the source's exact bits (a NaN payload).
        let one = [f32::from_bits(0x7fa0_0001)];
        let mut row = [0f32; 37];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe {
            copy_strided(
                &[37],
                one.as_ptr() as _,
                &[0],
                row.as_mut_ptr() as _,
                &[1],
                4,
            )
        };
        assert!(row.iter().all(|v| v.to_bits() == 0x7fa0_0001));
        let mut f = [0f32; 4];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { fill_strided(&[2], f.as_mut_ptr() as _, &[2], 1.5f32.to_bits() as u64, 4) };
        assert_eq!(f, [1.5, 0., 1.5, 0.]);
    }

    #[test]
    fn one_byte_elements_copy_transpose_broadcast_and_fill() {
        let src: Vec<u8> = vec![1, 0, 0, 1, 1, 0]; // 2x3
        let mut dst = vec![9u8; 6]; // its transpose, 3x2
                                    // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { copy_strided(&[3, 2], src.as_ptr(), &[1, 3], dst.as_mut_ptr(), &[2, 1], 1) };
        assert_eq!(dst, vec![1, 1, 0, 1, 0, 0]);
        let mut row = vec![0u8; 5];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { copy_strided(&[5], src.as_ptr(), &[0], row.as_mut_ptr(), &[1], 1) };
        assert_eq!(row, vec![1; 5]);
        let mut f = vec![0u8; 5];
        // SAFETY: the test's buffers hold every element the call reaches.
        unsafe { fill_strided(&[3], f.as_mut_ptr(), &[2], 1, 1) };
        assert_eq!(f, vec![1, 0, 1, 0, 1]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "outside an extent of 5")]
    fn a_row_past_its_extent_is_caught_in_debug_builds() {
        let (src, mut dst) = ([1u32; 6], [0u32; 6]);
        // SAFETY: both buffers hold 6 elements; the extents given are one
        // short of the 6 the row reaches, which the debug check refuses
        // before the last access.
        unsafe {
            strided_row(
                Ptr::new(dst.as_mut_ptr(), 6),
                1,
                Ptr::new(src.as_ptr(), 5),
                1,
                6,
            )
        };
    }

    #[test]
    fn reach_is_the_largest_offset_plus_one() {
        assert_eq!(reach(&[3, 2], &[1, 3]), 6);
        assert_eq!(reach(&[3, 2], &[0, 1]), 2);
        assert_eq!(reach(&[4], &[2]), 7);
        assert_eq!(reach(&[], &[]), 1);
        assert_eq!(reach(&[2, 0], &[5, 1]), 0);
    }
}
