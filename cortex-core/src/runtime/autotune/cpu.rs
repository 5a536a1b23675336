//! The CPU an autotune decision was measured on: its model name and the
//! features kernels care about, detected at run time.

use std::io::Read;

/// A CPU feature a kernel may need, and that keys the autotune cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuFeature {
    /// x86-64 SSE4.1.
    Sse41,
    /// x86-64 AVX2.
    Avx2,
    /// x86-64 FMA.
    Fma,
    /// AArch64 NEON.
    Neon,
}

impl CpuFeature {
    /// Every feature known, in the order the cache lists them.
    pub const ALL: [CpuFeature; 4] = [
        CpuFeature::Sse41,
        CpuFeature::Avx2,
        CpuFeature::Fma,
        CpuFeature::Neon,
    ];

    /// Its name in the cache file.
    pub fn name(self) -> &'static str {
        match self {
            CpuFeature::Sse41 => "sse4.1",
            CpuFeature::Avx2 => "avx2",
            CpuFeature::Fma => "fma",
            CpuFeature::Neon => "neon",
        }
    }

    /// Whether this CPU has it (detected at run time).
    pub fn detected(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                CpuFeature::Sse41 => std::arch::is_x86_feature_detected!("sse4.1"),
                CpuFeature::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
                CpuFeature::Fma => std::arch::is_x86_feature_detected!("fma"),
                CpuFeature::Neon => false,
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            matches!(self, CpuFeature::Neon)
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            false
        }
    }
}

/// The most bytes of `/proc/cpuinfo` read: the first processor's block,
/// which names the model, is a few hundred bytes.
const MAX_CPUINFO_BYTES: u64 = 64 << 10;

/// The CPU's model name (`model name` of `/proc/cpuinfo`, at most 256
/// characters), or `unknown`.
pub(crate) fn cpu_model() -> String {
    // Linux names the model; elsewhere the features alone key the file.
    let mut text = Vec::new();
    let read = std::fs::File::open("/proc/cpuinfo")
        .and_then(|f| f.take(MAX_CPUINFO_BYTES).read_to_end(&mut text));
    if read.is_err() {
        return "unknown".to_string();
    }
    String::from_utf8_lossy(&text)
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().chars().take(256).collect())
        .unwrap_or_else(|| "unknown".to_string())
}
