#include "greenrl/train/trained_agent.h"

#include <filesystem>

#include "greenrl/core/errors.h"
#include "greenrl/env/registry.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {

TrainedAgent LoadTrainedAgent(const std::string& run_dir, std::optional<int64_t> seed, bool best) {
  namespace fs = std::filesystem;
  const std::string config_path = run_dir + "/config.yaml";
  // best.pt (with the statistics it records) with --best; else the finished run's final.pt (and
  // normalizer.json); a run stopped by a signal, the energy budget's stop without final.pt, or a
  // crash has only resume checkpoints: the newest of them (rank 0's).
  std::string checkpoint = run_dir + (best ? "/checkpoints/best.pt" : "/checkpoints/final.pt");
  const bool final_checkpoint = fs::exists(checkpoint);
  if (!final_checkpoint && !best) {
    const auto resume_checkpoints = ListCheckpoints(run_dir);
    checkpoint = resume_checkpoints.empty() ? "" : resume_checkpoints.back().second;
  }
  if (best && (!fs::exists(config_path) || !final_checkpoint)) {
    throw ConfigError("--best", run_dir,
                      "a run directory with config.yaml and checkpoints/best.pt (written at "
                      "each evaluation that beats the best mean reward so far; eval.save_best: "
                      "true, the default)");
  }
  if (!fs::exists(config_path) || checkpoint.empty()) {
    throw ConfigError("--run", run_dir,
                      "a run directory with config.yaml and checkpoints/final.pt or a resume "
                      "checkpoint checkpoints/step_*.pt");
  }
  TrainedAgent agent{LoadRunConfig(config_path, {}, seed),
                     /*algorithm=*/nullptr,
                     /*normalizer=*/std::nullopt,
                     checkpoint,
                     final_checkpoint,
                     /*resume_step=*/0};
  ConfigureThreads(static_cast<int>(agent.config.GetInt("threads.torch")));
  agent.algorithm = MakeAlgorithm(agent.config, env::FindEnvSpec(agent.config.GetString("env_id")));
  const bool normalize = agent.config.GetBool("normalize");
  if (best) {  // the statistics best.pt recorded with the policy
    const std::optional<BestEval> record = ReadBestCheckpoint(run_dir);
    if (normalize && !(record && record->normalizer)) {
      throw ConfigError("--best", run_dir,
                        "a run whose checkpoints/best.pt records the normaliser statistics "
                        "(normalize: true)");
    }
    agent.algorithm->LoadCheckpoint(agent.checkpoint);
    if (normalize) agent.normalizer = record->normalizer;
    return agent;
  }
  if (agent.final_checkpoint) {
    agent.algorithm->LoadCheckpoint(agent.checkpoint);
    if (normalize) agent.normalizer = LoadNormalizer(run_dir + "/checkpoints/normalizer.json");
    return agent;
  }
  const TrainerState state = LoadResumeCheckpoint(agent.algorithm.get(), agent.checkpoint);
  agent.resume_step = state.steps;
  if (normalize) {
    if (state.normalizer.empty()) {
      throw ConfigError("--run", run_dir,
                        "a run whose newest resume checkpoint (" + agent.checkpoint +
                            ") holds the normaliser statistics (normalize: true)");
    }
    agent.normalizer = NormalizerSnapshot{NormalizeOptionsFrom(agent.config), state.normalizer};
  }
  return agent;
}

std::string ResumeCheckpointNotice(const std::string& run_dir, const TrainedAgent& agent) {
  if (agent.final_checkpoint) return "";
  return run_dir + " has no checkpoints/final.pt; using its newest resume checkpoint (step " +
         std::to_string(agent.resume_step) + ")";
}

}  // namespace greenrl::train
