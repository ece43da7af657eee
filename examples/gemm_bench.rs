//! Quick GEMM timing without Python: `cargo run --release --example gemm_bench -- [threads] [M K N ...]`
//! (AT=1 / BT=1: A / B through a transposed view).
//! The full benchmark with numpy side by side is benchmarks/bench_gemm.py.
use onemodel::dispatch::{available_paths, set_threads, Mode};
use onemodel::gemm::{gemm, peak_gflops, MatRef, Product};
use onemodel::simd::Token;
use std::time::Instant;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
/// CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID = 3 on Linux):
/// with one thread the product runs on the caller, and time the scheduler
/// gives to other processes on a busy machine is not counted. CPU=1 selects it.
fn now() -> f64 {
    if std::env::var("CPU").is_ok() {
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: ts is a valid timespec to write.
        unsafe { clock_gettime(3, &mut ts) };
        ts.sec as f64 + ts.nsec as f64 * 1e-9
    } else {
        static T0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        T0.get_or_init(Instant::now).elapsed().as_secs_f64()
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers"))
        .collect();
    let threads = args.first().copied().unwrap_or(1);
    let shapes: Vec<(usize, usize, usize)> = if args.len() > 1 {
        args[1..].chunks(3).map(|s| (s[0], s[1], s[2])).collect()
    } else {
        vec![(1024, 1024, 1024), (8, 128, 512), (2048, 384, 512)]
    };
    set_threads(threads).unwrap();
    let only = std::env::var("PATHS").unwrap_or_default();
    let paths: Vec<_> = available_paths()
        .into_iter()
        .filter(|p| only.is_empty() || only.split(',').any(|o| o == p.name()))
        .collect();
    for &path in paths.iter().filter(|_| std::env::var("NOPEAK").is_err()) {
        for mode in [Mode::Fast, Mode::Exact] {
            println!(
                "peak {:>6} {:>5}: {:7.2} GFLOP/s",
                path.name(),
                mode.name(),
                peak_gflops(
                    Token::new(path).unwrap(),
                    mode,
                    0.2,
                    5,
                    std::env::var("CPU").is_ok()
                )
            );
        }
    }
    for (m, k, n) in shapes {
        let a: Vec<f32> = (0..m * k)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| ((i * 104729) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let mut c = vec![0f32; m * n];
        // AT=1: A is the transposed view of a k × m row-major matrix (xᵀ·g).
        let (ars, acs) = if std::env::var("AT").is_ok() {
            (1, m as isize)
        } else {
            (k as isize, 1)
        };
        let ar = MatRef {
            ptr: a.as_ptr(),
            rows: m,
            cols: k,
            rs: ars,
            cs: acs,
        };
        // BT=1: B is the transposed view of an n × k row-major matrix (g·Wᵀ).
        let bt = std::env::var("BT").is_ok();
        let (rs, cs) = if bt { (1, k as isize) } else { (n as isize, 1) };
        let br = MatRef {
            ptr: b.as_ptr(),
            rows: k,
            cols: n,
            rs,
            cs,
        };
        for &path in &paths {
            for mode in [Mode::Fast, Mode::Exact]
                .into_iter()
                .filter(|m| std::env::var("MODES").map_or(true, |v| v.contains(m.name())))
            {
                let tok = Token::new(path).unwrap();
                let flops = 2.0 * (m * n * k) as f64;
                let reps = ((2e9 / flops) as usize).clamp(3, 2000);
                let mut times = Vec::new();
                for _ in 0..5 {
                    let t = now();
                    for _ in 0..reps {
                        // SAFETY: the views are inside a and b; c holds m×n.
                        unsafe { gemm(tok, mode, &Product::views(ar, br, c.as_mut_ptr(), n)) };
                    }
                    times.push((now() - t) / reps as f64);
                }
                times.sort_by(|x, y| x.partial_cmp(y).unwrap());
                println!(
                    "{m}x{k}x{n} t={threads} {:>6} {:>5}: {:7.2} GFLOP/s",
                    path.name(),
                    mode.name(),
                    flops / times[0] / 1e9
                );
            }
        }
    }
}
