//! Pooled storage: 64-byte-aligned buffers served from size-class free lists.
//!
//! Every tensor buffer and every kernel scratch comes from here. A request is
//! rounded up to its size class; a free list per class holds buffers that
//! were returned, so a training step that repeats the same shapes stops
//! touching the system allocator after its first iteration (and stops paying
//! page faults for memory the system would otherwise take back).
//!
//! Size classes: 64 bytes, then every power of two up to 256 bytes, then four
//! classes per octave (2^e · {5/4, 6/4, 7/4, 8/4}), all multiples of 64 bytes.
//! The waste is therefore below 25% of the request.
//!
//! A [`Buffer`] owns its memory; dropping it returns the memory to its class's
//! free list (it is never given back to the system unless [`trim`] is
//! called). The pool is a process-wide set of mutex-protected free lists, so
//! buffers may be allocated and dropped on any thread.

use crate::error::{Error, Result};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Alignment of every buffer: one cache line, and one AVX-512 register.
pub const ALIGN: usize = 64;

/// Number of size classes: enough for every request up to [`MAX_BYTES`].
const CLASSES: usize = 4 * 64;

/// The largest request the pool serves: `isize::MAX` bytes, the most any
/// Rust allocation may hold (its class's capacity still fits a `usize`).
pub const MAX_BYTES: usize = isize::MAX as usize;

/// The capacity in bytes of size class `class`.
fn class_bytes(class: usize) -> usize {
    if class < 3 {
        64 << class // 64, 128, 256
    } else {
        // class 3 → 320 = 256·5/4; each octave has four classes.
        let octave = (class - 3) / 4 + 8; // 2^8 = 256
        let quarter = (class - 3) % 4 + 5; // 5, 6, 7, 8 quarters
        (1usize << (octave - 2)) * quarter
    }
}

/// The smallest class whose capacity holds `bytes` (> 0).
fn class_of(bytes: usize) -> usize {
    if bytes <= 256 {
        return match bytes {
            0..=64 => 0,
            65..=128 => 1,
            _ => 2,
        };
    }
    // Octave e with 2^e < bytes <= 2^(e+1); quarters of 2^e.
    let e = (usize::BITS - 1 - (bytes - 1).leading_zeros()) as usize; // floor(log2(bytes-1))
    let quarter = 1usize << (e - 2);
    let q = bytes.div_ceil(quarter); // 5..=8
    3 + (e - 8) * 4 + (q - 5)
}

struct Pool {
    free: Vec<Mutex<Vec<usize>>>,
    native_allocations: AtomicU64,
    outstanding_bytes: AtomicU64,
    pooled_bytes: AtomicU64,
    requests: AtomicU64,
}

fn pool() -> &'static Pool {
    static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| Pool {
        free: (0..CLASSES).map(|_| Mutex::new(Vec::new())).collect(),
        native_allocations: AtomicU64::new(0),
        outstanding_bytes: AtomicU64::new(0),
        pooled_bytes: AtomicU64::new(0),
        requests: AtomicU64::new(0),
    })
}

/// Counters of the pool, for tests and diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Buffers obtained from the system allocator since the process started.
    pub native_allocations: u64,
    /// Capacity bytes of buffers currently owned by someone.
    pub outstanding_bytes: u64,
    /// Capacity bytes sitting in the free lists, ready for reuse.
    pub pooled_bytes: u64,
    /// Buffer requests served (from a free list or the system).
    pub requests: u64,
}

pub fn stats() -> PoolStats {
    let p = pool();
    PoolStats {
        native_allocations: p.native_allocations.load(Ordering::Relaxed),
        outstanding_bytes: p.outstanding_bytes.load(Ordering::Relaxed),
        pooled_bytes: p.pooled_bytes.load(Ordering::Relaxed),
        requests: p.requests.load(Ordering::Relaxed),
    }
}

/// Give every pooled (free) buffer back to the system. Returns the bytes freed.
pub fn trim() -> u64 {
    let p = pool();
    let mut freed = 0u64;
    for (class, list) in p.free.iter().enumerate() {
        let mut list = list.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = class_bytes(class);
        for addr in list.drain(..) {
            // SAFETY: every address in a free list came from `alloc` with this
            // class's layout and is owned by the list alone.
            unsafe {
                dealloc(
                    addr as *mut u8,
                    Layout::from_size_align_unchecked(bytes, ALIGN),
                )
            };
            freed += bytes as u64;
        }
    }
    p.pooled_bytes.fetch_sub(freed, Ordering::Relaxed);
    freed
}

/// The payload of the panic that a refused scratch allocation raises
/// ([`Buffer::new`]): the memory error, to become `MemoryError` where the
/// kernel was called. A panic because the kernels allocate scratch inside
/// parallel loops that return nothing; unwinding out of them is what carries
/// the refusal back to the caller's thread (rayon resumes a worker's panic
/// there), dropping every buffer on the way.
#[derive(Debug)]
pub struct ScratchRefused(pub Error);

fn refuse_scratch(e: Error) -> ! {
    // The default hook would print "thread panicked at ..." for what is an
    // ordinary MemoryError: skip it for this payload, once per process, and
    // keep whatever hook was installed for every other panic.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<ScratchRefused>() {
                previous(info)
            }
        }));
    });
    std::panic::panic_any(ScratchRefused(e))
}

/// The memory error of a refused request of `bytes` bytes.
pub(crate) fn refused_bytes(bytes: usize) -> Error {
    Error::Memory(format!(
        "cannot allocate {bytes} bytes ({:.1} GiB): the system refused the memory",
        bytes as f64 / (1u64 << 30) as f64
    ))
}

/// `n` copies of `fill` in a `Vec`, for kernel scratch that is not a pool
/// [`Buffer`] (tables, per-row temporaries, index lists).
///
/// `vec![fill; n]` aborts the whole process through `handle_alloc_error`
/// when the allocator refuses; this asks with `try_reserve_exact` instead
/// and, on a refusal (or a byte size past `isize::MAX`), unwinds with the
/// same typed [`ScratchRefused`] payload as [`Buffer::new`], which
/// `py::kernel::detach` turns into `MemoryError`. Compute `n` with
/// [`scratch_elems`] (or other checked arithmetic) so that a wrapped size
/// cannot ask for a short table.
pub fn scratch_vec<T: Clone>(n: usize, fill: T) -> Vec<T> {
    let bytes = n.checked_mul(std::mem::size_of::<T>());
    let refused = |bytes: Option<usize>| -> ! {
        refuse_scratch(match bytes {
            Some(b) => refused_bytes(b),
            None => Error::Memory(format!(
                "cannot allocate {n} elements of {} bytes: the byte size overflows",
                std::mem::size_of::<T>()
            )),
        })
    };
    #[cfg(test)]
    if bytes.is_some_and(|b| b >= refuse_hook::limit()) {
        refused(bytes);
    }
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        refused(bytes);
    }
    v.resize(n, fill);
    v
}

/// The product of `factors`, the element count of a scratch table; an
/// overflow refuses the scratch as [`scratch_vec`] does (`MemoryError`:
/// no machine holds that many elements).
pub fn scratch_elems(factors: &[usize]) -> usize {
    factors
        .iter()
        .try_fold(1usize, |acc, &f| acc.checked_mul(f))
        .unwrap_or_else(|| {
            refuse_scratch(Error::Memory(format!(
                "cannot allocate scratch of {factors:?} elements: the size overflows"
            )))
        })
}

/// Tests only: make [`scratch_vec`] and [`Buffer::new`] refuse every request
/// of at least a given number of bytes on the calling thread, so that a test
/// sees a kernel's refusal without exhausting the machine.
#[cfg(test)]
pub mod refuse_hook {
    use std::cell::Cell;

    thread_local! {
        static LIMIT: Cell<usize> = const { Cell::new(usize::MAX) };
    }

    pub(super) fn limit() -> usize {
        LIMIT.with(|l| l.get())
    }

    /// Run `f` with requests of `bytes` or more refused on this thread.
    pub fn with_limit<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
        struct Restore(usize);
        impl Drop for Restore {
            fn drop(&mut self) {
                LIMIT.with(|l| l.set(self.0));
            }
        }
        let _restore = Restore(LIMIT.with(|l| l.replace(bytes)));
        f()
    }
}

/// A 64-byte-aligned block of memory from the pool. Its contents are
/// unspecified when it comes from a free list (use [`Buffer::zeroed`] for
/// zeros), but always initialized: the pool zeroes memory when it first
/// takes it from the system. Dropping it returns it to the pool.
pub struct Buffer {
    ptr: NonNull<u8>,
    /// Requested length in bytes (the capacity is the class's size).
    len: usize,
    /// Size class, or `usize::MAX` for an empty buffer that owns no memory.
    class: usize,
}

// SAFETY: a Buffer uniquely owns its memory (like a Box<[u8]>); it may be sent
// to and shared between threads, and all access goes through raw pointers
// whose aliasing the kernels manage.
unsafe impl Send for Buffer {}
// SAFETY: see Send; shared references only hand out raw pointers.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A buffer of at least `bytes` bytes with unspecified but initialized
    /// contents (zeros, or what its previous user wrote).
    ///
    /// # Panics
    /// When the system cannot supply the memory (kernel scratch, allocated
    /// deep inside a kernel, often on a worker thread): the panic's payload
    /// is a [`ScratchRefused`], which the bindings turn into `MemoryError`
    /// (`py::kernel::detach`) instead of a `PanicException`. Tensor storage
    /// uses [`Buffer::try_new`], which reports the failure as a value.
    pub fn new(bytes: usize) -> Buffer {
        #[cfg(test)]
        if bytes >= refuse_hook::limit() {
            refuse_scratch(Error::Memory(format!("test hook: {bytes} bytes refused")));
        }
        Buffer::try_new(bytes).unwrap_or_else(|e| refuse_scratch(e))
    }

    /// A buffer of at least `bytes` bytes, or [`Error::Memory`] when the
    /// system cannot supply it (a request past `isize::MAX` bytes, or one
    /// the allocator refuses). Never aborts the process: the failure comes
    /// back before anything was written.
    pub fn try_new(bytes: usize) -> Result<Buffer> {
        let p = pool();
        p.requests.fetch_add(1, Ordering::Relaxed);
        if bytes == 0 {
            return Ok(Buffer {
                ptr: NonNull::<u8>::dangling_aligned(),
                len: 0,
                class: usize::MAX,
            });
        }
        let refuse = || refused_bytes(bytes);
        if bytes > MAX_BYTES {
            return Err(refuse());
        }
        let class = class_of(bytes);
        let cap = class_bytes(class);
        let reused = p.free[class]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let ptr = match reused {
            Some(addr) => {
                p.pooled_bytes.fetch_sub(cap as u64, Ordering::Relaxed);
                // SAFETY: free-list addresses are non-null allocations.
                unsafe { NonNull::new_unchecked(addr as *mut u8) }
            }
            None => {
                let layout = Layout::from_size_align(cap, ALIGN).map_err(|_| refuse())?;
                // Zeroed once, when the pool first takes the memory from the
                // system: from then on every byte of every pooled buffer is
                // initialized (its last user's values or these zeros), which
                // is what makes `as_f32_mut` sound. The pool reuses memory, so
                // this costs one pass per allocation of new memory, not per
                // buffer handed out.
                // SAFETY: the layout has a non-zero size.
                let raw = unsafe { alloc_zeroed(layout) };
                // A null pointer is the allocator's refusal: reported, not
                // `handle_alloc_error` (which aborts the process).
                let ptr = NonNull::new(raw).ok_or_else(refuse)?;
                p.native_allocations.fetch_add(1, Ordering::Relaxed);
                ptr
            }
        };
        p.outstanding_bytes.fetch_add(cap as u64, Ordering::Relaxed);
        Ok(Buffer {
            ptr,
            len: bytes,
            class,
        })
    }

    /// [`Buffer::try_new`] filled with zero bytes.
    pub fn try_zeroed(bytes: usize) -> Result<Buffer> {
        let b = Buffer::try_new(bytes)?;
        // SAFETY: the buffer is valid for `len` bytes of writes.
        unsafe { std::ptr::write_bytes(b.ptr.as_ptr(), 0, b.len) };
        Ok(b)
    }

    /// A buffer of `bytes` zero bytes (panics as [`Buffer::new`]).
    pub fn zeroed(bytes: usize) -> Buffer {
        Buffer::try_zeroed(bytes).unwrap_or_else(|e| refuse_scratch(e))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Capacity in bytes (the size class).
    pub fn capacity(&self) -> usize {
        if self.class == usize::MAX {
            0
        } else {
            class_bytes(self.class)
        }
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The buffer's address as a [`Ptr`](crate::ptr::Ptr) over its `len / 4`
    /// f32, for kernels that hand scratch to parallel chunks: debug builds
    /// check every access against the buffer's real size.
    pub fn f32_ptr(&self) -> crate::ptr::Ptr<*mut f32> {
        crate::ptr::Ptr::new(self.ptr.as_ptr() as *mut f32, self.len / 4)
    }

    /// The buffer as `len / 4` f32 (for scratch use by kernels).
    pub fn as_f32_mut(&mut self) -> &mut [f32] {
        // SAFETY: the memory is 64-byte aligned, owned uniquely by `self`
        // (borrowed mutably), valid for `len` bytes and initialized (pool
        // memory is zeroed when first allocated); any bit pattern is a valid
        // f32.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr() as *mut f32, self.len / 4) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.class == usize::MAX {
            return;
        }
        let p = pool();
        let cap = class_bytes(self.class) as u64;
        p.outstanding_bytes.fetch_sub(cap, Ordering::Relaxed);
        p.pooled_bytes.fetch_add(cap, Ordering::Relaxed);
        p.free[self.class]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.ptr.as_ptr() as usize);
    }
}

trait DanglingAligned {
    fn dangling_aligned() -> Self;
}

impl DanglingAligned for NonNull<u8> {
    fn dangling_aligned() -> Self {
        // An aligned, non-null address that is never dereferenced (len 0).
        NonNull::new(ALIGN as *mut u8).expect("non-null")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_requests_with_little_waste() {
        let mut prev = 0;
        for class in 0..60 {
            let b = class_bytes(class);
            assert!(b > prev, "classes increase");
            assert_eq!(b % 64, 0, "class {class} = {b} is a multiple of 64");
            assert_eq!(class_of(b), class, "a class's capacity maps to itself");
            assert_eq!(
                class_of(prev + 1),
                class,
                "the byte after the previous class maps here"
            );
            prev = b;
        }
        for bytes in [
            1usize,
            63,
            64,
            65,
            255,
            256,
            257,
            1000,
            4096,
            4097,
            1 << 20,
            (1 << 20) + 1,
            123_456_789,
        ] {
            let c = class_of(bytes);
            let cap = class_bytes(c);
            assert!(cap >= bytes);
            if bytes > 256 {
                assert!(
                    (cap as f64) < bytes as f64 * 1.25 + 64.0,
                    "{bytes} -> {cap}"
                );
            }
        }
    }

    #[test]
    fn buffers_are_aligned_and_reused() {
        let a = Buffer::new(1000);
        assert_eq!(a.as_ptr() as usize % ALIGN, 0);
        let addr = a.as_ptr() as usize;
        drop(a);
        // Another thread may take it between drop and new in a parallel test
        // run; retry a few times, a reuse proves the free list works.
        let mut reused = false;
        for _ in 0..8 {
            let b = Buffer::new(1000);
            if b.as_ptr() as usize == addr {
                reused = true;
                break;
            }
            std::mem::forget(b);
        }
        assert!(reused);
    }

    #[test]
    fn impossible_requests_are_errors_not_aborts() {
        // Past isize::MAX: refused before the allocator is asked.
        assert!(matches!(Buffer::try_new(usize::MAX), Err(Error::Memory(_))));
        assert!(matches!(Buffer::try_new(MAX_BYTES), Err(Error::Memory(_))));
        // 4 EiB fits a Layout but no x86-64 or aarch64 address space (47-48
        // bits of user addresses): the allocator returns null.
        assert!(matches!(Buffer::try_zeroed(1 << 62), Err(Error::Memory(_))));
        // The pool still works afterwards.
        assert_eq!(Buffer::try_new(100).unwrap().len(), 100);
        // Scratch (Buffer::new) refuses with a typed panic, caught by the
        // bindings; what it carries is the memory error.
        let p = match std::panic::catch_unwind(|| Buffer::new(1 << 62)) {
            Ok(_) => panic!("a 4 EiB scratch buffer was granted"),
            Err(p) => p,
        };
        let refused = p
            .downcast_ref::<ScratchRefused>()
            .expect("a ScratchRefused payload");
        assert!(matches!(refused.0, Error::Memory(_)));
    }

    fn refusal<R>(f: impl FnOnce() -> R + std::panic::UnwindSafe) -> Error {
        match std::panic::catch_unwind(f) {
            Ok(_) => panic!("the scratch was granted"),
            Err(p) => match p.downcast::<ScratchRefused>() {
                Ok(r) => r.0,
                Err(_) => panic!("a panic without a ScratchRefused payload"),
            },
        }
    }

    #[test]
    fn scratch_vecs_refuse_instead_of_aborting() {
        assert_eq!(scratch_vec(3, 1.5f32), vec![1.5f32; 3]);
        assert!(scratch_vec::<f64>(0, 0.0).is_empty());
        // The byte size overflows usize; then one past isize::MAX; then a
        // size the allocator refuses (no 4 EiB address space).
        assert!(matches!(
            refusal(|| scratch_vec(usize::MAX / 2, 0f32)),
            Error::Memory(_)
        ));
        assert!(matches!(
            refusal(|| scratch_vec(isize::MAX as usize / 4 + 1, 0f32)),
            Error::Memory(_)
        ));
        assert!(matches!(
            refusal(|| scratch_vec(1usize << 60, 0f32)),
            Error::Memory(_)
        ));
        assert!(matches!(
            refusal(|| scratch_elems(&[1 << 40, 1 << 40])),
            Error::Memory(_)
        ));
        assert_eq!(scratch_elems(&[3, 4, 5]), 60);
        assert_eq!(scratch_elems(&[]), 1);
    }

    #[test]
    fn the_test_hook_refuses_on_its_thread_only() {
        let e = refuse_hook::with_limit(64, || refusal(|| scratch_vec(16, 0f32)));
        assert!(matches!(e, Error::Memory(_)));
        refuse_hook::with_limit(64, || {
            assert_eq!(scratch_vec(15, 0f32).len(), 15);
            assert!(std::panic::catch_unwind(|| Buffer::new(64)).is_err());
        });
        // Restored afterwards.
        assert_eq!(scratch_vec(1 << 10, 0u8).len(), 1 << 10);
    }

    #[test]
    fn zero_sized_buffers_own_nothing() {
        let b = Buffer::new(0);
        assert_eq!(b.capacity(), 0);
        assert!(b.is_empty());
    }

    #[test]
    fn zeroed_is_zero() {
        let mut b = Buffer::new(4096);
        b.as_f32_mut().fill(7.0);
        drop(b);
        let mut z = Buffer::zeroed(4096);
        assert!(z.as_f32_mut().iter().all(|&x| x == 0.0));
    }
}
