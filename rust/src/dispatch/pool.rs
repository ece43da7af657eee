//! The library's thread pool: its size, and the ways kernels hand it work
//! (`par_chunks`, `join`, `serial`).

use super::FpEnvGuard;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

struct Pool {
    threads: usize,
    pool: Arc<rayon::ThreadPool>,
}

static POOL: OnceLock<RwLock<Pool>> = OnceLock::new();

fn default_threads() -> usize {
    if let Ok(v) = std::env::var("ONEMODEL_THREADS") {
        match v.trim().parse::<usize>() {
            Ok(n) if n >= 1 => return n,
            _ => {
                eprintln!("onemodel: ignoring ONEMODEL_THREADS={v:?}: expected a positive integer")
            }
        }
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn build_pool(threads: usize) -> Arc<rayon::ThreadPool> {
    Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("onemodel-{i}"))
            .build()
            .expect("failed to start the onemodel thread pool"),
    )
}

fn pool_cell() -> &'static RwLock<Pool> {
    POOL.get_or_init(|| {
        let threads = default_threads();
        RwLock::new(Pool {
            threads,
            pool: build_pool(threads),
        })
    })
}

/// The number of threads kernels use.
pub fn threads() -> usize {
    pool_cell()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .threads
}

/// Change the number of kernel threads (at least 1). Bits never depend on it.
pub fn set_threads(n: usize) -> crate::error::Result<()> {
    if n == 0 {
        return Err(crate::error::Error::Value(
            "set_threads: the thread count must be at least 1, got 0".into(),
        ));
    }
    let mut guard = pool_cell().write().unwrap_or_else(|e| e.into_inner());
    if guard.threads != n {
        *guard = Pool {
            threads: n,
            pool: build_pool(n),
        };
    }
    Ok(())
}

fn current_pool() -> Arc<rayon::ThreadPool> {
    pool_cell()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .pool
        .clone()
}

/// Run `body(i)` for every chunk index `i < chunks`, on the library's pool,
/// each call with the IEEE floating-point environment (no flush-to-zero).
///
/// The caller decides the chunking from the shape alone; this function only
/// decides which thread runs which chunk, which cannot change any result
/// because chunks write disjoint outputs and never combine.
pub fn par_chunks<F>(chunks: usize, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    if chunks == 0 {
        return;
    }
    record_chunks(chunks);
    let pool = current_pool();
    if chunks == 1 || pool.current_num_threads() == 1 || SERIAL.with(|s| s.get()) {
        let _fp = FpEnvGuard::new();
        for i in 0..chunks {
            body(i);
        }
        return;
    }
    pool.install(|| {
        use rayon::prelude::*;
        (0..chunks)
            .into_par_iter()
            .for_each_init(FpEnvGuard::new, |_fp, i| body(i));
    });
}

/// [`par_chunks`] over `items` in runs of `per_run` (the last may be
/// shorter): `body(scratch, i)` for every `i < items`, in order within a
/// run, with one `scratch()` per run so that a buffer serves all its items.
/// The runs depend on the sizes only, so the bits do not depend on threads.
pub fn par_runs<S, M, F>(items: usize, per_run: usize, scratch: M, body: F)
where
    M: Fn() -> S + Sync + Send,
    F: Fn(&mut S, usize) + Sync + Send,
{
    par_chunks(items.div_ceil(per_run), |run| {
        let mut s = scratch();
        for i in run * per_run..((run + 1) * per_run).min(items) {
            body(&mut s, i);
        }
    });
}

/// How work was split since the last [`reset_chunk_stats`]: calls of
/// [`par_chunks`], the calls with more than one chunk, and the most chunks
/// one call had. The tests that claim "the same bits at 1, 3 and 8 threads"
/// read it to show that their shapes really split (one chunk would be a
/// serial run at every thread count). Relaxed atomics: a count, not a sync.
static CHUNK_CALLS: AtomicU64 = AtomicU64::new(0);
static SPLIT_CALLS: AtomicU64 = AtomicU64::new(0);
static MAX_CHUNKS: AtomicU64 = AtomicU64::new(0);

fn record_chunks(chunks: usize) {
    CHUNK_CALLS.fetch_add(1, Ordering::Relaxed);
    if chunks > 1 {
        SPLIT_CALLS.fetch_add(1, Ordering::Relaxed);
    }
    MAX_CHUNKS.fetch_max(chunks as u64, Ordering::Relaxed);
}

/// `(calls, calls with more than one chunk, most chunks in one call)`.
pub fn chunk_stats() -> (u64, u64, u64) {
    (
        CHUNK_CALLS.load(Ordering::Relaxed),
        SPLIT_CALLS.load(Ordering::Relaxed),
        MAX_CHUNKS.load(Ordering::Relaxed),
    )
}

pub fn reset_chunk_stats() {
    CHUNK_CALLS.store(0, Ordering::Relaxed);
    SPLIT_CALLS.store(0, Ordering::Relaxed);
    MAX_CHUNKS.store(0, Ordering::Relaxed);
}

/// Element steps below which [`par_chunks_sized`] keeps a kernel's chunks on
/// the calling thread: waking the pool and joining it costs some 10–30 µs
/// on the 2-vCPU development VM (docs/performance.md, "Threads never
/// hurt"), about what 2^15 element steps of a row kernel take on one core,
/// so below this a second thread cannot win back its hand-off.
pub const INLINE_WORK: usize = 1 << 15;

/// [`par_chunks`] for a kernel that knows its total work (`work` element
/// steps, a function of the shape): below [`INLINE_WORK`] every chunk runs
/// on the calling thread. The chunks, and so the bits, are the same either
/// way; only which thread runs them changes.
pub fn par_chunks_sized<F>(chunks: usize, work: usize, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    if work < INLINE_WORK {
        serial(|| par_chunks(chunks, body))
    } else {
        par_chunks(chunks, body)
    }
}

/// Run `a` and `b`, each with the IEEE floating-point environment, on two
/// threads of the library's pool when it has more than one (else, or inside
/// [`serial`], `a` then `b` on the calling thread). For independent jobs
/// that each write their own outputs, such as the two directions of a
/// recurrent layer: which thread runs which cannot change a bit. Their own
/// [`par_chunks`] calls still spread over the pool.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let pool = current_pool();
    if pool.current_num_threads() == 1 || SERIAL.with(|s| s.get()) {
        return (with_ieee(a), with_ieee(b));
    }
    pool.install(|| rayon::join(|| with_ieee(a), || with_ieee(b)))
}

thread_local! {
    /// Set by [`serial`]: this thread's `par_chunks` calls run inline.
    static SERIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `body` with every [`par_chunks`] it makes on the calling thread.
/// For products too small to be worth waking the pool for (one recurrent
/// step: a few tens of microseconds, of which a thread hand-off would take
/// a good part). The chunks and their order of writing are the same, so the
/// results are the same bits.
pub fn serial<R>(body: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            SERIAL.with(|s| s.set(self.0));
        }
    }
    let _reset = Reset(SERIAL.with(|s| s.replace(true)));
    body()
}

/// Run `body` on the calling thread with the IEEE floating-point environment.
pub fn with_ieee<R>(body: impl FnOnce() -> R) -> R {
    let _fp = FpEnvGuard::new();
    body()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn serial_runs_every_chunk_on_the_calling_thread() {
        let me = std::thread::current().id();
        let seen = std::sync::Mutex::new(Vec::new());
        serial(|| {
            serial(|| {});
            // Still serial after a nested call returns.
            par_chunks(64, |i| {
                seen.lock().unwrap().push((i, std::thread::current().id()))
            });
        });
        let seen = seen.into_inner().unwrap();
        assert_eq!(
            seen.iter().map(|s| s.0).collect::<Vec<_>>(),
            (0..64).collect::<Vec<_>>()
        );
        assert!(seen.iter().all(|s| s.1 == me));
        assert!(!SERIAL.with(|s| s.get()));
    }

    #[test]
    fn join_runs_both_and_serial_keeps_them_in_order_on_this_thread() {
        let (a, b) = join(|| (0..1000u64).sum::<u64>(), || "b");
        assert_eq!((a, b), (499_500, "b"));
        let me = std::thread::current().id();
        let order = std::sync::Mutex::new(Vec::new());
        serial(|| {
            join(
                || {
                    order
                        .lock()
                        .unwrap()
                        .push(('a', std::thread::current().id()))
                },
                || {
                    order
                        .lock()
                        .unwrap()
                        .push(('b', std::thread::current().id()))
                },
            )
        });
        assert_eq!(order.into_inner().unwrap(), vec![('a', me), ('b', me)]);
    }

    #[test]
    fn par_chunks_visits_every_chunk_once() {
        use std::sync::atomic::AtomicUsize;
        let hits: Vec<AtomicUsize> = (0..37).map(|_| AtomicUsize::new(0)).collect();
        par_chunks(37, |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }
}
