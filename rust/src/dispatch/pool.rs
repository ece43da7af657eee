//! The library's thread pool: its size, and the ways kernels hand it work
//! (`par_chunks`, `join`, `serial`).
//!
//! A kernel's calling thread is one of its threads: it starts on the first
//! chunk at once, and `threads - 1` helpers (a rayon pool) join in as they
//! wake, taking the chunks left ([`share`]). On a virtual machine waking a
//! sleeping thread takes tens of microseconds; a design where the caller
//! hands everything to the pool and sleeps until it is done pays that twice
//! per call, and made small steps slower at two threads than at one
//! (docs/performance.md, "The calling thread as one of the threads").

use super::FpEnvGuard;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};

struct Pool {
    threads: usize,
    /// The `threads - 1` helper threads (none at one thread): the thread
    /// that calls a kernel is always one of its `threads`.
    helpers: Option<Arc<rayon::ThreadPool>>,
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

fn new_pool(threads: usize) -> Pool {
    let helpers = (threads > 1).then(|| {
        Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .thread_name(|i| format!("onemodel-{}", i + 1))
                .build()
                .expect("failed to start the onemodel thread pool"),
        )
    });
    Pool { threads, helpers }
}

fn pool_cell() -> &'static RwLock<Pool> {
    POOL.get_or_init(|| RwLock::new(new_pool(default_threads())))
}

/// The number of threads kernels use (the calling thread included).
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
        *guard = new_pool(n);
    }
    Ok(())
}

/// The helper pool and how many helpers a call of `tasks` tasks may use
/// (`None`: run them all on the calling thread).
fn helpers_for(tasks: usize) -> Option<(Arc<rayon::ThreadPool>, usize)> {
    if tasks < 2 || SERIAL.with(|s| s.get()) {
        return None;
    }
    let guard = pool_cell().read().unwrap_or_else(|e| e.into_inner());
    let pool = guard.helpers.as_ref()?;
    Some((pool.clone(), (guard.threads - 1).min(tasks - 1)))
}

/// Run `body(i)` for every chunk index `i < chunks`, on the library's pool,
/// each call with the IEEE floating-point environment (no flush-to-zero).
///
/// The caller decides the chunking from the shape alone; this function only
/// decides which thread runs which chunk, which cannot change any result
/// because chunks write disjoint outputs and never combine.
///
/// The calling thread takes chunks from the first moment, and helpers join
/// in as they wake ([`share`]): a helper that wakes late finds the work
/// gone and costs nothing but its wake-up, so a parallel call is never much
/// slower than running its chunks inline.
pub fn par_chunks<F>(chunks: usize, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    if chunks == 0 {
        return;
    }
    if !SERIAL.with(|s| s.get()) {
        record_chunks(chunks);
    }
    match helpers_for(chunks) {
        Some((pool, helpers)) => share(&pool, helpers, chunks, &body),
        None => {
            let _fp = FpEnvGuard::new();
            for i in 0..chunks {
                body(i);
            }
        }
    }
}

/// The chunk body, its lifetime erased so that a `'static` helper job can
/// hold it. Only dereferenced by a helper registered in [`Share::helpers`]
/// before the caller closed it, and [`share`] returns only once no helper
/// is registered: the pointee outlives every use.
struct Body(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync`, so calling it from several threads at once
// is allowed; the registration protocol above keeps it alive while used.
unsafe impl Send for Body {}
// SAFETY: as for `Send`: shared calls of a `Sync` closure.
unsafe impl Sync for Body {}

/// [`Share::helpers`]: set once the caller has finished taking tasks.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// How long a caller spins for its last helpers before it sleeps: waking a
/// sleeping thread cost some 65 µs on the 2-vCPU KVM development machine
/// (docs/performance.md, "The calling thread as one of the threads"), more
/// than most chunks take, while a helper still inside the body is at most
/// one chunk from done. 200 µs is a judgement, not a measured optimum.
const SPIN_BEFORE_SLEEP: std::time::Duration = std::time::Duration::from_micros(200);

/// What the caller and its helpers share during one [`share`] call.
struct Share {
    next: AtomicUsize,
    tasks: usize,
    body: Body,
    /// Helpers inside the body, plus [`CLOSED`].
    helpers: AtomicUsize,
    /// The first helper panic, resumed on the calling thread.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// A caller that has stopped spinning sleeps here until the last
    /// registered helper leaves.
    sleep: Mutex<()>,
    idle: Condvar,
}

impl Share {
    /// Take tasks until none is left.
    ///
    /// # Safety
    /// `self.body` must point to a live closure.
    unsafe fn take_tasks(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.tasks {
                return;
            }
            // SAFETY: the caller of `take_tasks` guarantees the pointee lives.
            unsafe { (*self.body.0)(i) };
        }
    }

    /// Register a helper; false once the caller has closed.
    fn enter(&self) -> bool {
        let mut now = self.helpers.load(Ordering::Acquire);
        loop {
            if now & CLOSED != 0 {
                return false;
            }
            match self.helpers.compare_exchange_weak(
                now,
                now + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(seen) => now = seen,
            }
        }
    }

    /// Deregister a helper (Release: its writes happen before the caller
    /// returns), waking the caller if it was the last and the caller sleeps.
    fn leave(&self) {
        if self.helpers.fetch_sub(1, Ordering::AcqRel) == CLOSED | 1 {
            let _g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
            self.idle.notify_all();
        }
    }

    /// Close (no helper registers after this) and wait until every
    /// registered helper has left: spin first, then sleep.
    fn close_and_wait(&self) {
        if self.helpers.fetch_or(CLOSED, Ordering::AcqRel) == 0 {
            return;
        }
        let busy = || self.helpers.load(Ordering::Acquire) != CLOSED;
        let start = std::time::Instant::now();
        while busy() {
            if start.elapsed() > SPIN_BEFORE_SLEEP {
                let mut g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
                while busy() {
                    g = self.idle.wait(g).unwrap_or_else(|e| e.into_inner());
                }
                return;
            }
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
    }
}

/// A helper's job: register (unless the caller has closed), take tasks,
/// deregister. A panic is caught and handed to the caller (and stops the
/// handing out of tasks), so the caller never waits on a helper that died.
fn help(share: Arc<Share>) {
    if !share.enter() {
        return;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _fp = FpEnvGuard::new();
        // SAFETY: registered while not closed: `share` waits for us.
        unsafe { share.take_tasks() }
    }));
    if let Err(payload) = result {
        share.next.store(share.tasks, Ordering::Relaxed);
        share
            .panic
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(payload);
    }
    share.leave();
}

/// Run `body(i)` for `i < tasks` on the calling thread and up to `helpers`
/// helpers of `pool`, each task once, and return when all have run. The
/// first panic (the caller's, else a helper's) is resumed here, after every
/// helper has left the body.
fn share(pool: &rayon::ThreadPool, helpers: usize, tasks: usize, body: &(dyn Fn(usize) + Sync)) {
    // SAFETY: only the lifetime changes (same layout); see `Body` for why
    // the pointee outlives every dereference.
    let body: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(body) };
    let share = Arc::new(Share {
        next: AtomicUsize::new(0),
        tasks,
        body: Body(body),
        helpers: AtomicUsize::new(0),
        panic: Mutex::new(None),
        sleep: Mutex::new(()),
        idle: Condvar::new(),
    });
    for _ in 0..helpers {
        let share = share.clone();
        pool.spawn(move || help(share));
    }
    let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _fp = FpEnvGuard::new();
        // SAFETY: `body` is borrowed for this whole call.
        unsafe { share.take_tasks() }
    }));
    if mine.is_err() {
        share.next.store(tasks, Ordering::Relaxed);
    }
    share.close_and_wait();
    if let Err(payload) = mine {
        std::panic::resume_unwind(payload);
    }
    let theirs = share.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(payload) = theirs {
        std::panic::resume_unwind(payload);
    }
}

/// [`par_chunks_sized`] over `items` in runs of `per_run` (the last may be
/// shorter): `body(scratch, i)` for every `i < items`, in order within a
/// run, with one `scratch()` per run so that a buffer serves all its items.
/// `work` is the call's element steps (below [`INLINE_WORK`] every run is
/// on the calling thread). The runs depend on the sizes only, so the bits
/// do not depend on threads.
pub fn par_runs<S, M, F>(items: usize, per_run: usize, work: usize, scratch: M, body: F)
where
    M: Fn() -> S + Sync + Send,
    F: Fn(&mut S, usize) + Sync + Send,
{
    par_chunks_sized(items.div_ceil(per_run), work, |run| {
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
/// serial run at every thread count). A call made inside [`serial`] (below a
/// size threshold, or a caller's own serial section) is not counted: its
/// chunks run on the calling thread at every thread count, so it shows
/// nothing about parallel runs. Whether a call is serial is a function of
/// the shape, so the counts are the same at every thread count. Relaxed
/// atomics: a count, not a sync.
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
/// the calling thread. The caller no longer waits for a helper to wake
/// ([`share`]), but a call still costs a job per helper (an empty
/// two-chunk call: ≈ 0.7 µs on the 2-vCPU development VM,
/// `examples/handoff_bench.rs`), and a helper that wakes after tens of
/// microseconds takes nothing from a kernel that is done by then. The
/// value was set before the change and not re-measured after it.
pub const INLINE_WORK: usize = 1 << 15;

/// [`par_chunks`] for a kernel that knows its total work (`work` element
/// steps, a function of the shape): below [`INLINE_WORK`] every chunk runs
/// on the calling thread. The chunks, and so the bits, are the same either
/// way; only which thread runs them changes.
pub fn par_chunks_sized<F>(chunks: usize, work: usize, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    serial_below(work, INLINE_WORK, || par_chunks(chunks, body))
}

/// `run()`, inside [`serial`] when `work < limit` (and the thresholds are
/// on, [`set_size_thresholds`]): the one place the size thresholds are
/// applied (the GEMM's too).
pub fn serial_below<R>(work: usize, limit: usize, run: impl FnOnce() -> R) -> R {
    if work < limit && SIZE_THRESHOLDS.load(Ordering::Relaxed) {
        serial(run)
    } else {
        run()
    }
}

/// Whether [`serial_below`] keeps small work on the calling thread (the
/// default).
static SIZE_THRESHOLDS: AtomicBool = AtomicBool::new(true);

/// Turn the size thresholds off (`false`) or back on. They decide only which
/// thread runs a chunk, never the chunks, so no result changes; the test
/// suite turns them off so that its small shapes run their chunks on the
/// pool too, and "the same bits at 1, 3 and 8 threads" compares parallel
/// runs of every kernel rather than serial ones (tests/conftest.py).
pub fn set_size_thresholds(on: bool) {
    SIZE_THRESHOLDS.store(on, Ordering::Relaxed);
}

/// Whether the size thresholds are on.
pub fn size_thresholds() -> bool {
    SIZE_THRESHOLDS.load(Ordering::Relaxed)
}

/// Multiply-adds below which a product's chunks stay on the calling thread
/// ([`par_chunks_macs`], [`join_macs`], and the GEMM itself): 30–50 µs of
/// one AVX2 core at the 20–35 G multiply-adds per second the GEMM reaches
/// on this project's development VM (docs/performance.md). Below that a
/// helper that wakes 50–70 µs after the call (the VM's measured wake-up)
/// finds the work done, and one that wakes sooner takes a chunk the caller
/// would have finished as fast.
pub const INLINE_MACS: usize = 1 << 20;

/// [`par_chunks`] for a kernel of products that knows its multiply-adds
/// (`macs`, a function of the shape): below [`INLINE_MACS`] every chunk,
/// and every parallel call inside one, runs on the calling thread. Same
/// chunks, same bits.
pub fn par_chunks_macs<F>(chunks: usize, macs: usize, body: F)
where
    F: Fn(usize) + Sync + Send,
{
    serial_below(macs, INLINE_MACS, || par_chunks(chunks, body))
}

/// [`join`] for two jobs of `macs` multiply-adds together: below
/// [`INLINE_MACS`] both run on the calling thread, `a` then `b` (the small
/// recurrent layers, whose per-step products are already serial).
pub fn join_macs<A, B, RA, RB>(macs: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    serial_below(macs, INLINE_MACS, || join(a, b))
}

/// Run `a` and `b`, each with the IEEE floating-point environment: the
/// calling thread starts `a` while a helper (when the pool has one, and not
/// inside [`serial`]) takes `b`, or the caller runs `b` after `a` if no
/// helper has come for it. For independent jobs that each write their own
/// outputs, such as the two directions of a recurrent layer: which thread
/// runs which cannot change a bit. Their own [`par_chunks`] calls still
/// spread over the pool.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let Some((pool, _)) = helpers_for(2) else {
        return (with_ieee(a), with_ieee(b));
    };
    let (a, b) = (Mutex::new(Some(a)), Mutex::new(Some(b)));
    let (ra, rb) = (Mutex::new(None), Mutex::new(None));
    share(&pool, 1, 2, &|i| {
        if i == 0 {
            let a = a.lock().unwrap_or_else(|e| e.into_inner()).take();
            *ra.lock().unwrap_or_else(|e| e.into_inner()) = a.map(|a| a());
        } else {
            let b = b.lock().unwrap_or_else(|e| e.into_inner()).take();
            *rb.lock().unwrap_or_else(|e| e.into_inner()) = b.map(|b| b());
        }
    });
    (taken(ra), taken(rb))
}

/// The result a task of [`join`] left (each runs exactly once).
fn taken<R>(r: Mutex<Option<R>>) -> R {
    r.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .expect("join: each task runs once")
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
    use std::sync::atomic::{AtomicUsize, Ordering};

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
    fn a_panic_in_any_task_reaches_the_caller_with_its_payload() {
        let _lock = crate::dispatch::settings_lock();
        let before = threads();
        set_threads(3).unwrap();
        for bad in [0, 5, 63] {
            let ran: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                par_chunks(64, |i| {
                    ran[i].fetch_add(1, Ordering::Relaxed);
                    if i == bad {
                        std::panic::panic_any(i);
                    }
                    std::thread::sleep(std::time::Duration::from_micros(50));
                })
            }));
            let payload = caught.expect_err("the task's panic is resumed");
            assert_eq!(payload.downcast_ref::<usize>(), Some(&bad));
            // The failing task ran once; no task ran twice (after a panic
            // the rest may be skipped, never repeated).
            assert_eq!(ran[bad].load(Ordering::Relaxed), 1);
            assert!(ran.iter().all(|r| r.load(Ordering::Relaxed) <= 1));
        }
        let caught = std::panic::catch_unwind(|| join(|| 1, || -> i32 { panic!("b failed") }));
        assert_eq!(
            caught.expect_err("b's panic").downcast_ref::<&str>(),
            Some(&"b failed")
        );
        // The pool still works afterwards.
        let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        par_chunks(100, |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        set_threads(before).unwrap();
    }

    #[test]
    fn nested_calls_and_joins_run_every_task_once_at_every_thread_count() {
        let _lock = crate::dispatch::settings_lock();
        let before = threads();
        for t in [1, 2, 3, 8] {
            set_threads(t).unwrap();
            let hits: Vec<AtomicUsize> = (0..12 * 9).map(|_| AtomicUsize::new(0)).collect();
            let (left, right) = join(
                || {
                    par_chunks(6, |i| {
                        par_chunks(9, |j| {
                            hits[i * 9 + j].fetch_add(1, Ordering::Relaxed);
                        })
                    });
                    "left"
                },
                || {
                    par_chunks(6, |i| {
                        let (x, y) = join(|| i, || 9 - i);
                        assert_eq!(x + y, 9);
                        par_chunks(9, |j| {
                            hits[(6 + i) * 9 + j].fetch_add(1, Ordering::Relaxed);
                        })
                    });
                    "right"
                },
            );
            assert_eq!((left, right), ("left", "right"));
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "threads {t}"
            );
        }
        set_threads(before).unwrap();
    }

    #[test]
    fn tasks_spread_over_helpers_when_they_are_long() {
        let _lock = crate::dispatch::settings_lock();
        let before = threads();
        set_threads(2).unwrap();
        let me = std::thread::current().id();
        let mut spread = false;
        for _ in 0..50 {
            let others = AtomicUsize::new(0);
            par_chunks(4, |_| {
                if std::thread::current().id() != me {
                    others.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            });
            if others.load(Ordering::Relaxed) > 0 {
                spread = true;
                break;
            }
        }
        set_threads(before).unwrap();
        assert!(spread, "no helper ever took a 2 ms task at two threads");
    }

    #[test]
    fn serial_below_is_serial_only_while_the_thresholds_are_on() {
        let inside = || SERIAL.with(|s| s.get());
        assert!(serial_below(1, 2, inside));
        assert!(!serial_below(2, 2, inside));
        set_size_thresholds(false);
        let off = serial_below(1, 2, inside);
        set_size_thresholds(true);
        assert!(!off, "below the limit but the thresholds were off");
        assert!(size_thresholds());
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
