//! The floating-point environment of the kernels: subnormals honoured.

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
}
