//! The `onemodel._core` extension module: thin bindings over the Rust core.

mod compute;
mod ops;
mod optim;
mod random;
mod recognizer;
mod rnn;
mod spatial;
mod storage;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<storage::Storage>()?;
    m.add_class::<random::Generator>()?;
    m.add_function(wrap_pyfunction!(ops::copy_, m)?)?;
    m.add_function(wrap_pyfunction!(ops::fill_, m)?)?;
    m.add_function(wrap_pyfunction!(ops::binary, m)?)?;
    m.add_function(wrap_pyfunction!(ops::unary, m)?)?;
    m.add_function(wrap_pyfunction!(ops::ternary, m)?)?;
    m.add_function(wrap_pyfunction!(ops::sum, m)?)?;
    m.add_function(wrap_pyfunction!(ops::matmul, m)?)?;
    m.add_function(wrap_pyfunction!(rnn::lstm_forward, m)?)?;
    m.add_function(wrap_pyfunction!(rnn::lstm_backward, m)?)?;
    m.add_function(wrap_pyfunction!(rnn::gru_forward, m)?)?;
    m.add_function(wrap_pyfunction!(rnn::gru_backward, m)?)?;
    m.add_function(wrap_pyfunction!(rnn::ctc_losses, m)?)?;
    m.add_function(wrap_pyfunction!(rnn::ctc_grad, m)?)?;
    m.add_function(wrap_pyfunction!(optim::adam_step, m)?)?;
    m.add_function(wrap_pyfunction!(optim::sgd_step, m)?)?;
    m.add_function(wrap_pyfunction!(optim::global_norm, m)?)?;
    m.add_function(wrap_pyfunction!(optim::scale_, m)?)?;
    m.add_function(wrap_pyfunction!(optim::clamp_, m)?)?;
    m.add_function(wrap_pyfunction!(optim::beta_power, m)?)?;
    m.add_function(wrap_pyfunction!(optim::adamw_scalars, m)?)?;
    spatial::register(m)?;
    m.add_function(wrap_pyfunction!(compute::kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(compute::best_kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(compute::available_kernel_paths, m)?)?;
    m.add_function(wrap_pyfunction!(compute::set_kernel_path, m)?)?;
    m.add_function(wrap_pyfunction!(compute::cpu_features, m)?)?;
    m.add_function(wrap_pyfunction!(compute::get_mode, m)?)?;
    m.add_function(wrap_pyfunction!(compute::set_mode, m)?)?;
    m.add_function(wrap_pyfunction!(compute::get_threads, m)?)?;
    m.add_function(wrap_pyfunction!(compute::set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(compute::pool_stats, m)?)?;
    m.add_function(wrap_pyfunction!(compute::pool_trim, m)?)?;
    m.add_function(wrap_pyfunction!(compute::get_mxcsr, m)?)?;
    m.add_function(wrap_pyfunction!(compute::set_mxcsr, m)?)?;
    m.add_function(wrap_pyfunction!(compute::peak_gflops, m)?)?;
    recognizer::register(m)?;
    Ok(())
}
