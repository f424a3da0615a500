#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (LLVM 11 and later), for a fuzz target whose `main` is its own: SwiftPM
/// names an executable's entry point after its module, so libFuzzer's `main` cannot be used.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
