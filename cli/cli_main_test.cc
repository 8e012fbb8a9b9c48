// cli::Main with a program's own env registration (cli_main.h): a registration error is a
// "greenrl: error:" line and exit 2, not an uncaught exception, and the program's name is the
// one greenrl's suggested commands use.
#include "cli/cli_main.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "greenrl/core/install_paths.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/spaces.h"
#include "greenrl/env/testing/one_value_spec.h"

namespace greenrl::cli {
namespace {

// An env that takes an id greenrl already has (RegisterEnv refuses it).
class Duplicate {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const env::EnvSpec& Spec() {
    static const env::EnvSpec spec = env::testing::OneValueSpec("CartPole-v1", 1.0f, 10);
    return spec;
  }
  std::array<float, kObsDim> Reset(uint64_t) { return Reset(); }
  std::array<float, kObsDim> Reset() { return {0.0f}; }
  StepResult Step(Action) { return {}; }
};

TEST(CliMainTest, RegistrationErrorIsABadInputLineAndTheProgramIsNamed) {
  std::string program = "/some/where/my_rl", command = "envs";
  char* argv[] = {program.data(), command.data(), nullptr};
  ::testing::internal::CaptureStderr();
  const int code = Main(2, argv, [] { env::RegisterEnv(env::EnvRegistrationOf<Duplicate>()); });
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_EQ(
      err.rfind("greenrl: error: registering the program's envs: env_id: got 'CartPole-v1'", 0), 0u)
      << err;
  EXPECT_EQ(ProgramName(), "my_rl");
}

}  // namespace
}  // namespace greenrl::cli
