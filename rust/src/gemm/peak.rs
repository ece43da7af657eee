//! The arithmetic peak of one core on a kernel path, measured: the ceiling
//! the GEMM benchmark reports its GFLOP/s against.
//!
//! The loop keeps `CHAINS` independent accumulators (enough to cover the
//! fma latency times its issue rate on current x86 cores) and does one term
//! per accumulator per step, in the arithmetic of the mode: one fma (fast)
//! or a multiply and an add (exact). No memory is touched inside the loop.

use crate::dispatch::Mode;
use crate::simd::{run_on, LaneFn, Lanes, Token};
use std::time::Instant;

const CHAINS: usize = 12;

struct Peak {
    steps: usize,
    exact: bool,
}

impl LaneFn for Peak {
    type Output = f32;

    #[inline(always)]
    fn run<L: Lanes>(self) -> f32 {
        if self.exact {
            chains::<L, true>(self.steps)
        } else {
            chains::<L, false>(self.steps)
        }
    }
}

#[inline(always)]
fn chains<L: Lanes, const EXACT: bool>(steps: usize) -> f32 {
    // SAFETY: run inside run_on's trampoline for L; the only pointers are
    // to the local array `out`, valid for CHAINS·N ≤ 12·16 writes and reads.
    unsafe {
        let x = L::splat(std::hint::black_box(0.999_999));
        let y = L::splat(std::hint::black_box(1.0e-7));
        let mut acc = [L::zero(); CHAINS];
        for (i, a) in acc.iter_mut().enumerate() {
            *a = L::splat(i as f32);
        }
        for _ in 0..steps {
            for a in acc.iter_mut() {
                *a = if EXACT { a.mul(x).add(y) } else { a.fma(x, y) };
            }
        }
        let mut out = [0f32; CHAINS * 16];
        let mut s = 0.0;
        for (i, a) in acc.iter().enumerate() {
            a.store(out.as_mut_ptr().add(i * L::N));
            s += out[i * L::N];
        }
        s
    }
}

/// GFLOP/s of one thread on `token`'s path in `mode`'s arithmetic (2 flops
/// per fma or per multiply-add pair), the best of `repeats` runs of about
/// `seconds` each. With `thread_clock` (Linux only; elsewhere ignored) the
/// runs are timed in CPU seconds of the calling thread, which leaves out
/// the time other processes hold the core on a shared machine.
pub fn peak_gflops(
    token: Token,
    mode: Mode,
    seconds: f64,
    repeats: usize,
    thread_clock: bool,
) -> f64 {
    let exact = mode == Mode::Exact;
    let lanes = match token.path() {
        crate::dispatch::KernelPath::Scalar => 1,
        crate::dispatch::KernelPath::V128 => 4,
        crate::dispatch::KernelPath::Avx2 => 8,
        crate::dispatch::KernelPath::Avx512 => 16,
    };
    let time = |steps: usize| {
        let t = Clock::start(thread_clock);
        std::hint::black_box(run_on(token, Peak { steps, exact }));
        t.seconds()
    };
    // Calibrate the step count on a short run.
    let mut steps = 1 << 12;
    loop {
        let dt = time(steps);
        if dt > seconds / 8.0 || steps >= 1 << 34 {
            steps = ((steps as f64) * seconds / dt.max(1e-9)) as usize;
            break;
        }
        steps *= 4;
    }
    let steps = steps.max(1);
    let mut best = 0f64;
    for _ in 0..repeats.max(1) {
        let dt = time(steps);
        best = best.max(2.0 * (steps * CHAINS * lanes) as f64 / dt.max(1e-9) / 1e9);
    }
    best
}

/// A wall or thread-CPU stopwatch.
enum Clock {
    Wall(Instant),
    #[cfg(target_os = "linux")]
    Thread(f64),
}

impl Clock {
    fn start(thread: bool) -> Clock {
        #[cfg(target_os = "linux")]
        if thread {
            return Clock::Thread(thread_cpu_seconds());
        }
        let _ = thread;
        Clock::Wall(Instant::now())
    }

    fn seconds(&self) -> f64 {
        match self {
            Clock::Wall(t) => t.elapsed().as_secs_f64(),
            #[cfg(target_os = "linux")]
            Clock::Thread(t0) => thread_cpu_seconds() - t0,
        }
    }
}

#[cfg(target_os = "linux")]
fn thread_cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec (two 64-bit fields on
    // 64-bit Linux) to a valid local.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}
