// trained_agent.h: a finished (or stopped) run's agent, loaded back from its run directory, as
// `greenrl eval` and `greenrl export` use it.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/core/config.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/evaluate.h"

namespace greenrl::train {

// A run's agent as LoadTrainedAgent loads it: the algorithm with a checkpoint's parameters, and
// the VecNormalize statistics that go with them. The algorithm acts on observations normalised
// by `normalizer` when it is set (Algorithm::Act): EvaluatePolicy applies them.
struct TrainedAgent {
  Config config;                               // RUN_DIR/config.yaml, as LoadRunConfig reads it
  std::unique_ptr<algo::Algorithm> algorithm;  // with the checkpoint's parameters loaded
  // The run's statistics when normalize: true (the checkpoint's own, or an earlier build's
  // checkpoints/normalizer.json beside final.pt); nullopt otherwise.
  std::optional<NormalizerSnapshot> normalizer;
  std::string checkpoint;                        // the file loaded
  // True for checkpoints/final.pt; false for the newest resume checkpoint (a run stopped by a
  // signal, the energy budget or a crash), whose global step is resume_step.
  bool final_checkpoint = true;
  int64_t resume_step = 0;
  // What the caller says on stderr, one line each, after "greenrl: " (TrainedAgentFiles::notes).
  std::vector<std::string> notes;
};

// Where a run's trained agent is, found without building the agent: what LoadTrainedAgent loads
// and what `trained_agent` (TrainOptions; rl-zoo's --trained-agent) starts a new run from.
struct TrainedAgentFiles {
  Config config;           // RUN_DIR/config.yaml (the run's own seed)
  std::string checkpoint;  // checkpoints/final.pt, best.pt, or the newest resume checkpoint
  // True for final.pt and best.pt; false for the newest resume checkpoint (a run stopped by a
  // signal, the energy budget or a crash).
  bool final_checkpoint = true;
  // The resume checkpoint's global step, set for a normalize: true run only (whose statistics
  // are read from it); 0 otherwise.
  int64_t resume_step = 0;
  // The statistics that go with the checkpoint when the run has normalize: true: those final.pt
  // or best.pt records (normalizer.json beside a final.pt of an earlier build), or those in the
  // resume checkpoint; else nullopt.
  std::optional<NormalizerSnapshot> normalizer;
  // ResolveTrainedAgent: what training this agent cost, Wh (report::TrainedAgentReport).
  double energy_wh = std::numeric_limits<double>::quiet_NaN();
  // What the loading did that the user should hear of, for the caller to print (eval and export
  // always, train unless --quiet): a config.yaml key of the machine that trained the run that
  // does not work here and the value used instead ("<config.yaml>: device: got 'cuda'; ...;
  // using device cpu here (the trained agent does not depend on it)"), a damaged newest resume
  // checkpoint passed over ("skipping <path>: not a readable resume checkpoint").
  std::vector<std::string> notes;
  // The lookup that found it (LocateTrainedAgent's run_dir and field), and whether the lookup
  // chose the checkpoint itself: final.pt.pending, or the newest resume checkpoint that reads
  // (no step, or "last"). LoadNewestLoadable passes over a chosen one that does not load.
  std::string run_dir;
  std::string field;
  bool chosen = false;
};

// Finds the agent of run_dir (given_run_dir without its trailing slashes: "runs/a/" gives
// runs/a/checkpoints/..., in the result and in messages) as LoadTrainedAgent describes (best:
// checkpoints/best.pt).
// Errors: ConfigError("--run", path, "a run directory, not a checkpoint in it: --run <run dir>
// [--best] ...") when field is "--run" and run_dir is a file in a checkpoints/ folder;
// ConfigError(field, run_dir, ...) for a directory without config.yaml or a checkpoint, or without
// the statistics a normalize: true run needs (with best and field "--run", the field is "--best");
// ConfigError("normalize", ...) when config.yaml's normalize disagrees with the checkpoint (its
// statistics present for normalize: false, or absent for normalize: true);
// ConfigError("checkpoint", path, ...) for a resume checkpoint that does not read; the errors of
// LoadRunConfig, LoadNormalizer and ReadBestCheckpoint.
// step: "" (final.pt, else the newest resume checkpoint that reads), "last" (the newest resume
// checkpoint that reads, final.pt or not) or a step of a resume checkpoint (its
// checkpoints/step_<step>.pt); ConfigError("--checkpoint", step, ...) naming the run's steps for
// one it does not have, or with best.
TrainedAgentFiles LocateTrainedAgent(const std::string& given_run_dir, bool best,
                                     const std::string& field, const std::string& step = "");

// Loads *files (LocateTrainedAgent's) with `load`, which throws ConfigError when its checkpoint
// does not load (a CRC-32 mismatch, non-finite parameters, another network). When the lookup
// chose the checkpoint (files->chosen), one that does not load gives way to the one before, as
// train --resume takes them: final.pt.pending to the newest resume checkpoint, a resume
// checkpoint to the next older one. *files then holds the one that loaded (LocateTrainedAgent of
// its step), its notes the first lookup's followed by each passed over ("skipping <path>: <why>").
// Used by LoadTrainedAgent (eval, export) and by train's `trained_agent`.
// Errors: load's error for final.pt, best.pt or a step the user named; when none loads, the
// first (newest) one's error.
void LoadNewestLoadable(TrainedAgentFiles* files,
                        const std::function<void(const TrainedAgentFiles&)>& load);

// The config key `trained_agent` (rl-zoo's --trained-agent): `path` names the agent a new run
// with `config` starts from: a run directory (its final.pt, else its newest resume
// checkpoint, as LoadTrainedAgent; the trainer loads it with LoadNewestLoadable), or a run's
// checkpoints/best.pt, checkpoints/final.pt or one of its resume checkpoints
// (checkpoints/step_<12 digits>.pt, rl-zoo's rl_model_<N>_steps.zip).
// The run must have config's algo and env_id, and its normalize and the observation half of
// normalize_kwargs (norm_obs, clip_obs: what the policy saw); the network shape is
// checked when the checkpoint loads (Algorithm::LoadCheckpoint).
// energy_wh: the run's energy.json total_energy_wh plus its own trained_agent.energy_wh.
// notes: besides LocateTrainedAgent's, one for each key of config that differs from the agent's
// run without acting as config.yaml suggests: an init-only key (policy_kwargs.log_std_init,
// .ortho_init, SAC's auto ent_coef's initial value), whose value the trained parameters replace,
// and with normalize the reward half of the normaliser's settings (norm_reward, and with it
// clip_reward and gamma), which go on from config where rl-zoo's VecNormalize.load keeps the
// agent's.
// Errors: ConfigError("trained_agent", path, ...) for another kind of path, a missing one, or a
// run of another algo or env; ConfigError(key, value, ...) naming the trained agent's own value
// for normalize and normalize_kwargs.{norm_obs, clip_obs}; LocateTrainedAgent's.
TrainedAgentFiles ResolveTrainedAgent(const std::string& path, const Config& config);

// The report's trained_agent for a resumed run whose config has trained_agent `path`: as its
// first segment recorded it in run_dir/energy.json (so later training of the agent's run does
// not change it), else as ResolveTrainedAgent finds the agent now (a first segment killed before
// writing energy.json), else `path` with the energy unknown. No errors.
report::TrainedAgentReport TrainedAgentOfResumedRun(const std::string& path,
                                                    const std::string& run_dir,
                                                    const Config& config);

// Loads run_dir's config.yaml (with `seed` replacing the run's seed when given) and its
// checkpoints/final.pt, else its newest resume checkpoint (rank 0's), with the normaliser
// statistics the run trained with (those final.pt or the resume checkpoint stores;
// checkpoints/normalizer.json beside a final.pt of an earlier build). Sets LibTorch's and OpenMP's
// threads to the run's threads.torch. With `best`: checkpoints/best.pt instead, the policy of the
// run's evaluation with the highest mean reward (eval.save_best), with the normaliser statistics
// best.pt records when normalize: true (ReadBestCheckpoint; rl-zoo's `enjoy.py --load-best`);
// final_checkpoint is then true. Stochastic acting draws from the (replaced) seed whichever
// checkpoint loads (Algorithm::SeedActing), so the same parameters and seed give the same
// stochastic episodes. Errors: ConfigError("--run", run_dir, ...) for a directory without
// config.yaml or without any checkpoint, or a resume checkpoint without the statistics a normalize:
// true run needs; ConfigError("--best", run_dir, ...) for a run without checkpoints/best.pt, or
// whose best.pt lacks the statistics a normalize: true run needs; the errors of ReadBestCheckpoint;
// ConfigError("checkpoint", path, ...) for a checkpoint that does not load; the errors of
// LoadRunConfig and LoadNormalizer.
// step: as LocateTrainedAgent's (`greenrl eval --checkpoint`, rl-zoo's --load-checkpoint). With
// "" or "last", a checkpoint that reads but does not load (a CRC-32 mismatch, non-finite
// parameters, LoadResumeCheckpoint's errors) gives way to the one before (LoadNewestLoadable),
// each passed over named in notes; when none loads, the newest one's error.
TrainedAgent LoadTrainedAgent(const std::string& run_dir, std::optional<int64_t> seed = {},
                              bool best = false, const std::string& step = "");

// What `greenrl eval` and `greenrl export` print on stderr, after "greenrl <command>: ", when
// LoadTrainedAgent(run_dir) fell back to a resume checkpoint: "<run_dir> has no
// checkpoints/final.pt; using its newest resume checkpoint (step <resume_step>)" ("newest
// loadable" when newer ones were passed over), followed by "; it is still training (pid <pid>
// holds its train.lock)" while a `greenrl train` holds the run directory; "" when agent holds
// final.pt.
std::string ResumeCheckpointNotice(const std::string& run_dir, const TrainedAgent& agent);

// The same notice for the agent a `trained_agent` run loaded (files after LoadNewestLoadable),
// said by train unless --quiet; the step is the checkpoint's in files.run_dir's list. "" for
// final.pt and for a resume checkpoint the user named.
std::string ResumeCheckpointNotice(const TrainedAgentFiles& files);

}  // namespace greenrl::train
