// libFuzzer target: the config loader (fuzz_input.h, LoadConfigBytes). `make fuzz` runs it.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const greenrl::fuzz::ScratchFile scratch("config.yaml");
  greenrl::fuzz::LoadConfigBytes(data, size, scratch.path());
  return 0;
}
