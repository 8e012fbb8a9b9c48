// cli_main.cc: the `greenrl` command line (cli_main.h).
#include "cli/cli_main.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/presets.h"
#include "cli/zoo_flags.h"
#include "greenrl/core/allocator.h"
#include "greenrl/core/cpu_info.h"
#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/openblas_core.h"

namespace greenrl::cli {

namespace {

// The algorithm a command line names before its config is loaded: --algo, else the --config
// file's (AlgoOfConfigFile); "" when neither says (a default ppo run), when the command has no
// such flags, or when the flag that would say was given more than once.
std::string AlgoGiven(const CLI::App& sub) {
  // Once each: a flag given twice is the error being reported, and as<> would throw on it.
  const CLI::Option* algo = sub.get_option_no_throw("--algo");
  if (algo != nullptr && algo->count() == 1) return algo->results().front();
  const CLI::Option* config = sub.get_option_no_throw("--config");
  if (config != nullptr && config->count() == 1) return AlgoOfConfigFile(config->results().front());
  return "";
}

}  // namespace

int Main(int argc, char** argv) {
  // Before any thread starts: OpenBLAS's generic kernels on a CPU it does not know are ~5x slower.
  greenrl::RestartWithOpenBlasCoreTypeIfNeeded(argv, "greenrl");
  greenrl::KeepFreedMemory();  // LibTorch paths free and reallocate tensors every step
  // A rank of `greenrl launch` writes stdout into the launcher's pipe, which the C library
  // buffers in blocks: its lines (the data-parallel line, the summary) would reach the terminal
  // seconds late and out of order with its stderr. Line-buffered, as on a terminal.
  if (const char* launched = std::getenv("GREENRL_LAUNCH");
      launched != nullptr && std::string(launched) == "1") {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
  }
  CLI::App app{"greenrl: fast RL training with energy and carbon accounting"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("greenrl ") + GREENRL_VERSION,
                       "print greenrl's version and exit");
  const auto train = greenrl::cli::RegisterTrain(app);
  const auto eval = greenrl::cli::RegisterEval(app);
  const auto export_policy = greenrl::cli::RegisterExport(app);
  const auto bench = greenrl::cli::RegisterBench(app);
  const auto meters = greenrl::cli::RegisterMeters(app);
  const auto envs = greenrl::cli::RegisterEnvs(app);
  const auto keys = greenrl::cli::RegisterKeys(app);
  const auto launch = greenrl::cli::RegisterLaunch(app);
  const auto report = greenrl::cli::RegisterReport(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    if (app.get_subcommands().empty()) {
      if (argc < 2) {  // bare `greenrl`: the usage, then what is missing
        fmt::print(stderr, "{}", app.help());
        fmt::print(
            stderr,
            "greenrl: error: command: none given; one of train, eval, export, bench, meters, "
            "envs, keys, launch, report\n");
        return 2;
      }
      // A misspelt command ("trian", "Train"), or rl-zoo's script names (enjoy.py: eval).
      const std::string given = argv[1];
      std::string hint = given == "enjoy" || given == "enjoy.py" ? "did you mean 'eval'? "
                         : given == "train.py"
                             ? "did you mean 'train'? "
                             : DidYouMean(given, {"train", "eval", "export", "bench", "meters",
                                                  "envs", "keys", "launch", "report"});
      if (given == "help") hint = "`greenrl --help` lists them; ";
      fmt::print(stderr,
                 "greenrl: error: command: got '{}'; {}expected one of train, eval, export, "
                 "bench, meters, envs, keys, launch, report (see `greenrl --help`)\n",
                 given, hint);
      return 2;
    }
    // A value CLI11 could not convert ("Could not convert: --seed = abc"): the one-line form
    // of every other bad input, with the option's type as what is accepted.
    const std::string what = e.what(), prefix = "Could not convert: ";
    const size_t eq = what.find(" = ");
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr && what.rfind(prefix, 0) == 0 &&
        eq != std::string::npos) {
      const std::string name = what.substr(prefix.size(), eq - prefix.size());
      CLI::App* sub = app.get_subcommands().front();
      const CLI::Option* option = sub->get_option_no_throw(name);
      const std::string type = option != nullptr ? option->get_type_name() : "";
      const char* accepted = type == "INT"     ? "an integer"
                             : type == "UINT"  ? "an integer >= 0"
                             : type == "FLOAT" ? "a number"
                                               : "a value of the option's type";
      fmt::print(stderr, "greenrl: error: {}: got '{}'; {} (see `greenrl {} --help`)\n", name,
                 what.substr(eq + 3), accepted, sub->get_name());
      return 2;
    }
    // A value outside a CLI::Range check ("--seed: Value 99 not in range 0 to 4294967295"), in
    // the same form.
    const std::string value_tag = ": Value ", range_tag = " not in range ", to_tag = " to ";
    const size_t v_at = what.find(value_tag), r_at = what.find(range_tag);
    const size_t to_at = r_at == std::string::npos ? r_at : what.find(to_tag, r_at);
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr && v_at != std::string::npos &&
        r_at != std::string::npos && to_at != std::string::npos && v_at < r_at) {
      const std::string name = what.substr(0, v_at);
      const std::string value =
          what.substr(v_at + value_tag.size(), r_at - v_at - value_tag.size());
      const std::string low = what.substr(r_at + range_tag.size(), to_at - r_at - range_tag.size());
      const std::string high = what.substr(to_at + to_tag.size());
      // rl-zoo's --seed -1 (a random seed), and its other flags in the same command, which
      // CLI11 stopped before reading.
      CLI::App* sub = app.get_subcommands().front();
      const std::string random_seed =
          name == "--seed" && value.rfind('-', 0) == 0
              ? std::string(
                    " (rl-zoo's --seed -1 draws a random seed; here give any N, or "
                    "leave --seed out for ") +
                    (sub->get_name() == "eval" ? "the run's own seed)"
                                               : "the preset's seed, default 0)")
              : "";
      std::vector<std::string> rest;
      for (int i = 2; i < argc; ++i) rest.push_back(argv[i]);
      const std::string zoo = ZooFlagsHint(sub->get_name(), rest, AlgoGiven(*sub)).hint;
      fmt::print(
          stderr,
          "greenrl: error: {}: got '{}'; an integer in [{}, {}]{}{} (see `greenrl {} --help`)\n",
          name, value, low, high, random_seed, zoo.empty() ? "" : "; " + zoo, sub->get_name());
      return 2;
    }
    // A one-value flag given more than once ("--config: At Most 1 required but received 2"): in
    // greenrl's words.
    const std::string at_most = ": At Most 1 required but received ";
    if (const size_t at = what.find(at_most);
        dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && at != std::string::npos) {
      CLI::App* sub = app.get_subcommands().front();
      fmt::print(stderr, "greenrl: error: {}: given {} times; once (see `greenrl {} --help`)\n",
                 what.substr(0, at), what.substr(at + at_most.size()), sub->get_name());
      return 2;
    }
    // The same one-line form as every other bad input, naming the argument CLI11 refused.
    // launch's own flags end at `--`: a greenrl command's flags before it are the usual slip.
    const bool launch_flags = app.get_subcommands().front()->get_name() == "launch" &&
                              what.find("not expected") != std::string::npos;
    // A misspelt flag ("The following argument was not expected: --bset", or, when it left a
    // required option unset, "--run is required" with the flag among the leftovers): the
    // command's own flag it is closest to, as for keys and env ids.
    if (!launch_flags) {
      CLI::App* sub = app.get_subcommands().front();
      std::vector<std::string> flags;
      for (const CLI::Option* option : sub->get_options()) {
        for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
      }
      // rl-zoo's flags (train.py's -n, -params, ...; enjoy.py's --load-best, ...), spelt as
      // greenrl takes them, with the values given; any other unknown flag beside them is named
      // too, with the command's own flag it is closest to.
      const ZooFlags zoo = ZooFlagsHint(sub->get_name(), sub->remaining(), AlgoGiven(*sub));
      if (!zoo.hint.empty()) {
        std::string also;
        for (const std::string& other : zoo.others) {
          if (!LooksLikeFlag(other)) continue;  // a value of some flag
          const std::string flag = other.substr(0, other.find('='));
          std::string hint = DidYouMean(flag, flags);  // "did you mean '--x'? " or ""
          if (!hint.empty()) hint = ": " + hint.substr(0, hint.size() - 1);
          also += "; " + flag + " is no flag of `greenrl " + sub->get_name() + "`" + hint;
        }
        const bool extras_only = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
        fmt::print(stderr, "greenrl: error: {}{}{} (see `greenrl {} --help`)\n",
                   extras_only ? "" : what + "; ", zoo.hint, also, sub->get_name());
        return 2;
      }
      const bool extras_error = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
      // Every unknown flag, in the order given, each with the command's own flag it is closest
      // to where one is (CLI11's "not expected" list is reversed and mixes in the values).
      std::string unknown;
      for (const std::string& extra : sub->remaining()) {
        if (!LooksLikeFlag(extra)) continue;  // a value (a negative number included)
        const std::string flag = extra.substr(0, extra.find('='));
        std::string hint = DidYouMean(flag, flags);  // "did you mean '--x'? " or ""
        if (!hint.empty()) hint = ": " + hint.substr(0, hint.size() - 1);
        unknown += (unknown.empty() ? "" : "; ") + flag + " is no flag of `greenrl " +
                   sub->get_name() + "`" + hint;
      }
      if (!unknown.empty() && (extras_error || what.find("is required") != std::string::npos)) {
        fmt::print(stderr, "greenrl: error: {}{} (see `greenrl {} --help`)\n",
                   extras_error ? "" : what + "; ", unknown, sub->get_name());
        return 2;
      }
    }
    // `greenrl eval runs/x` (`greenrl report` takes its run directory without a flag): the
    // directory goes after --run.
    if (!launch_flags && what.find("--run is required") != std::string::npos) {
      CLI::App* sub = app.get_subcommands().front();
      for (const std::string& extra : sub->remaining()) {
        if (extra.empty() || extra[0] == '-') continue;
        fmt::print(stderr,
                   "greenrl: error: --run is required: the run directory goes after it, "
                   "`greenrl {} --run {}` (see `greenrl {} --help`)\n",
                   sub->get_name(), extra, sub->get_name());
        return 2;
      }
    }
    // The command's own help where one was given (`greenrl report ... --target-metric X`).
    const std::vector<CLI::App*> given = app.get_subcommands();
    const std::string see = given.empty() ? "`greenrl --help` or `greenrl <command> --help`"
                                          : "`greenrl " + given.front()->get_name() + " --help`";
    fmt::print(
        stderr, "greenrl: error: {} (see {}){}\n", e.what(), see,
        launch_flags ? "; the command goes after --: greenrl launch --nproc N -- train ..." : "");
    return 2;
  }
  try {
    if (app.got_subcommand("train")) return train();
    if (app.got_subcommand("eval")) return eval();
    if (app.got_subcommand("export")) return export_policy();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("meters")) return meters();
    if (app.got_subcommand("envs")) return envs();
    if (app.got_subcommand("keys")) return keys();
    if (app.got_subcommand("launch")) return launch();
    if (app.got_subcommand("report")) return report();
  } catch (const greenrl::ConfigError& e) {
    fmt::print(stderr, "greenrl: error: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    // The sizes that allocate in proportion to a key (a replay buffer names buffer_size itself).
    const double memory = MachineMemoryBytes();
    fmt::print(stderr,
               "greenrl: failed: out of memory (std::bad_alloc){}: the arrays that grow with the "
               "config are the rollout (n_steps x n_envs rows), the minibatch (batch_size rows; "
               "PPO's at most the rollout's), the replay buffer (buffer_size rows) and the envs "
               "(n_envs)\n",
               memory > 0 ? fmt::format("; this machine has {:.1f} GB", memory / 1e9) : "");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "greenrl: failed: {}\n", e.what());
    return 1;
  }
  return 2;
}

int Main(int argc, char** argv, const std::function<void()>& register_envs) {
  if (argc > 0 && argv[0] != nullptr) {
    greenrl::SetProgramName(std::filesystem::path(argv[0]).filename().string());
  }
  try {
    if (register_envs) register_envs();
  } catch (const std::exception& e) {  // ConfigError (a duplicate id), invalid_argument (a spec)
    fmt::print(stderr, "greenrl: error: registering the program's envs: {}\n", e.what());
    return 2;
  }
  return Main(argc, argv);
}

}  // namespace greenrl::cli
