//! The process's Rust heap, with every allocation of [`FROM_BYTES`] or more
//! starting on a cache line.
//!
//! Tensor buffers come from the pool (`storage`), 64-byte aligned. Kernel
//! scratch and the recognizer's buffers are plain `Vec<f32>`s, and glibc
//! starts a large block 16 bytes past a 64-byte boundary (every block of
//! 160 KB or more in a probe; mixed offsets below). A kernel's 32-byte
//! loads from such a row then cross a cache line every other load, and a
//! line-crossing load costs two: on the recognizer's dot16 products (Zen 3,
//! AVX2) that was 3–29 % of the product's time (docs/performance.md,
//! "2026-12-06, evening: buffers on a cache line"). An AVX-512 load crosses
//! a line at any offset that is not a multiple of 64.
//!
//! Alignment changes no arithmetic: which element a kernel reads, and the
//! order of every sum, depend on the shape only.
//!
//! The wrapper asks the system allocator for the same size with the
//! alignment raised to 64 bytes; smaller allocations (strings, boxes, small
//! tables) keep the system's fast path. The rule is a function of the
//! layout alone, so `dealloc` and `realloc` recompute it and always hand
//! the system the layout it allocated with.
//!
//! What it costs: there is no aligned `calloc`, so a zeroed allocation of
//! 1 KiB or more (`vec![0.0; n]`) is zeroed by a write instead of arriving
//! as the kernel's untouched zero pages, and a `Vec` growing past 1 KiB is
//! moved by a copy instead of `realloc`. The peak memory of the two
//! benchmarks measured did not move (the CRNN step 132 / 140 MiB at 1 / 2
//! threads, the recognizer 212 MiB).

use std::alloc::{GlobalAlloc, Layout, System};

/// The alignment of a large allocation: one cache line, one AVX-512
/// register.
pub const LINE: usize = 64;

/// Allocations of this many bytes (256 floats) or more are raised to
/// [`LINE`]; smaller ones (strings, boxes, shapes) keep malloc's fast path.
pub const FROM_BYTES: usize = 1024;

/// The layout the system allocator is given for `layout`; `None` when the
/// raised layout does not exist (a size within 64 bytes of `isize::MAX`,
/// which no allocator could serve).
#[inline]
fn raised(layout: Layout) -> Option<Layout> {
    if layout.size() >= FROM_BYTES && layout.align() < LINE {
        Layout::from_size_align(layout.size(), LINE).ok()
    } else {
        Some(layout)
    }
}

/// [`System`] with allocations of [`FROM_BYTES`] or more aligned to
/// [`LINE`] (installed as the global allocator in `lib.rs`).
pub struct LineAlloc;

// SAFETY: every method forwards to `System` with the layout `raised` gives,
// which satisfies the caller's layout (same size, an alignment at least as
// large); `dealloc` and `realloc` recompute that layout from the caller's,
// which `GlobalAlloc` requires to be the one the block was allocated with.
unsafe impl GlobalAlloc for LineAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match raised(layout) {
            // SAFETY: the layout has a non-zero size (the caller's has).
            Some(l) => unsafe { System.alloc(l) },
            None => std::ptr::null_mut(),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match raised(layout) {
            // SAFETY: as `alloc`.
            Some(l) => unsafe { System.alloc_zeroed(l) },
            None => std::ptr::null_mut(),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // A layout that cannot be raised was never allocated (alloc gave
        // null for it), so `raised` is `Some` here.
        if let Some(l) = raised(layout) {
            // SAFETY: `ptr` was allocated by System with `l`.
            unsafe { System.dealloc(ptr, l) }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        let (old, new) = (raised(layout), raised(new_layout));
        if old == Some(layout) && new == Some(new_layout) {
            // Both below the bound (or already aligned): the system's
            // realloc keeps the alignment.
            // SAFETY: `ptr` was allocated by System with `layout`.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: a fresh block for the new layout, the old contents
        // copied (the smaller of the two sizes), the old block freed with
        // the layout it was allocated with.
        unsafe {
            let fresh = self.alloc(new_layout);
            if !fresh.is_null() {
                std::ptr::copy_nonoverlapping(ptr, fresh, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            fresh
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_vectors_start_on_a_cache_line() {
        // Sizes across glibc's heap and mmap ranges, kept alive together so
        // that each comes from a different place.
        let sizes = [256usize, 257, 1000, 4096, 40_000, 1 << 20, 3 << 20];
        let vs: Vec<Vec<f32>> = sizes.iter().map(|&n| vec![1.0f32; n]).collect();
        for v in &vs {
            assert_eq!(v.as_ptr() as usize % LINE, 0, "{} floats", v.len());
        }
    }

    #[test]
    fn growing_and_shrinking_keeps_contents_and_alignment() {
        // From below the bound to above it, and back (realloc's two paths).
        let mut v: Vec<u32> = (0..10).collect();
        for n in [100usize, 300, 5000, 70_000] {
            v.extend(v.len() as u32..n as u32);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
            if v.capacity() * 4 >= FROM_BYTES {
                assert_eq!(v.as_ptr() as usize % LINE, 0, "{n} elements");
            }
        }
        v.truncate(20);
        v.shrink_to_fit();
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
    }

    #[test]
    fn layouts_at_the_limit_are_refused_not_misaligned() {
        let huge = Layout::from_size_align(isize::MAX as usize - 8, 4).unwrap();
        assert_eq!(raised(huge), None);
        // SAFETY: a non-zero size; a null result is the expected refusal.
        let p = unsafe { LineAlloc.alloc(huge) };
        assert!(p.is_null());
        let small = Layout::from_size_align(100, 4).unwrap();
        assert_eq!(raised(small), Some(small));
    }
}
