//! Strided copies and fills, for 1-, 4- and 8-byte elements.

use crate::layout::{coalesce, for_each_row, row_count};

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
    for_each_row(&c, 0, row_count(&c), |o| {
        // SAFETY: the caller guarantees every reached offset is valid.
        unsafe {
            match elem {
                4 => {
                    let (d, s) = (dst as *mut u32, src as *const u32);
                    if ds == 1 && ss == 1 {
                        std::ptr::copy(s.offset(o[1]), d.offset(o[0]), inner);
                    } else if ds == 1 && ss == 0 && !overlaps(s.offset(o[1]), d.offset(o[0]), inner)
                    {
                        // A broadcast row (sum's and mean's backward): one
                        // value, read once, stored over a contiguous run.
                        let v = *s.offset(o[1]);
                        std::slice::from_raw_parts_mut(d.offset(o[0]), inner).fill(v);
                    } else {
                        for j in 0..inner as isize {
                            *d.offset(o[0] + j * ds) = *s.offset(o[1] + j * ss);
                        }
                    }
                }
                8 => {
                    let (d, s) = (dst as *mut u64, src as *const u64);
                    for j in 0..inner as isize {
                        *d.offset(o[0] + j * ds) = *s.offset(o[1] + j * ss);
                    }
                }
                1 => {
                    if ds == 1 && ss == 1 {
                        std::ptr::copy(src.offset(o[1]), dst.offset(o[0]), inner);
                    } else {
                        for j in 0..inner as isize {
                            *dst.offset(o[0] + j * ds) = *src.offset(o[1] + j * ss);
                        }
                    }
                }
                _ => unreachable!("element size {elem}"),
            }
        }
    });
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
    let ds = *c.strides[0].last().unwrap();
    for_each_row(&c, 0, row_count(&c), |o| {
        // SAFETY: the caller guarantees every reached offset is valid.
        unsafe {
            for j in 0..inner as isize {
                match elem {
                    4 => *(dst as *mut u32).offset(o[0] + j * ds) = bits as u32,
                    1 => *dst.offset(o[0] + j * ds) = bits as u8,
                    _ => *(dst as *mut u64).offset(o[0] + j * ds) = bits,
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
}
