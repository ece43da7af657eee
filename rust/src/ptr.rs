//! [`Ptr`]: a raw pointer that the closures of the thread pool may capture.
//!
//! Raw pointers are neither `Send` nor `Sync`, so a kernel that hands
//! chunks of one buffer to [`crate::dispatch::par_chunks`] needs a way to
//! carry the pointer into them. `Ptr` is that way, with its contract written
//! once here instead of at every cast to `usize` (after matrixmultiply's
//! `Ptr`).
//!
//! # Contract
//! Making, copying and offsetting a `Ptr` is safe; every read or write
//! through one is `unsafe`, and its caller must make sure that
//! 1. the memory stays valid for as long as any copy is used: the kernel
//!    that made the `Ptr` owns or borrows the buffer until its parallel
//!    region returns (`par_chunks` and `join` return only when every chunk
//!    has run), and
//! 2. while chunks run at once, the elements one chunk writes are read or
//!    written by no other chunk (chunks write disjoint outputs; shared
//!    inputs are only read).
//!
//! A `Ptr` knows how many elements it may reach; debug builds (and so
//! `cargo test`) assert every access against that extent, release builds
//! carry only the address.

/// A `*const T` or `*mut T` that may cross threads (see the module docs).
#[derive(Debug)]
pub struct Ptr<P> {
    p: P,
    /// Elements valid from `p` on (checked in debug builds only).
    #[cfg(debug_assertions)]
    len: usize,
}

impl<P: Copy> Clone for Ptr<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Copy> Copy for Ptr<P> {}

// SAFETY: a Ptr only carries an address; every access through it is unsafe
// and bound by the module's contract (live memory, disjoint writes), which
// is exactly what sharing the address between threads requires.
unsafe impl<T> Send for Ptr<*const T> {}
// SAFETY: as Send.
unsafe impl<T> Sync for Ptr<*const T> {}
// SAFETY: as Send.
unsafe impl<T> Send for Ptr<*mut T> {}
// SAFETY: as Send.
unsafe impl<T> Sync for Ptr<*mut T> {}

/// The two raw pointer types a [`Ptr`] may carry.
pub trait Raw: Copy {
    fn wrapping_add(self, n: usize) -> Self;
}
impl<T> Raw for *const T {
    fn wrapping_add(self, n: usize) -> Self {
        <*const T>::wrapping_add(self, n)
    }
}
impl<T> Raw for *mut T {
    fn wrapping_add(self, n: usize) -> Self {
        <*mut T>::wrapping_add(self, n)
    }
}

impl<P: Raw> Ptr<P> {
    /// `p`, valid for `len` elements.
    #[inline(always)]
    pub fn new(p: P, len: usize) -> Self {
        #[cfg(not(debug_assertions))]
        let _ = len;
        Ptr {
            p,
            #[cfg(debug_assertions)]
            len,
        }
    }

    #[inline(always)]
    pub fn get(self) -> P {
        self.p
    }

    /// The pointer `n` elements on (wrapping: forming it is always safe),
    /// valid for the rest of the extent.
    #[inline(always)]
    pub fn offset(self, n: usize) -> Self {
        #[cfg(debug_assertions)]
        debug_assert!(
            n <= self.len,
            "Ptr::offset: {n} past an extent of {}",
            self.len
        );
        Ptr {
            p: self.p.wrapping_add(n),
            #[cfg(debug_assertions)]
            len: self.len - n,
        }
    }

    /// Debug builds: elements `start..start + len` lie inside the extent.
    #[inline(always)]
    fn check(self, start: usize, len: usize) {
        #[cfg(debug_assertions)]
        debug_assert!(
            start.checked_add(len).is_some_and(|end| end <= self.len),
            "Ptr: elements {start}..{start}+{len} outside an extent of {}",
            self.len
        );
        #[cfg(not(debug_assertions))]
        let _ = (self, start, len);
    }
}

impl<P: Raw> Ptr<P> {
    /// The raw pointer to element `start`, for an access of `len` elements
    /// from there made through the raw pointer (`std::ptr::copy`, a vector
    /// load, a GEMM operand): debug builds assert that those elements lie
    /// inside the extent, release builds compute the address only.
    #[inline(always)]
    pub fn range(self, start: usize, len: usize) -> P {
        self.check(start, len);
        self.p.wrapping_add(start)
    }
}

macro_rules! read_methods {
    () => {
        /// Element `i`.
        ///
        /// # Safety
        /// Element `i` must be valid to read under the module's contract.
        #[inline(always)]
        pub unsafe fn read(self, i: usize) -> T
        where
            T: Copy,
        {
            self.check(i, 1);
            // SAFETY: guaranteed by the caller.
            unsafe { *self.p.add(i) }
        }

        /// `len` elements from element `start`.
        ///
        /// # Safety
        /// Those elements must be valid to read, and written by nothing
        /// while the slice lives.
        #[inline(always)]
        pub unsafe fn slice<'a>(self, start: usize, len: usize) -> &'a [T] {
            self.check(start, len);
            // SAFETY: guaranteed by the caller.
            unsafe { std::slice::from_raw_parts(self.p.add(start), len) }
        }
    };
}

impl<T> Ptr<*const T> {
    read_methods!();
}

impl<T> Ptr<*mut T> {
    read_methods!();

    /// The same address, read-only.
    #[inline(always)]
    pub fn as_const(self) -> Ptr<*const T> {
        Ptr {
            p: self.p as *const T,
            #[cfg(debug_assertions)]
            len: self.len,
        }
    }

    /// Store `v` at element `i`.
    ///
    /// # Safety
    /// Element `i` must be valid to write, and touched by no other chunk.
    #[inline(always)]
    pub unsafe fn write(self, i: usize, v: T) {
        self.check(i, 1);
        // SAFETY: guaranteed by the caller.
        unsafe { *self.p.add(i) = v }
    }

    /// `len` elements from element `start`, to write.
    ///
    /// # Safety
    /// Those elements must be valid to write and touched by nothing else
    /// while the slice lives.
    #[inline(always)]
    pub unsafe fn slice_mut<'a>(self, start: usize, len: usize) -> &'a mut [T] {
        self.check(start, len);
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts_mut(self.p.add(start), len) }
    }
}
