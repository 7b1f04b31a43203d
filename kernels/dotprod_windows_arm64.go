package kernels

import "golang.org/x/sys/cpu"

// hasDotProd reports the ARMv8.2 dot-product extension. klauspost/cpuid
// learns arm64 features from the OS (Linux HWCAP, macOS sysctl) and knows no
// Windows source, so on Windows it would report none and every Snapdragon X
// would run the ARMv8.0 rows; x/sys/cpu asks Windows
// (IsProcessorFeaturePresent(PF_ARM_V82_DP_INSTRUCTIONS_AVAILABLE)).
func hasDotProd() bool { return cpu.ARM64.HasASIMDDP }
