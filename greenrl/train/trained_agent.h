// trained_agent.h: a finished (or stopped) run's agent, loaded back from its run directory, as
// `greenrl eval` and `greenrl export` use it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "greenrl/algo/algorithm.h"
#include "greenrl/core/config.h"
#include "greenrl/train/evaluate.h"

namespace greenrl::train {

struct TrainedAgent {
  Config config;                                 // RUN_DIR/config.yaml, as LoadRunConfig reads it
  std::unique_ptr<algo::Algorithm> algorithm;    // with the checkpoint's parameters loaded
  std::optional<NormalizerSnapshot> normalizer;  // the run's statistics when normalize: true
  std::string checkpoint;                        // the file loaded
  // True for checkpoints/final.pt; false for the newest resume checkpoint (a run stopped by a
  // signal, the energy budget or a crash), whose global step is resume_step.
  bool final_checkpoint = true;
  int64_t resume_step = 0;
};

// Loads run_dir's config.yaml (with `seed` replacing the run's seed when given) and its
// checkpoints/final.pt, else its newest resume checkpoint (rank 0's), with the normaliser
// statistics the run trained with (checkpoints/normalizer.json beside final.pt, or those stored in
// the resume checkpoint). Sets LibTorch's and OpenMP's threads to the run's threads.torch.
// With `best`: checkpoints/best.pt instead, the policy of the run's evaluation with the highest
// mean reward (eval.save_best), with the normaliser statistics best.pt records when
// normalize: true (ReadBestCheckpoint; rl-zoo's `enjoy.py --load-best`); final_checkpoint is
// then true.
// Errors: ConfigError("--run", run_dir, ...) for a directory without config.yaml or without any
// checkpoint, or a resume checkpoint without the statistics a normalize: true run needs;
// ConfigError("--best", run_dir, ...) for a run without checkpoints/best.pt, or whose best.pt
// lacks the statistics a normalize: true run needs; the errors of ReadBestCheckpoint;
// ConfigError("checkpoint", path, ...) for a checkpoint that does not load; the errors of
// LoadRunConfig and LoadNormalizer.
TrainedAgent LoadTrainedAgent(const std::string& run_dir, std::optional<int64_t> seed = {},
                              bool best = false);

// What `greenrl eval` and `greenrl export` print on stderr, after "greenrl <command>: ", when
// LoadTrainedAgent(run_dir) fell back to a resume checkpoint: "<run_dir> has no
// checkpoints/final.pt; using its newest resume checkpoint (step <resume_step>)"; "" when agent
// holds final.pt.
std::string ResumeCheckpointNotice(const std::string& run_dir, const TrainedAgent& agent);

}  // namespace greenrl::train
