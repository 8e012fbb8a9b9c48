// greenrl keys: every config key of one algorithm, with its default and what it means, printed
// as the YAML of a preset (Config::ToYaml of the defaults), so the listing is also a file to
// start a preset from. The unknown-key error points here (ConfigSchema::key_list_hint).
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "greenrl/core/config.h"
#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"
#include "greenrl/train/run_config.h"

namespace greenrl::cli {

Runner RegisterKeys(CLI::App& app) {
  auto algo = std::make_shared<std::string>("ppo");
  CLI::App* cmd = app.add_subcommand(
      "keys", "List an algorithm's config keys with their defaults and meaning, as YAML");
  cmd->add_option("--algo", *algo, "ppo, dqn or sac (default ppo)");
  return [algo]() {
    const std::vector<std::string>& ids = train::AlgorithmIds();
    if (std::find(ids.begin(), ids.end(), *algo) == ids.end()) {
      throw ConfigError("--algo", *algo, OneOfWithHint(*algo, ids));
    }
    // The schema's defaults, env_id included (SAC's is Pendulum-v1), so the listing trains as it
    // stands.
    const ConfigSchema schema = train::BuildSchema(*algo);
    const Config config = Config::Load(schema, "", {"algo=" + *algo});
    std::string yaml = config.ToYaml();
    yaml.erase(0, yaml.find('\n') + 1);  // ToYaml's "resolved config" line
    // SB3's keys that greenrl has at their default only, as comments: a file may write them out
    // at that value (rl-zoo's files do), another value is refused.
    std::string fixed;
    for (const std::string& key : schema.DefaultOnlyKeys()) {
      const ConfigSchema::DefaultOnly& entry = *schema.DefaultOnlyKey(key);
      fixed += fmt::format("# {}: {}  # {}\n", key, entry.value, entry.why);
    }
    if (!fixed.empty()) {
      fixed =
          "# SB3's keys that greenrl has at SB3's default only: a preset may write them at "
          "that value (no effect), another value is refused\n" +
          fixed;
    }
    fmt::print(
        "# greenrl keys --algo {}: every key with its default and meaning (README \"Config "
        "keys\"); set them in a preset (greenrl train --config FILE) or with --set key=value\n{}{}",
        *algo, yaml, fixed);
    return 0;
  };
}

}  // namespace greenrl::cli
