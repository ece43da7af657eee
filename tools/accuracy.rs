//! Accuracy of the fixed transcendentals against binary64 references.
//!
//!     cargo run --release --example accuracy -- [FUNCTION ...] [--sample N] [--threads T] [--compare-every K]
//!
//! FUNCTION is any of exp log tanh sigmoid erf gelu gelu_slope erf_slope
//! sin cos tan asin acos atan sinh cosh asinh acosh atanh expm1 log1p exp2
//! log2 log10 log1pexp erfc erfinv, the compositions silu mish, atan2 pow
//! (binary: 2^28 sampled pairs), det_exp det_log (default: all but the
//! compositions). Every f32 function is evaluated on all 2^32 inputs (or N
//! random ones with --sample) on the best kernel path of this CPU against
//! the binary64 reference (tools/reference.rs), computed once per input;
//! every path (the scalar definition included) is run on one chunk of 2^16
//! inputs in K (default: 16 for the exhaustive run, 1 = all with --sample)
//! and must agree bit for bit (NaN with NaN). DetMath exp/log are evaluated
//! on 2^27 (≈1.3e8) inputs against double-double references. Output: one
//! markdown table row per function; stderr: wall time and the thread time
//! spent in evaluation and in the reference.

use onemodel::dispatch::available_paths;
use onemodel::kernels::elementwise::{map2_on, map_on, BinaryOp, UnaryOp};
use onemodel::math::detmath;
use onemodel::simd::Token;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

#[path = "reference.rs"]
mod reference_file;
use reference_file::reference as r;

#[derive(Clone, Copy, Default, Debug)]
struct Stats {
    n: u64,
    max_ulp: f64,
    max_at: u64,
    not_cr: u64,
    ambiguous: u64,
    path_mismatch: u64,
    /// inputs evaluated on every path (the others on the best path only)
    path_compared: u64,
    /// seconds spent in the function (all paths) and in the reference
    t_eval: f64,
    t_ref: f64,
    max_abs: f64,
    max_abs_at: u64,
    // gelu: the contract's region split
    max_ulp_in: f64,
    max_in_at: u64,
    max_abs_out: f64,
    max_abs_out_at: u64,
}

impl Stats {
    fn merge(&mut self, o: &Stats) {
        self.n += o.n;
        self.path_compared += o.path_compared;
        self.t_eval += o.t_eval;
        self.t_ref += o.t_ref;
        keep_max((&mut self.max_ulp, &mut self.max_at), (o.max_ulp, o.max_at));
        keep_max((&mut self.max_ulp_in, &mut self.max_in_at), (o.max_ulp_in, o.max_in_at));
        keep_max((&mut self.max_abs_out, &mut self.max_abs_out_at), (o.max_abs_out, o.max_abs_out_at));
        keep_max((&mut self.max_abs, &mut self.max_abs_at), (o.max_abs, o.max_abs_at));
        self.not_cr += o.not_cr;
        self.ambiguous += o.ambiguous;
        self.path_mismatch += o.path_mismatch;
    }
}

/// A running maximum and where it was met: replaced by `other` when larger
/// (the first place kept on a tie, as the chunks merge in input order).
fn keep_max(kept: (&mut f64, &mut u64), other: (f64, u64)) {
    if other.0 > *kept.0 {
        *kept.0 = other.0;
        *kept.1 = other.1;
    }
}

/// The Python compositions of fixed functions (their bits are those of
/// the element-wise kernels on any path): silu = x·σ(x) (ops/activation.py),
/// mish = x·tanh(ln(1 + e^x)) (ops/smooth_activation.py).
fn composite(name: &str) -> Option<(fn(f32) -> f32, fn(f32) -> f64)> {
    use onemodel::math;
    fn silu(x: f32) -> f32 {
        x * math::sigmoid(x)
    }
    fn mish(x: f32) -> f32 {
        x * math::tanh(math::log1pexp(x))
    }
    Some(match name {
        "silu" => (silu, r::silu),
        "mish" => (mish, r::mish),
        _ => return None,
    })
}

fn f32_func(name: &str) -> Option<(UnaryOp, fn(f32) -> f64)> {
    Some(match name {
        "exp" => (UnaryOp::Exp, r::exp),
        "log" => (UnaryOp::Log, r::log),
        "tanh" => (UnaryOp::Tanh, r::tanh),
        "sigmoid" => (UnaryOp::Sigmoid, r::sigmoid),
        "erf" => (UnaryOp::Erf, r::erf_),
        "gelu" => (UnaryOp::Gelu, r::gelu),
        "gelu_slope" => (UnaryOp::GeluSlope, r::gelu_slope),
        "erf_slope" => (UnaryOp::ErfSlope, r::erf_slope),
        "sin" => (UnaryOp::Sin, r::sin),
        "cos" => (UnaryOp::Cos, r::cos),
        "tan" => (UnaryOp::Tan, r::tan),
        "asin" => (UnaryOp::Asin, r::asin),
        "acos" => (UnaryOp::Acos, r::acos),
        "atan" => (UnaryOp::Atan, r::atan),
        "sinh" => (UnaryOp::Sinh, r::sinh),
        "cosh" => (UnaryOp::Cosh, r::cosh),
        "asinh" => (UnaryOp::Asinh, r::asinh_),
        "acosh" => (UnaryOp::Acosh, r::acosh_),
        "atanh" => (UnaryOp::Atanh, r::atanh_),
        "expm1" => (UnaryOp::Expm1, r::expm1_),
        "log1p" => (UnaryOp::Log1p, r::log1p_),
        "exp2" => (UnaryOp::Exp2, r::exp2),
        "log2" => (UnaryOp::Log2, r::log2),
        "log10" => (UnaryOp::Log10, r::log10),
        "log1pexp" => (UnaryOp::Log1pExp, r::log1pexp),
        "erfc" => (UnaryOp::Erfc, r::erfc_),
        "erfinv" => (UnaryOp::Erfinv, r::erfinv_),
        _ => return None,
    })
}

/// xorshift64*: the sample's inputs (fixed seed, reproducible).
fn rng(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// Every input on the best path (the last of `available_paths`), measured
/// against the reference; one chunk of 2^16 inputs in `every` also on every
/// other path (the scalar definition included), which must agree bit for
/// bit. The paths are one definition (crate::math: the f32 instantiation is
/// the definition and the vector ones repeat its operations lane by lane),
/// so the sample checks that claim while the accuracy is measured on all
/// inputs; `--compare-every 1` compares every input on every path.
fn run_f32(name: &str, sample: Option<u64>, threads: usize, every: u64) -> Stats {
    let (op, reference) = f32_func(name).unwrap_or((UnaryOp::Neg, r::exp));
    let comp = composite(name);
    let reference = comp.map_or(reference, |c| c.1);
    let tokens: Vec<Token> = available_paths()
        .into_iter()
        .map(|p| Token::new(p).unwrap())
        .collect();
    const CHUNK: u64 = 1 << 16;
    let total = sample.unwrap_or(1 << 32);
    let chunks = total.div_ceil(CHUNK);
    let next = AtomicU64::new(0);
    let result = Mutex::new(Stats::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut st = Stats::default();
                let mut x = vec![0f32; CHUNK as usize];
                let mut want = vec![0f32; CHUNK as usize];
                let mut got = vec![0f32; CHUNK as usize];
                let mut refs = vec![0f64; CHUNK as usize];
                loop {
                    let c = next.fetch_add(1, Ordering::Relaxed);
                    if c >= chunks {
                        break;
                    }
                    let len = CHUNK.min(total - c * CHUNK) as usize;
                    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ c.wrapping_mul(0xD1B5_4A32_D192_ED03);
                    for (i, v) in x[..len].iter_mut().enumerate() {
                        let bits = if sample.is_some() {
                            rng(&mut seed) as u32
                        } else {
                            (c * CHUNK) as u32 + i as u32
                        };
                        *v = f32::from_bits(bits);
                    }
                    let t0 = std::time::Instant::now();
                    let best = tokens[tokens.len() - 1];
                    if let Some((f, _)) = comp {
                        for (w, &xv) in want[..len].iter_mut().zip(&x[..len]) {
                            *w = f(xv);
                        }
                    } else {
                        map_on(best, op, false, &x[..len], &mut want[..len]);
                    }
                    if c % every == 0 && comp.is_none() {
                        st.path_compared += len as u64;
                        for &t in &tokens[..tokens.len() - 1] {
                            map_on(t, op, false, &x[..len], &mut got[..len]);
                            for i in 0..len {
                                let (w, g) = (want[i], got[i]);
                                if w.to_bits() != g.to_bits() && !(w.is_nan() && g.is_nan()) {
                                    st.path_mismatch += 1;
                                }
                            }
                        }
                    }
                    let t1 = std::time::Instant::now();
                    st.t_eval += (t1 - t0).as_secs_f64();
                    for (rv, &xv) in refs[..len].iter_mut().zip(&x[..len]) {
                        *rv = reference(xv);
                    }
                    st.t_ref += t1.elapsed().as_secs_f64();
                    for i in 0..len {
                        let y = want[i];
                        let rf = refs[i];
                        let e = r::err_ulp32(y, rf);
                        st.n += 1;
                        let bits = x[i].to_bits() as u64;
                        if e > st.max_ulp {
                            st.max_ulp = e;
                            st.max_at = bits;
                        }
                        if y.is_finite() && rf.is_finite() {
                            let a = ((y as f64) - rf).abs();
                            if a > st.max_abs {
                                st.max_abs = a;
                                st.max_abs_at = bits;
                            }
                        }
                        if r::ambiguous32(rf) {
                            st.ambiguous += 1;
                        } else if !(y.to_bits() == (rf as f32).to_bits()
                            || (y.is_nan() && rf.is_nan()))
                        {
                            st.not_cr += 1;
                        }
                        if name == "gelu" {
                            let normal = (rf.abs() >= f32::MIN_POSITIVE as f64) && rf.is_finite();
                            if normal && x[i].abs() <= 10.0 {
                                if e > st.max_ulp_in {
                                    st.max_ulp_in = e;
                                    st.max_in_at = bits;
                                }
                            } else if !x[i].is_nan() {
                                let a = if x[i].is_infinite() {
                                    0.0
                                } else {
                                    ((y as f64) - rf).abs()
                                };
                                if a > st.max_abs_out {
                                    st.max_abs_out = a;
                                    st.max_abs_out_at = bits;
                                }
                            }
                        }
                    }
                }
                result.lock().unwrap().merge(&st);
            });
        }
    });
    result.into_inner().unwrap()
}

fn f32_func2(name: &str) -> Option<(BinaryOp, fn(f32, f32) -> f64)> {
    Some(match name {
        "atan2" => (BinaryOp::Atan2, r::atan2),
        "pow" => (BinaryOp::Power, r::pow2),
        _ => return None,
    })
}

/// A binary function on `n` pairs (default 2^28): a quarter random bit
/// patterns for both operands, the rest moderate values (atan2: normals
/// scaled by 2^±20; pow: bases in (0, 8), exponents in (−30, 30)), with
/// every path compared to the scalar definition.
fn run_f32_2(name: &str, n: u64, threads: usize) -> Stats {
    let (op, reference) = f32_func2(name).unwrap();
    let tokens: Vec<Token> = available_paths()
        .into_iter()
        .map(|p| Token::new(p).unwrap())
        .collect();
    const CHUNK: u64 = 1 << 16;
    let chunks = n.div_ceil(CHUNK);
    let next = AtomicU64::new(0);
    let result = Mutex::new(Stats::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut st = Stats::default();
                let len = CHUNK as usize;
                let (mut a, mut b) = (vec![0f32; len], vec![0f32; len]);
                let (mut want, mut got) = (vec![0f32; len], vec![0f32; len]);
                loop {
                    let c = next.fetch_add(1, Ordering::Relaxed);
                    if c >= chunks {
                        break;
                    }
                    let mut seed = 0x5851_F42D_4C95_7F2Du64 ^ c.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    for i in 0..len {
                        let (u, v) = (rng(&mut seed), rng(&mut seed));
                        let unit = |w: u64| (w >> 40) as f32 / 16_777_216.0;
                        let (x, y) = if i % 4 == 0 {
                            (f32::from_bits(u as u32), f32::from_bits(v as u32))
                        } else if name == "atan2" {
                            let sa = 2f32.powi(((u >> 8) % 41) as i32 - 20);
                            ((unit(u) - 0.5) * sa, (unit(v) - 0.5) * 2f32.powi(((v >> 8) % 41) as i32 - 20))
                        } else {
                            (unit(u) * 8.0, (unit(v) - 0.5) * 60.0)
                        };
                        a[i] = x;
                        b[i] = y;
                    }
                    map2_on(tokens[0], op, false, &a, &b, &mut want);
                    for &t in &tokens[1..] {
                        map2_on(t, op, false, &a, &b, &mut got);
                        for i in 0..len {
                            if want[i].to_bits() != got[i].to_bits() && !(want[i].is_nan() && got[i].is_nan()) {
                                st.path_mismatch += 1;
                            }
                        }
                    }
                    for i in 0..len {
                        let rf = reference(a[i], b[i]);
                        let e = r::err_ulp32(want[i], rf);
                        st.n += 1;
                        if e > st.max_ulp {
                            st.max_ulp = e;
                            st.max_at = ((a[i].to_bits() as u64) << 32) | b[i].to_bits() as u64;
                        }
                        if r::ambiguous32(rf) {
                            st.ambiguous += 1;
                        } else if !(want[i].to_bits() == (rf as f32).to_bits() || (want[i].is_nan() && rf.is_nan())) {
                            st.not_cr += 1;
                        }
                    }
                }
                result.lock().unwrap().merge(&st);
            });
        }
    });
    result.into_inner().unwrap()
}

fn run_det(name: &str, n: u64, threads: usize) -> Stats {
    let next = AtomicU64::new(0);
    const CHUNK: u64 = 1 << 16;
    let chunks = n.div_ceil(CHUNK);
    let result = Mutex::new(Stats::default());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut st = Stats::default();
                loop {
                    let c = next.fetch_add(1, Ordering::Relaxed);
                    if c >= chunks {
                        break;
                    }
                    let mut seed = 0x2545_F491_4F6C_DD1Du64 ^ c.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    for i in 0..CHUNK {
                        let u = rng(&mut seed);
                        // Half uniform over the interesting range, half random
                        // bit patterns (every exponent), for both functions.
                        let x = match (name, i % 2) {
                            ("det_exp", 0) => -745.2 + (u >> 11) as f64 * 2f64.powi(-53) * 1455.0,
                            ("det_exp", _) => {
                                let v = f64::from_bits(u & 0x7fff_ffff_ffff_ffff);
                                if v.is_finite() && v < 750.0 {
                                    if u >> 63 == 1 {
                                        -v
                                    } else {
                                        v
                                    }
                                } else {
                                    0.5
                                }
                            }
                            (_, 0) => 0.5 + (u >> 11) as f64 * 2f64.powi(-53) * 1.5,
                            _ => {
                                let v = f64::from_bits(u & 0x7fef_ffff_ffff_ffff);
                                if v == 0.0 {
                                    1.0
                                } else {
                                    v
                                }
                            }
                        };
                        let (_, e) = if name == "det_exp" {
                            let y = detmath::exp(x);
                            let (m, k) = r::exp_dd_scaled(x);
                            (y, r::err_ulp64_scaled(y, m, k))
                        } else {
                            let y = detmath::log(x);
                            (y, r::err_ulp64(y, r::log_dd(x)))
                        };
                        st.n += 1;
                        if e > st.max_ulp {
                            st.max_ulp = e;
                            st.max_at = x.to_bits();
                        }
                        // Correctly rounded: y is the double nearest to the
                        // reference (error at most half an ulp).
                        if e > 0.5 {
                            st.not_cr += 1;
                        }
                    }
                }
                result.lock().unwrap().merge(&st);
            });
        }
    });
    result.into_inner().unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut names: Vec<String> = vec![];
    let mut sample = None;
    let mut threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut every = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--sample" => {
                sample = Some(args[i + 1].parse::<u64>().expect("--sample N"));
                i += 1;
            }
            "--compare-every" => {
                every = Some(args[i + 1].parse::<u64>().expect("--compare-every K"));
                i += 1;
            }
            "--threads" => {
                threads = args[i + 1].parse().expect("--threads T");
                i += 1;
            }
            n => names.push(n.to_string()),
        }
        i += 1;
    }
    if names.is_empty() {
        names = [
            "exp",
            "log",
            "tanh",
            "sigmoid",
            "erf",
            "gelu",
            "gelu_slope",
            "erf_slope",
            "sin",
            "cos",
            "tan",
            "asin",
            "acos",
            "atan",
            "sinh",
            "cosh",
            "asinh",
            "acosh",
            "atanh",
            "expm1",
            "log1p",
            "exp2",
            "log2",
            "log10",
            "log1pexp",
            "erfc",
            "erfinv",
            "atan2",
            "pow",
            "det_exp",
            "det_log",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
    }
    let paths: Vec<&str> = available_paths().iter().map(|p| p.name()).collect();
    println!("paths compared: {}; threads: {threads}", paths.join(", "));
    println!("| function | inputs | max error (ulp) | at x | not correctly rounded | ambiguous | path mismatches | max abs error |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for name in &names {
        let t0 = std::time::Instant::now();
        if name.starts_with("det_") {
            let st = run_det(name, sample.unwrap_or(1 << 27), threads);
            println!(
                "| {name} | {} | {:.3} | {:e} | {} | – | – | – |",
                st.n,
                st.max_ulp,
                f64::from_bits(st.max_at),
                st.not_cr
            );
        } else if f32_func2(name).is_some() {
            let st = run_f32_2(name, sample.unwrap_or(1 << 28), threads);
            println!(
                "| {name} | {} (pairs) | {:.3} | ({:e}, {:e}) | {} | {} | {} | – |",
                st.n,
                st.max_ulp,
                f32::from_bits((st.max_at >> 32) as u32),
                f32::from_bits(st.max_at as u32),
                st.not_cr,
                st.ambiguous,
                st.path_mismatch
            );
        } else if f32_func(name).is_some() || composite(name).is_some() {
            // Exhaustive: one chunk in 16 on every path; sampled: all.
            let every = every.unwrap_or(if sample.is_some() { 1 } else { 16 });
            let st = run_f32(name, sample, threads, every);
            eprintln!("{name}: evaluation {:.1} s, reference {:.1} s (thread time)", st.t_eval, st.t_ref);
            println!(
                "| {name} | {} | {:.3} | {:e} (0x{:08x}) | {} | {} | {} of {} | {:.3e} at {:e} |",
                st.n,
                st.max_ulp,
                f32::from_bits(st.max_at as u32),
                st.max_at,
                st.not_cr,
                st.ambiguous,
                st.path_mismatch,
                st.path_compared,
                st.max_abs,
                f32::from_bits(st.max_abs_at as u32)
            );
            if name == "gelu" {
                println!(
                    "|   gelu, normal result and abs(x) ≤ 10 | | {:.3} | {:e} | | | | |",
                    st.max_ulp_in,
                    f32::from_bits(st.max_in_at as u32)
                );
                println!(
                    "|   gelu, elsewhere (abs error) | | {:e} | {:e} | | | | |",
                    st.max_abs_out,
                    f32::from_bits(st.max_abs_out_at as u32)
                );
            }
        } else {
            eprintln!("unknown function {name}");
            std::process::exit(2);
        }
        eprintln!("{name}: {:.1} s", t0.elapsed().as_secs_f64());
    }
}
