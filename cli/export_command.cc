// greenrl export: writes a trained run's deterministic policy as a TorchScript module that runs
// without greenrl (train/policy_export.h; README "Using a trained policy").
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "cli/commands.h"
#include "greenrl/core/errors.h"
#include "greenrl/train/policy_export.h"
#include "greenrl/train/trained_agent.h"

namespace greenrl::cli {

namespace {
struct ExportArgs {
  std::string run_dir;
  std::string out;    // default: RUN_DIR/policy.torchscript.pt
  bool best = false;  // checkpoints/best.pt instead of the final (or newest) checkpoint
  std::string checkpoint;  // a resume checkpoint's step, or last (as eval's --checkpoint)
  bool quiet = false;      // no notes on stderr (eval's and train's --quiet)
};
}  // namespace

Runner RegisterExport(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write a trained run's deterministic policy as a TorchScript module (torch.jit.load)");
  cmd->add_option("--run", args->run_dir, "run directory written by greenrl train")->required();
  CLI::Option* out_option =
      cmd->add_option("--out", args->out,
                      "the module's file (default: RUN_DIR/policy.torchscript.pt, with --best "
                      "RUN_DIR/policy_best.torchscript.pt); written atomically");
  cmd->add_flag("--best", args->best,
                "export the policy of the run's best evaluation, checkpoints/best.pt "
                "(eval.save_best)");
  CLI::Option* checkpoint_option = cmd->add_option(
      "--checkpoint", args->checkpoint,
      "a resume checkpoint instead: its step (checkpoints/step_<STEP, 12 digits>.pt) or last "
      "(the newest); the default --out is then RUN_DIR/policy_step_<STEP>.torchscript.pt");
  cmd->add_flag("--quiet", args->quiet,
                "no notes on the checkpoint loaded on stderr (as eval --quiet); stdout names it");
  return [args, out_option, checkpoint_option]() {
    // A flag given an empty value is refused, not read as absent.
    if (out_option->count() > 0 && args->out.empty()) {
      throw ConfigError("--out", "", "a file path");
    }
    if (checkpoint_option->count() > 0 && args->checkpoint.empty()) {
      throw ConfigError("--checkpoint", "",
                        "a step of one of the run's resume checkpoints, or last");
    }
    if (std::filesystem::is_directory(args->out)) {
      throw ConfigError("--out", args->out,
                        "a file path (it is a directory: e.g. --out " +
                            (std::filesystem::path(args->out) / "policy.torchscript.pt").string() +
                            ")");
    }
    // ONNX is another format: a file named .onnx holding TorchScript would fail in ONNX
    // Runtime far from here.
    if (std::filesystem::path(args->out).extension() == ".onnx") {
      throw ConfigError("--out", args->out,
                        "a TorchScript file, e.g. policy.torchscript.pt (greenrl export writes "
                        "TorchScript, not ONNX; for ONNX, load it in Python with torch.jit.load "
                        "and give it to torch.onnx.export with dynamo=False)");
    }
    // An existing file is replaced only when it is a module export wrote: a mistyped --out
    // (the run's checkpoints/final.pt, its config.yaml) must never destroy the run.
    auto refuse_other_file = [](const std::string& path) {
      std::error_code ec;  // an empty file (mktemp's) is nothing to keep
      if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > 0 && !ec &&
          !train::IsExportedPolicy(path)) {
        throw ConfigError("--out", path,
                          "a new file, or a module greenrl export wrote (replaced); this file is "
                          "something else (a checkpoint, config or report of a run?) and is "
                          "left as it is: give another path");
      }
    };
    if (!args->out.empty()) refuse_other_file(args->out);  // before any work
    // A folder that does not exist is refused before any work, not after the agent is loaded.
    if (const std::filesystem::path parent = std::filesystem::path(args->out).parent_path();
        !args->out.empty() && !parent.empty() && !std::filesystem::is_directory(parent)) {
      throw ConfigError(
          "--out", args->out,
          "a file in an existing folder (" + parent.string() + " does not exist: create it first)");
    }
    const train::TrainedAgent agent =
        train::LoadTrainedAgent(args->run_dir, std::nullopt, args->best, args->checkpoint);
    for (const std::string& note : agent.notes) {
      if (!args->quiet) fmt::print(stderr, "greenrl: {}\n", note);
    }
    if (!args->quiet && !agent.final_checkpoint && args->checkpoint.empty()) {
      fmt::print(stderr, "greenrl export: {}\n",
                 train::ResumeCheckpointNotice(args->run_dir, agent));
    }
    const std::string out =
        !args->out.empty() ? args->out
        : args->best       ? args->run_dir + "/policy_best.torchscript.pt"
        // A resume checkpoint (named, or the newest of a run without final.pt) is no final policy:
        // named by its step, so that the run's final export, later, does not share its name.
        : !args->checkpoint.empty() || !agent.final_checkpoint
            ? fmt::format("{}/policy_step_{}.torchscript.pt", args->run_dir, agent.resume_step)
            : args->run_dir + "/policy.torchscript.pt";
    refuse_other_file(out);  // the default name too
    const std::string env_id = agent.config.GetString("env_id");
    const algo::DeterministicPolicy policy = agent.algorithm->ExportDeterministicPolicy();
    train::ExportTorchScriptPolicy(policy, agent.normalizer ? &*agent.normalizer : nullptr,
                                   {env_id, agent.checkpoint}, out);
    const bool normalized = agent.normalizer && agent.normalizer->options.norm_obs;
    fmt::print("greenrl export: {} on {} from {}\n", policy.algo, env_id, agent.checkpoint);
    fmt::print("  wrote          {}\n", out);
    fmt::print("  forward(obs)   float32 [N, {}] raw observations{} -> {}\n", policy.obs_dim,
               normalized ? " (the run's VecNormalize statistics inside, frozen)" : "",
               policy.head == algo::PolicyHead::kArgmax
                   ? "int64 [N] actions (argmax)"
                   : fmt::format("float32 [N, {}] actions in the Box", policy.action_dim));
    fmt::print(
        "  Python         policy = torch.jit.load(\"{}\"); action = "
        "policy(torch.as_tensor(obs)).numpy()\n",
        out);
    return 0;
  };
}

}  // namespace greenrl::cli
