#include "greenrl/train/trained_agent.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "greenrl/core/errors.h"
#include "greenrl/core/file_lock.h"
#include "greenrl/energy/select.h"
#include "greenrl/env/registry.h"
#include "greenrl/report/compare.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {
namespace {

// A run's energy.json `trained_agent` object (energy_wh NaN where it is null); nullopt when the
// run did not start from a trained agent. Errors: nlohmann's for a malformed object.
std::optional<report::TrainedAgentReport> RecordedTrainedAgent(const nlohmann::json& energy) {
  const auto it = energy.find("trained_agent");
  if (it == energy.end() || !it->is_object()) return std::nullopt;
  const nlohmann::json& wh = it->at("energy_wh");
  return report::TrainedAgentReport{it->at("checkpoint").get<std::string>(),
                                    wh.is_number() ? wh.get<double>() : NAN};
}

// A run's config.yaml for using its agent on this machine (eval, export, a trained_agent): the
// keys that describe the machine that trained it rather than the agent (its device, its energy
// meter, its carbon-intensity file) fall back, said on stderr, when they do not work here, so a
// run trained on a GPU or a RAPL machine, or moved with its series left behind, still loads.
// Errors: every other ConfigError of LoadRunConfig.
Config LoadAgentConfig(const std::string& path, std::vector<std::string>* notes) {
  static const std::vector<std::pair<std::string, std::string>> kFallbacks = {
      {"device", "cpu"},
      {"precision", "fp32"},  // fp16 autocast needs CUDA: refused once the device is cpu
      {"energy.meter", "auto"},
      {"carbon.intensity_csv", "''"}};
  std::vector<std::string> overrides;
  for (;;) {
    try {
      Config config = LoadRunConfig(path, overrides, std::nullopt);
      // energy.meter: rapl is checked where the meter is made (energy::SelectMeter): here.
      if (config.GetString("energy.meter") == "rapl") {
        energy::SelectMeter(MeterOptionsFrom(config));
      }
      return config;
    } catch (const ConfigError& e) {
      const auto it = std::find_if(kFallbacks.begin(), kFallbacks.end(),
                                   [&](const auto& f) { return f.first == e.field(); });
      const std::string set = it == kFallbacks.end() ? "" : it->first + "=" + it->second;
      if (set.empty() || std::find(overrides.begin(), overrides.end(), set) != overrides.end()) {
        throw;
      }
      // Named by the file, unless the error names it already ("key (in FILE): ...").
      const std::string what = e.what();
      notes->push_back(fmt::format(
          "{}{}; using {} {} here (the trained agent does not depend on it)",
          what.find(path) == std::string::npos ? path + ": " : "", what, it->first, it->second));
      overrides.push_back(set);
    }
  }
}

// The newest of `checkpoints` (ListCheckpoints order) that reads as a resume checkpoint, as
// train --resume takes it: a damaged newest one (a truncated copy, or one a running training is
// replacing) gives way to the one before, each passed over named in *skipped. "" when none reads.
std::string NewestReadableCheckpoint(
    const std::vector<std::pair<int64_t, std::string>>& checkpoints,
    std::vector<std::string>* skipped) {
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    if (PeekTrainerState(it->second)) return it->second;
    skipped->push_back("skipping " + it->second + ": not a readable resume checkpoint");
  }
  return "";
}

// Whether run_dir's final.pt.pending reads as an archive with its statistics entry (a truncated
// one does not: it gives way to the resume checkpoints, said in *skipped, as one that reads but
// does not load gives way in LoadNewestLoadable).
bool FinalPendingReads(const std::string& run_dir, std::vector<std::string>* skipped) {
  try {
    ReadFinalNormalizer(FinalPendingPath(run_dir));
    return true;
  } catch (const ConfigError& e) {
    skipped->push_back("skipping " + FinalPendingPath(run_dir) + ": " + e.what());
    return false;
  }
}

// --checkpoint STEP|last: run_dir's checkpoints/step_<STEP>.pt, or with "last" its newest resume
// checkpoint that reads (rl-zoo's --load-checkpoint N and --load-last-checkpoint), each newer one
// passed over named in *skipped, as without --checkpoint.
// Errors: ConfigError("--checkpoint", step, ...) naming the steps the run has.
std::string ResumeCheckpointOfStep(const std::string& run_dir, const std::string& step,
                                   std::vector<std::string>* skipped) {
  const auto checkpoints = ListCheckpoints(run_dir);
  std::string steps;
  for (const auto& [s, path] : checkpoints)
    steps += (steps.empty() ? "" : ", ") + std::to_string(s);
  const std::string accepted =
      checkpoints.empty()
          ? "a run with resume checkpoints (checkpoints/step_*.pt), which " + run_dir +
                " has none of (checkpoint_freq, checkpoint_keep); without --checkpoint, its "
                "final.pt"
          : "last, or the step of one of the run's resume checkpoints: " + steps +
                " (checkpoints/step_*.pt; checkpoint_keep keeps the newest)";
  if (step == "last") {
    const std::string newest = NewestReadableCheckpoint(checkpoints, skipped);
    if (!newest.empty()) return newest;
    throw ConfigError("--checkpoint", step, accepted);
  }
  char* end = nullptr;
  const long long wanted = std::strtoll(step.c_str(), &end, 10);
  if (!step.empty() && end != nullptr && *end == '\0') {
    for (const auto& [s, path] : checkpoints) {
      if (s == wanted) return path;
    }
  }
  throw ConfigError("--checkpoint", step, accepted);
}

}  // namespace

TrainedAgentFiles LocateTrainedAgent(const std::string& given_run_dir, bool best,
                                     const std::string& field, const std::string& step) {
  namespace fs = std::filesystem;
  // "runs/a/" names runs/a: its files' paths, as messages give them, without a doubled slash.
  std::string run_dir = given_run_dir;
  while (run_dir.size() > 1 && run_dir.back() == '/') run_dir.pop_back();
  // A checkpoint's path where the run directory goes (train's trained_agent takes one): name the
  // flags that pick it.
  std::error_code ec;
  if (const fs::path given(run_dir); field == "--run" && fs::is_regular_file(given, ec) &&
                                     given.parent_path().filename() == "checkpoints") {
    const std::string run = given.parent_path().parent_path().string();
    const std::string name = given.filename().string();
    const std::string pick =
        name == "best.pt" ? " --best"
        : name.rfind("step_", 0) == 0 && name.size() > 8
            ? " --checkpoint " + std::to_string(std::strtoll(name.c_str() + 5, nullptr, 10))
            : "";
    throw ConfigError("--run", run_dir,
                      "a run directory, not a checkpoint in it: --run " +
                          (run.empty() ? "." : run) + pick +
                          " (without --best or --checkpoint: final.pt, or an unfinished run's "
                          "newest resume checkpoint)");
  }
  const std::string config_path = run_dir + "/config.yaml";
  // best.pt (with the statistics it records) with `best`; else the finished run's final.pt (and
  // normalizer.json); a run stopped by a signal, the energy budget's stop without final.pt, or a
  // crash has only resume checkpoints: the newest of them (rank 0's).
  std::string checkpoint = run_dir + (best ? "/checkpoints/best.pt" : "/checkpoints/final.pt");
  bool final_checkpoint = fs::exists(checkpoint);
  bool chosen = false;               // not named by the user (TrainedAgentFiles::chosen)
  std::vector<std::string> skipped;  // damaged newer resume checkpoints passed over
  if (!step.empty()) {               // --checkpoint: a resume checkpoint the user names
    if (best) {
      throw ConfigError("--checkpoint", step,
                        "no --checkpoint with --best (best.pt is no resume checkpoint): one of "
                        "the two");
    }
    final_checkpoint = false;
    chosen = step == "last";
    checkpoint = ResumeCheckpointOfStep(run_dir, step, &skipped);
  } else if (!final_checkpoint && !best && fs::exists(FinalPendingPath(run_dir)) &&
             FinalPendingReads(run_dir, &skipped)) {
    // Training ended, and the final writes (reports, then the rename to final.pt) failed: the
    // trained policy, newer than any resume checkpoint.
    checkpoint = FinalPendingPath(run_dir);
    final_checkpoint = true;
    chosen = true;
    skipped.push_back("using " + checkpoint +
                      ": the run trained to its end and its final writes did not finish");
  } else if (!final_checkpoint && !best) {
    const auto resume_checkpoints = ListCheckpoints(run_dir);
    chosen = true;
    checkpoint = NewestReadableCheckpoint(resume_checkpoints, &skipped);
    if (checkpoint.empty() && !resume_checkpoints.empty()) {
      // None reads: no skip is said, and loading the newest gives its own error.
      checkpoint = resume_checkpoints.back().second;
      skipped.clear();
    }
  }
  if (best && (!fs::exists(config_path) || !final_checkpoint)) {
    throw ConfigError(field == "--run" ? "--best" : field, run_dir,
                      "a run directory with config.yaml and checkpoints/best.pt (written at "
                      "each evaluation that beats the best mean reward so far; eval.save_best: "
                      "true, the default)");
  }
  if (checkpoint.empty() && !best && fs::exists(FinalPendingPath(run_dir))) {
    ReadFinalNormalizer(FinalPendingPath(run_dir));  // passed over above: its own error
  }
  if (!fs::exists(config_path) || checkpoint.empty()) {
    // A run's checkpoints folder given for the run (tab completion stops there): name the run.
    const fs::path parent = fs::path(run_dir).parent_path();
    const bool checkpoints_dir =
        fs::path(run_dir).filename() == "checkpoints" &&
        fs::exists((parent.empty() ? fs::path(".") : parent) / "config.yaml");
    // A run that has started and written no checkpoint yet: said, with when it will have one.
    std::string holder;
    const bool training = !checkpoints_dir && fs::exists(config_path) &&
                          FileLockHeld(run_dir + "/train.lock", &holder);
    throw ConfigError(
        field, run_dir,
        "a run directory with config.yaml and checkpoints/final.pt or a resume checkpoint "
        "checkpoints/step_*.pt" +
            (checkpoints_dir ? "; this is a run's checkpoints folder: " + field + " " +
                                   (parent.empty() ? "." : parent.string())
             : training
                 ? "; this run is still training (" +
                       (holder.empty() ? "a process" : "pid " + holder) +
                       " holds its train.lock) and has written no checkpoint yet: its first "
                       "resume checkpoint comes at checkpoint_freq's step (config.yaml), its "
                       "final.pt at the end"
                 : std::string()));
  }
  std::vector<std::string> notes = std::move(skipped);
  Config config = LoadAgentConfig(config_path, &notes);
  TrainedAgentFiles files{std::move(config),
                          checkpoint,
                          final_checkpoint,
                          /*resume_step=*/0,
                          /*normalizer=*/std::nullopt,
                          /*energy_wh=*/std::nan(""),
                          std::move(notes),
                          run_dir,
                          field,
                          chosen};
  // config.yaml and the checkpoint must agree on normalize: a policy trained on normalised
  // observations acts on raw ones without its statistics (config.yaml edited or replaced), and a
  // run without them has none to apply.
  const auto refuse_normalize = [&](bool given) {
    throw ConfigError(
        "normalize", given ? "true" : "false",
        fmt::format("{} as the checkpoint {} was trained ({}), where the run's config.yaml says "
                    "normalize: {} (edited or replaced after training?): set it back to {}",
                    given ? "false" : "true", files.checkpoint,
                    given ? "it holds no VecNormalize statistics"
                          : "with VecNormalize statistics, which its policy needs",
                    given ? "true" : "false", given ? "false" : "true"));
  };
  if (!files.config.GetBool("normalize")) {
    bool has_statistics = false;
    try {
      if (best) {
        const std::optional<BestEval> record = ReadBestCheckpoint(run_dir);
        has_statistics = record && record->normalizer;
      } else if (files.final_checkpoint) {
        has_statistics = ReadFinalNormalizer(files.checkpoint).has_value() ||
                         fs::exists(run_dir + "/checkpoints/normalizer.json");
      } else {
        const std::optional<TrainerState> state = PeekTrainerState(files.checkpoint);
        has_statistics = state && !state->normalizer.empty();
      }
    } catch (const ConfigError&) {  // a damaged file: loading it says why
    }
    if (has_statistics) refuse_normalize(false);
    return files;
  }
  if (best) {  // the statistics best.pt recorded with the policy
    const std::optional<BestEval> record = ReadBestCheckpoint(run_dir);
    if (!(record && record->normalizer)) {
      throw ConfigError(field == "--run" ? "--best" : field, run_dir,
                        "a run whose checkpoints/best.pt records the normaliser statistics "
                        "(normalize: true)");
    }
    files.normalizer = record->normalizer;
  } else if (files.final_checkpoint) {
    // The statistics final.pt records with its policy; a final.pt of an earlier build has them
    // in normalizer.json beside it.
    files.normalizer = ReadFinalNormalizer(files.checkpoint);
    if (!files.normalizer) {
      const std::string json = run_dir + "/checkpoints/normalizer.json";
      if (!fs::exists(json)) refuse_normalize(true);
      files.normalizer = LoadNormalizer(json);
    }
  } else {
    const std::optional<TrainerState> state = PeekTrainerState(files.checkpoint);
    if (!state) {
      throw ConfigError("checkpoint", files.checkpoint,
                        "a resume checkpoint written by greenrl train");
    }
    files.resume_step = state->steps;
    if (state->normalizer.empty()) refuse_normalize(true);
    files.normalizer = NormalizerSnapshot{NormalizeOptionsFrom(files.config), state->normalizer};
  }
  return files;
}

TrainedAgentFiles ResolveTrainedAgent(const std::string& path, const Config& config) {
  namespace fs = std::filesystem;
  const std::string accepted =
      "a run directory written by greenrl train, or its checkpoints/best.pt, "
      "checkpoints/final.pt or a resume checkpoint checkpoints/step_<12 digits>.pt";
  std::error_code ec;
  const fs::path p(path);
  std::string run_dir = path;
  bool best = false;
  std::string step;  // a resume checkpoint's, as named
  if (fs::is_regular_file(p, ec)) {
    const std::string name = p.filename().string();
    // step_<12 digits>.pt, as CheckpointPath names them.
    const bool resume_checkpoint = name.size() == 20 && CheckpointStepOf(name) >= 0;
    if ((name != "best.pt" && name != "final.pt" && !resume_checkpoint) ||
        p.parent_path().filename() != "checkpoints") {
      throw ConfigError("trained_agent", path, accepted);
    }
    run_dir = p.parent_path().parent_path().string();
    if (run_dir.empty()) run_dir = ".";
    best = name == "best.pt";
    if (resume_checkpoint) step = name.substr(5, 12);
  } else if (!fs::is_directory(p, ec)) {
    throw ConfigError("trained_agent", path, accepted + " (no such file or directory)");
  }
  TrainedAgentFiles files = LocateTrainedAgent(run_dir, best, "trained_agent", step);
  const Config& own = files.config;
  for (const char* key : {"algo", "env_id"}) {
    if (own.GetString(key) != config.GetString(key)) {
      throw ConfigError("trained_agent", path,
                        "a run of this run's algo and env_id, " + config.GetString("algo") +
                            " on " + config.GetString("env_id") + " (it is a " +
                            own.GetString("algo") + " run on " + own.GetString("env_id") + ")");
    }
  }
  auto refuse = [&](const std::string& key, const std::string& value, const std::string& mine,
                    const std::string& why) {
    throw ConfigError(key, value,
                      "the trained agent's own " + mine + " (" + run_dir + "/config.yaml): " + why);
  };
  const bool normalize = config.GetBool("normalize");
  if (normalize != own.GetBool("normalize")) {
    refuse("normalize", normalize ? "true" : "false", normalize ? "false" : "true",
           std::string("its policy was trained on ") + (normalize ? "raw" : "normalised") +
               " observations");
  }
  if (normalize) {
    const env::NormalizeOptions mine = files.normalizer->options,
                                want = NormalizeOptionsFrom(config);
    const std::string why = "its policy saw observations normalised with that value";
    if (want.norm_obs != mine.norm_obs) {
      refuse("normalize_kwargs.norm_obs", want.norm_obs ? "true" : "false",
             mine.norm_obs ? "true" : "false", why);
    }
    if (want.clip_obs != mine.clip_obs) {
      refuse("normalize_kwargs.clip_obs", fmt::format("{}", want.clip_obs),
             fmt::format("{}", mine.clip_obs), why);
    }
  }
  // Keys whose value here does not act as config.yaml would suggest, each said where it differs
  // from the agent's run: init-only keys, since the agent's trained parameters replace the
  // initial ones (as rl-zoo's ALGO.load), and the normaliser's settings besides what the policy
  // saw, which go on from this config where rl-zoo's VecNormalize.load keeps the agent's.
  auto differs = [&](const std::string& key) {
    return config.schema().Find(key) != nullptr && config.ValueText(key) != own.ValueText(key);
  };
  for (const char* key : {"policy_kwargs.log_std_init", "policy_kwargs.ortho_init"}) {
    if (!differs(key)) continue;
    // SAC's log_std_init sets gSDE's log std only: without gSDE it does nothing in any run (as
    // in SB3), which no note of a trained agent's should suggest otherwise.
    if (std::string(key) == "policy_kwargs.log_std_init" && config.GetString("algo") == "sac" &&
        !config.GetBool("use_sde")) {
      continue;
    }
    files.notes.push_back(fmt::format(
        "{}: {} does nothing in a run from a trained agent, whose trained parameters replace the "
        "initial ones (its run had {})",
        key, config.ValueText(key), own.ValueText(key)));
  }
  if (config.GetString("algo") == "sac" && differs("ent_coef") &&
      config.GetString("ent_coef").rfind("auto", 0) == 0 &&
      own.GetString("ent_coef").rfind("auto", 0) == 0) {
    files.notes.push_back(fmt::format(
        "ent_coef: {} does nothing in a run from a trained agent: an auto ent_coef's initial "
        "value only starts the learned coefficient, which carries over (its run had {})",
        config.ValueText("ent_coef"), own.ValueText("ent_coef")));
  }
  if (normalize) {
    const bool norm_reward = config.GetBool("normalize_kwargs.norm_reward");
    for (const char* key :
         {"normalize_kwargs.norm_reward", "normalize_kwargs.clip_reward", "gamma"}) {
      // clip_reward and the discount act only on the reward scaling.
      const bool reward_scaling_key = std::string(key) != "normalize_kwargs.norm_reward";
      if (!differs(key) || (reward_scaling_key && !norm_reward)) continue;
      files.notes.push_back(fmt::format(
          "{}: {}, where the agent's run had {}: the agent's normaliser statistics go on with "
          "this run's {} (rl-zoo's VecNormalize.load would keep the agent's)",
          key, config.ValueText(key), own.ValueText(key),
          std::string(key) == "gamma" ? "gamma for the reward scaling's returns" : "value"));
    }
  }
  // What the agent's training cost: its run's energy as `greenrl report` reads it (energy.json's
  // total, or the last metrics.csv row of a run killed before its energy.json, or still
  // training; energy.json's total where metrics.csv is gone), plus what its own start cost (its
  // energy.json's trained_agent; unknown for a run from an agent that has no energy.json yet).
  try {
    nlohmann::json j;  // null without a readable energy.json
    try {
      j = nlohmann::json::parse(std::ifstream(run_dir + "/energy.json"));
    } catch (const std::exception&) {
    }
    try {
      files.energy_wh = report::LoadRun(run_dir).energy_wh;
    } catch (const ConfigError&) {  // no metrics.csv, or no row in it
      files.energy_wh = j.at("total_energy_wh").get<double>();
    }
    if (const auto earlier = RecordedTrainedAgent(j)) {
      files.energy_wh += earlier->energy_wh;
    } else if (j.is_null() && !own.GetString("trained_agent").empty()) {
      files.energy_wh = NAN;  // what its own agent cost is in no file yet
    }
  } catch (const std::exception&) {  // neither a metrics.csv row nor energy.json: unknown
    files.energy_wh = NAN;
  }
  return files;
}

report::TrainedAgentReport TrainedAgentOfResumedRun(const std::string& path,
                                                    const std::string& run_dir,
                                                    const Config& config) {
  try {
    const std::optional<report::TrainedAgentReport> recorded =
        RecordedTrainedAgent(nlohmann::json::parse(std::ifstream(run_dir + "/energy.json")));
    if (recorded) return *recorded;
  } catch (const std::exception&) {  // no energy.json yet: the first segment was killed
  }
  try {
    const TrainedAgentFiles files = ResolveTrainedAgent(path, config);
    return {files.checkpoint, files.energy_wh};
  } catch (const std::exception&) {  // moved or deleted since: the path, energy unknown
    return {path, NAN};
  }
}

void LoadNewestLoadable(TrainedAgentFiles* files,
                        const std::function<void(const TrainedAgentFiles&)>& load) {
  std::vector<std::string> notes = files->notes;  // the first lookup's
  std::optional<ConfigError> newest_error;        // what is said when none loads
  std::vector<std::string> tried;                 // the files tried: passed over, or loading
  for (;;) {
    try {
      load(*files);
      if (newest_error) files->notes = std::move(notes);  // a later lookup's repeat the config's
      return;
    } catch (const ConfigError& e) {
      if (!files->chosen) {
        // A file the user named, or final.pt (best.pt): the run's other agents, which load
        // perhaps, are named beside why it did not.
        namespace fs = std::filesystem;
        std::vector<std::string> others;
        const auto checkpoints = ListCheckpoints(files->run_dir);
        if (!checkpoints.empty() && checkpoints.back().second != files->checkpoint) {
          others.push_back(fmt::format("--checkpoint last (step {})", checkpoints.back().first));
        }
        const std::string best = files->run_dir + "/checkpoints/best.pt";
        if (files->checkpoint != best && fs::exists(best)) others.push_back("--best");
        if (others.empty()) throw;
        throw e.WithNote(fmt::format("the run's other checkpoints: {}", fmt::join(others, ", ")));
      }
      if (!newest_error) newest_error = e;
      // final.pt.pending's "using <path>" note gives way to why it was passed over.
      notes.erase(std::remove_if(notes.begin(), notes.end(),
                                 [&](const std::string& note) {
                                   return note.rfind("using " + files->checkpoint + ":", 0) == 0;
                                 }),
                  notes.end());
      notes.push_back("skipping " + files->checkpoint + ": " + e.what());
      tried.push_back(files->checkpoint);
      // The next resume checkpoint not tried yet whose files are found (a normalize: true run's
      // must read): the one before, or after final.pt.pending the newest. (Listed again: a
      // running training may have replaced some since; when the one that failed is gone, from
      // the newest.)
      const std::string run_dir = files->run_dir, field = files->field;
      const auto checkpoints = ListCheckpoints(run_dir);
      auto it = checkpoints.rbegin();
      if (!files->final_checkpoint) {
        const auto at = std::find_if(checkpoints.rbegin(), checkpoints.rend(),
                                     [&](const auto& c) { return c.second == files->checkpoint; });
        if (at != checkpoints.rend()) it = std::next(at);
      }
      bool found = false;
      for (; !found && it != checkpoints.rend(); ++it) {
        if (std::find(tried.begin(), tried.end(), it->second) != tried.end()) continue;
        tried.push_back(it->second);
        try {
          *files = LocateTrainedAgent(run_dir, /*best=*/false, field, std::to_string(it->first));
          files->chosen = found = true;
        } catch (const ConfigError& older) {
          notes.push_back("skipping " + it->second + ": " + older.what());
        }
      }
      if (!found) throw *newest_error;  // none loads: the newest one's error names it
    }
  }
}

TrainedAgent LoadTrainedAgent(const std::string& run_dir, std::optional<int64_t> seed, bool best,
                              const std::string& step) {
  TrainedAgentFiles files = LocateTrainedAgent(run_dir, best, "--run", step);
  std::optional<TrainedAgent> agent;
  LoadNewestLoadable(&files, [&](const TrainedAgentFiles& found) {
    Config config = found.config;  // LoadAgentConfig's
    if (seed) config.Set("seed", std::to_string(*seed));
    ConfigureThreads(static_cast<int>(config.GetInt("threads.torch")));
    auto algorithm = MakeAlgorithm(config, env::FindEnvSpec(config.GetString("env_id")));
    int64_t resume_step = 0;
    if (found.final_checkpoint) {  // final.pt, final.pt.pending or best.pt
      algorithm->LoadCheckpoint(found.checkpoint);
      RequireFiniteParameters(*algorithm, found.checkpoint);
    } else {  // a resume checkpoint, with its counters (DQN's exploration rate for --stochastic)
      resume_step = LoadResumeCheckpoint(algorithm.get(), found.checkpoint).steps;
      // Acting draws from the seed, as after final.pt, not from where training left its
      // generator (the exploration rate stays the checkpoint's).
      algorithm->SeedActing(static_cast<uint64_t>(config.GetInt("seed")));
    }
    agent.emplace(TrainedAgent{std::move(config), std::move(algorithm), found.normalizer,
                               found.checkpoint, found.final_checkpoint, resume_step,
                               /*notes=*/{}});
  });
  agent->notes = std::move(files.notes);
  return std::move(*agent);
}

namespace {

// ResumeCheckpointNotice's text for `checkpoint`, a resume checkpoint of run_dir at `step`.
std::string NoticeOfResumeCheckpoint(const std::string& run_dir, const std::string& checkpoint,
                                     int64_t step) {
  const auto checkpoints = ListCheckpoints(run_dir);
  const bool newest = checkpoints.empty() || checkpoints.back().second == checkpoint;
  std::string notice = run_dir + " has no checkpoints/final.pt; using its newest " +
                       (newest ? "" : "loadable ") + "resume checkpoint (step " +
                       std::to_string(step) + ")";
  std::string holder;
  if (FileLockHeld(run_dir + "/train.lock", &holder)) {
    notice += "; it is still training (" + (holder.empty() ? "a process" : "pid " + holder) +
              " holds its train.lock)";
  }
  return notice;
}

}  // namespace

std::string ResumeCheckpointNotice(const std::string& run_dir, const TrainedAgent& agent) {
  if (agent.final_checkpoint) return "";
  return NoticeOfResumeCheckpoint(run_dir, agent.checkpoint, agent.resume_step);
}

std::string ResumeCheckpointNotice(const TrainedAgentFiles& files) {
  if (files.final_checkpoint || !files.chosen) return "";  // final.pt, or the one named
  int64_t step = files.resume_step;
  for (const auto& [s, path] : ListCheckpoints(files.run_dir)) {
    if (path == files.checkpoint) step = s;
  }
  return NoticeOfResumeCheckpoint(files.run_dir, files.checkpoint, step);
}

}  // namespace greenrl::train
