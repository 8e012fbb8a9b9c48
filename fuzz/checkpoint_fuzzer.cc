// libFuzzer target: the checkpoint reader (fuzz_input.h, LoadCheckpointBytes). `make fuzz` runs
// it, seeded with a real PPO CartPole checkpoint (fuzz/corpus/checkpoint).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const greenrl::fuzz::ScratchFile scratch("checkpoint.pt");
  greenrl::fuzz::LoadCheckpointBytes(data, size, scratch.path());
  return 0;
}
