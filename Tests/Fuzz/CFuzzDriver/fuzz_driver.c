// Declarations only (include/fuzz_driver.h); libFuzzer itself is linked by -sanitize=fuzzer.
#include "fuzz_driver.h"
