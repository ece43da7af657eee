//! Process-wide compute settings: the kernel path, the arithmetic mode and the
//! thread pool.
//!
//! * The kernel path is the instruction set the SIMD kernels are instantiated
//!   for. The best one this CPU supports is detected once and cached; a user
//!   or a test may force another (`set_kernel_path`, `ONEMODEL_KERNEL_PATH`).
//!   In exact mode every path gives the same bits, so forcing a path only
//!   changes speed; tests force each available path in turn to prove it.
//! * The mode selects the per-term arithmetic of products (exact: rounded
//!   multiply then rounded add; fast: one fma) and the transcendental
//!   flavour. It never changes the order of any sum.
//! * Threads exist only inside kernels. Work is cut into chunks whose size is
//!   a constant of the kernel and the shape, never of the thread count, so the
//!   thread count cannot change a bit.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// The instruction-set paths, slowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum KernelPath {
    /// Plain Rust `f32` arithmetic, one element at a time. The definition.
    Scalar = 0,
    /// 128-bit vectors: SSE4.1 on x86-64, NEON on aarch64.
    V128 = 1,
    /// 256-bit AVX2 with FMA.
    Avx2 = 2,
    /// 512-bit AVX-512 F/BW/DQ/VL.
    Avx512 = 3,
}

impl KernelPath {
    pub const ALL: [KernelPath; 4] = [
        KernelPath::Scalar,
        KernelPath::V128,
        KernelPath::Avx2,
        KernelPath::Avx512,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Scalar => "scalar",
            KernelPath::V128 => "v128",
            KernelPath::Avx2 => "avx2",
            KernelPath::Avx512 => "avx512",
        }
    }

    pub fn from_name(name: &str) -> Option<KernelPath> {
        let lower = name.trim().to_ascii_lowercase();
        KernelPath::ALL.into_iter().find(|p| p.name() == lower)
    }

    fn from_u8(v: u8) -> Option<KernelPath> {
        KernelPath::ALL.get(v as usize).copied()
    }

    /// The CPU features this path needs, as the OS reports them.
    pub fn required_features(self) -> &'static [&'static str] {
        match self {
            KernelPath::Scalar => &[],
            // No NEON lane type is written yet, so on aarch64 the 128-bit
            // path reports a feature no CPU has and is never chosen.
            #[cfg(target_arch = "aarch64")]
            KernelPath::V128 => &["neon lane type (not yet implemented)"],
            #[cfg(not(target_arch = "aarch64"))]
            KernelPath::V128 => &["sse4.1"],
            KernelPath::Avx2 => &["avx2", "fma"],
            KernelPath::Avx512 => &["avx512f", "avx512bw", "avx512dq", "avx512vl"],
        }
    }

    /// The features of `required_features` this CPU lacks (empty: usable).
    pub fn missing_features(self) -> Vec<&'static str> {
        self.required_features()
            .iter()
            .copied()
            .filter(|f| !cpu_has(f))
            .collect()
    }

    pub fn is_available(self) -> bool {
        self.missing_features().is_empty()
    }
}

/// Whether the running CPU has one named feature (run-time detection).
pub fn cpu_has(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "sse4.1" => std::arch::is_x86_feature_detected!("sse4.1"),
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "fma" => std::arch::is_x86_feature_detected!("fma"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512dq" => std::arch::is_x86_feature_detected!("avx512dq"),
            "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
            _ => false,
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        match feature {
            "neon" => std::arch::is_aarch64_feature_detected!("neon"),
            _ => false,
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = feature;
        false
    }
}

/// The CPU features worth reporting in `onemodel info`.
pub fn cpu_features() -> Vec<&'static str> {
    const NAMES: [&str; 8] = [
        "sse4.1", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "neon",
    ];
    NAMES.into_iter().filter(|f| cpu_has(f)).collect()
}

/// Every path this CPU can run, slowest first. `Scalar` is always there.
pub fn available_paths() -> Vec<KernelPath> {
    KernelPath::ALL
        .into_iter()
        .filter(|p| p.is_available())
        .collect()
}

/// The fastest available path, detected once.
pub fn best_path() -> KernelPath {
    static BEST: OnceLock<KernelPath> = OnceLock::new();
    *BEST.get_or_init(|| {
        *available_paths()
            .last()
            .expect("scalar is always available")
    })
}

const NOT_SET: u8 = u8::MAX;
static FORCED_PATH: AtomicU8 = AtomicU8::new(NOT_SET);
static ENV_READ: OnceLock<()> = OnceLock::new();

/// Why a path cannot be forced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    Unknown(String),
    Missing {
        path: KernelPath,
        features: Vec<&'static str>,
    },
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::Unknown(name) => write!(
                f,
                "unknown kernel path {name:?}; expected one of scalar, v128, avx2, avx512"
            ),
            PathError::Missing { path, features } => write!(
                f,
                "kernel path {:?} needs CPU features this CPU lacks: {}",
                path.name(),
                features.join(", ")
            ),
        }
    }
}

/// Resolve a path name against this CPU.
pub fn parse_path(name: &str) -> Result<KernelPath, PathError> {
    let path = KernelPath::from_name(name).ok_or_else(|| PathError::Unknown(name.to_string()))?;
    let missing = path.missing_features();
    if missing.is_empty() {
        Ok(path)
    } else {
        Err(PathError::Missing {
            path,
            features: missing,
        })
    }
}

/// Apply `ONEMODEL_KERNEL_PATH` once, on first use. A bad value is reported on
/// stderr and ignored rather than aborting the import of the library.
fn read_env_once() {
    ENV_READ.get_or_init(|| {
        if let Ok(value) = std::env::var("ONEMODEL_KERNEL_PATH") {
            if !value.trim().is_empty() {
                match parse_path(&value) {
                    Ok(p) => FORCED_PATH.store(p as u8, Ordering::Relaxed),
                    Err(e) => eprintln!("onemodel: ignoring ONEMODEL_KERNEL_PATH: {e}"),
                }
            }
        }
    });
}

/// The path kernels run on now: the forced one, else the best one.
pub fn kernel_path() -> KernelPath {
    read_env_once();
    KernelPath::from_u8(FORCED_PATH.load(Ordering::Relaxed)).unwrap_or_else(best_path)
}

/// Force a path (`None` returns to the detected best).
pub fn set_kernel_path(path: Option<KernelPath>) -> Result<(), PathError> {
    read_env_once();
    match path {
        None => FORCED_PATH.store(NOT_SET, Ordering::Relaxed),
        Some(p) => {
            let missing = p.missing_features();
            if !missing.is_empty() {
                return Err(PathError::Missing {
                    path: p,
                    features: missing,
                });
            }
            FORCED_PATH.store(p as u8, Ordering::Relaxed)
        }
    }
    Ok(())
}

/// The arithmetic of products and transcendentals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Mode {
    /// One fma per product term; platform transcendentals allowed.
    Fast = 0,
    /// A rounded multiply then a rounded add; fixed transcendentals. The same
    /// bits on every path, thread count and OS.
    Exact = 1,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Fast => "fast",
            Mode::Exact => "exact",
        }
    }
    pub fn from_name(name: &str) -> Option<Mode> {
        match name.trim().to_ascii_lowercase().as_str() {
            "fast" => Some(Mode::Fast),
            "exact" => Some(Mode::Exact),
            _ => None,
        }
    }
}

static MODE: AtomicU8 = AtomicU8::new(Mode::Fast as u8);

pub fn mode() -> Mode {
    if MODE.load(Ordering::Relaxed) == Mode::Exact as u8 {
        Mode::Exact
    } else {
        Mode::Fast
    }
}

pub fn set_mode(m: Mode) {
    MODE.store(m as u8, Ordering::Relaxed);
}

// ---------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Floating-point environment
// ---------------------------------------------------------------------------

/// Clears the x86 MXCSR flush-to-zero (bit 15) and denormals-are-zero (bit 6)
/// bits for its lifetime and restores the caller's MXCSR when dropped, so that
/// subnormals are honoured even if another library in the process set them.
/// On other architectures it does nothing (aarch64 honours subnormals by
/// default in 64-bit mode).
pub struct FpEnvGuard {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

#[cfg(target_arch = "x86_64")]
const MXCSR_FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

impl FpEnvGuard {
    #[allow(clippy::new_without_default)]
    pub fn new() -> FpEnvGuard {
        #[cfg(target_arch = "x86_64")]
        {
            let saved = read_mxcsr();
            if saved & MXCSR_FTZ_DAZ != 0 {
                write_mxcsr(saved & !MXCSR_FTZ_DAZ);
            }
            FpEnvGuard { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            FpEnvGuard {}
        }
    }
}

impl Drop for FpEnvGuard {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if self.saved & MXCSR_FTZ_DAZ != 0 {
            write_mxcsr(self.saved);
        }
    }
}

/// Read the MXCSR register.
#[cfg(target_arch = "x86_64")]
pub fn read_mxcsr() -> u32 {
    let mut value: u32 = 0;
    // SAFETY: stmxcsr stores the 32-bit MXCSR into the pointed-to u32, which is
    // a valid, aligned local; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut value as *mut u32, options(nostack, preserves_flags));
    }
    value
}

/// Write the MXCSR register.
#[cfg(target_arch = "x86_64")]
pub fn write_mxcsr(value: u32) {
    // SAFETY: ldmxcsr loads a 32-bit value from a valid aligned local; callers
    // pass values derived from a value read by `read_mxcsr`, so no reserved
    // bit is set.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &value as *const u32, options(nostack, preserves_flags));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn names_round_trip() {
        for p in KernelPath::ALL {
            assert_eq!(KernelPath::from_name(p.name()), Some(p));
        }
        assert_eq!(KernelPath::from_name("AVX2"), Some(KernelPath::Avx2));
        assert_eq!(KernelPath::from_name("sse"), None);
    }

    #[test]
    fn scalar_is_always_available_and_best_is_available() {
        let paths = available_paths();
        assert_eq!(paths[0], KernelPath::Scalar);
        assert!(paths.contains(&best_path()));
    }

    #[test]
    fn forcing_a_missing_path_names_the_features() {
        for p in KernelPath::ALL {
            let missing = p.missing_features();
            if !missing.is_empty() {
                let err = parse_path(p.name()).unwrap_err();
                let text = err.to_string();
                for f in missing {
                    assert!(text.contains(f), "{text}");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn fp_guard_clears_and_restores_ftz() {
        let before = read_mxcsr();
        write_mxcsr(before | MXCSR_FTZ_DAZ);
        {
            let _g = FpEnvGuard::new();
            assert_eq!(read_mxcsr() & MXCSR_FTZ_DAZ, 0);
            // A subnormal product survives.
            let tiny = std::hint::black_box(f32::from_bits(1)) * std::hint::black_box(2.0f32);
            assert_eq!(tiny.to_bits(), 2);
        }
        assert_eq!(read_mxcsr() & MXCSR_FTZ_DAZ, MXCSR_FTZ_DAZ);
        write_mxcsr(before);
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
