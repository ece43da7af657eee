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
//!
//! Modules: `settings` (the kernel path, the CPU's features, the mode),
//! `pool` (the thread pool and the ways work reaches it), `fpenv` (the
//! floating-point environment every computing thread runs under).

mod fpenv;
mod pool;
mod settings;

pub use fpenv::*;
pub use pool::*;
pub use settings::*;

/// The one lock of the Rust tests that change the process-wide kernel path,
/// thread count or mode: cargo runs tests on several threads at once, and
/// two such tests under different locks would change each other's settings
/// mid-run.
#[cfg(test)]
pub fn settings_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
