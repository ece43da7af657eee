//! The kernel path (detected, cached, forced) and the arithmetic mode.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
