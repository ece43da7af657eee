//! Compute settings and pool statistics.

use crate::dispatch::{self, KernelPath, Mode};
use crate::error::Error;
use crate::storage;
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pyfunction]
pub fn kernel_path() -> &'static str {
    dispatch::kernel_path().name()
}

#[pyfunction]
pub fn best_kernel_path() -> &'static str {
    dispatch::best_path().name()
}

#[pyfunction]
pub fn available_kernel_paths() -> Vec<&'static str> {
    dispatch::available_paths()
        .into_iter()
        .map(KernelPath::name)
        .collect()
}

/// Force a kernel path by name, or `None` for the detected best.
#[pyfunction]
#[pyo3(signature = (name=None))]
pub fn set_kernel_path(name: Option<&str>) -> PyResult<()> {
    let op = "set_kernel_path";
    let path = match name {
        None => None,
        Some(n) => Some(dispatch::parse_path(n).map_err(|e| Error::from(e).context(op))?),
    };
    Ok(dispatch::set_kernel_path(path).map_err(|e| Error::from(e).context(op))?)
}

#[pyfunction]
pub fn cpu_features() -> Vec<&'static str> {
    dispatch::cpu_features()
}

#[pyfunction]
pub fn get_mode() -> &'static str {
    dispatch::mode().name()
}

#[pyfunction]
pub fn set_mode(name: &str) -> PyResult<()> {
    let m = Mode::from_name(name).ok_or_else(|| {
        Error::Value(format!(
            "set_mode: expected 'fast' or 'exact', got {name:?}"
        ))
    })?;
    dispatch::set_mode(m);
    Ok(())
}

#[pyfunction]
pub fn get_threads() -> usize {
    dispatch::threads()
}

#[pyfunction]
pub fn set_threads(n: i64) -> PyResult<()> {
    if n < 1 {
        return Err(Error::Value(format!(
            "set_threads: the thread count must be at least 1, got {n}"
        ))
        .into());
    }
    Ok(dispatch::set_threads(n as usize)?)
}

#[pyfunction]
pub fn pool_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let s = storage::stats();
    let d = PyDict::new(py);
    d.set_item("native_allocations", s.native_allocations)?;
    d.set_item("outstanding_bytes", s.outstanding_bytes)?;
    d.set_item("pooled_bytes", s.pooled_bytes)?;
    d.set_item("requests", s.requests)?;
    Ok(d)
}

/// Return every pooled (free) buffer to the system; returns the bytes freed.
#[pyfunction]
pub fn pool_trim() -> u64 {
    storage::trim()
}

/// MXCSR of the calling thread (x86-64), for tests of the FP environment.
#[pyfunction]
pub fn get_mxcsr() -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        dispatch::read_mxcsr()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Set MXCSR of the calling thread (x86-64), as another library might.
#[pyfunction]
pub fn set_mxcsr(value: u32) {
    #[cfg(target_arch = "x86_64")]
    dispatch::write_mxcsr(value);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The measured single-thread arithmetic peak (GFLOP/s) of a kernel path in
/// a mode's arithmetic (fast: fma; exact: multiply then add), for the GEMM
/// benchmark. Runs about `seconds` per repeat, best of `repeats`; with
/// `thread_clock`, timed in CPU seconds of the calling thread (Linux).
#[pyfunction]
#[pyo3(signature = (path, mode, seconds=0.2, repeats=5, thread_clock=false))]
pub fn peak_gflops(
    py: Python<'_>,
    path: &str,
    mode: &str,
    seconds: f64,
    repeats: usize,
    thread_clock: bool,
) -> PyResult<f64> {
    let p = dispatch::parse_path(path).map_err(|e| Error::from(e).context("peak_gflops"))?;
    let m = Mode::from_name(mode)
        .ok_or_else(|| Error::Value(format!("peak_gflops: unknown mode {mode:?}")))?;
    let token = crate::simd::Token::new(p).expect("parse_path checked the features");
    Ok(super::kernel::detach(py, move || {
        crate::gemm::peak_gflops(token, m, seconds, repeats, thread_clock)
    })?)
}

/// `(par_chunks calls, calls with several chunks, most chunks in one call)`
/// since the last reset (tests show with it that their shapes split).
#[pyfunction]
pub fn chunk_stats() -> (u64, u64, u64) {
    dispatch::chunk_stats()
}

#[pyfunction]
pub fn reset_chunk_stats() {
    dispatch::reset_chunk_stats()
}

/// Turn the kernels' size thresholds (small work on the calling thread) off
/// or on; no result depends on them (the test suite turns them off).
#[pyfunction]
pub fn set_size_thresholds(on: bool) {
    dispatch::set_size_thresholds(on)
}

#[pyfunction]
pub fn size_thresholds() -> bool {
    dispatch::size_thresholds()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(chunk_stats, m)?)?;
    m.add_function(wrap_pyfunction!(reset_chunk_stats, m)?)?;
    m.add_function(wrap_pyfunction!(set_size_thresholds, m)?)?;
    m.add_function(wrap_pyfunction!(size_thresholds, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(best_kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(available_kernel_paths, m)?)?;
    m.add_function(wrap_pyfunction!(set_kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_features, m)?)?;
    m.add_function(wrap_pyfunction!(get_mode, m)?)?;
    m.add_function(wrap_pyfunction!(set_mode, m)?)?;
    m.add_function(wrap_pyfunction!(get_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(pool_stats, m)?)?;
    m.add_function(wrap_pyfunction!(pool_trim, m)?)?;
    m.add_function(wrap_pyfunction!(get_mxcsr, m)?)?;
    m.add_function(wrap_pyfunction!(set_mxcsr, m)?)?;
    m.add_function(wrap_pyfunction!(peak_gflops, m)?)?;
    Ok(())
}
