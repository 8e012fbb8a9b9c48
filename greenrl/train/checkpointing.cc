#include "greenrl/train/checkpointing.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "greenrl/algo/checkpoint.h"
#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/file_lock.h"
#include "greenrl/energy/units.h"
#include "greenrl/report/evaluations_npz.h"
#include "greenrl/report/run_report.h"

namespace greenrl::train {

namespace fs = std::filesystem;

void AddCheckpointKeys(ConfigSchema* s) {
  AddKey(s, "checkpoint_freq", ValueType::kInt, "100000",
         "write a resume checkpoint every this many env steps (0: none periodic; a stop signal "
         "still writes one)",
         0, 1e12);
  AddKey(s, "checkpoint_keep", ValueType::kInt, "2", "resume checkpoints kept (newest)", 1, 1000);
  AddKey(s, "checkpoint_replay_buffer", ValueType::kBool, "true",
         "DQN/SAC: save the replay buffer in resume checkpoints (false: a resumed run starts "
         "from an empty buffer, so it is not identical to an uninterrupted one)");
  AddKey(s, "guard.max_consecutive", ValueType::kInt, "3",
         "updates in a row with a non-finite loss or gradient before guard.on_repeat acts", 1, 1e6);
  AddKey(s, "guard.on_repeat", ValueType::kString, "restore",
         "restore (the last resume checkpoint, learning rate halved) or stop", {}, {},
         {"restore", "stop"});
}

CheckpointOptions CheckpointOptionsFrom(const Config& config) {
  CheckpointOptions o;
  o.freq = config.GetInt("checkpoint_freq");
  o.keep = static_cast<int>(config.GetInt("checkpoint_keep"));
  o.replay_buffer = config.GetBool("checkpoint_replay_buffer");
  o.guard_max_consecutive = static_cast<int>(config.GetInt("guard.max_consecutive"));
  o.guard_on_repeat = config.GetString("guard.on_repeat");
  return o;
}

namespace {
// The refusal, under `field`, of a run directory whose train.lock another holder has: the pid
// written in it, else "another process".
ConfigError RunDirInUse(const std::string& run_dir, const std::string& field,
                        const std::string& holder) {
  return ConfigError(field, run_dir,
                     "a run directory no other greenrl process is training in (" +
                         (holder.empty() ? std::string("another process") : "pid " + holder) +
                         " holds " + run_dir +
                         "/train.lock; wait for it to end, or stop it and "
                         "resume)");
}
}  // namespace

RunDirLock::RunDirLock(const std::string& run_dir, const std::string& field) {
  const std::string path = run_dir + "/train.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  }
  // A probe (FileLockHeld: `greenrl report`, a dry run) holds a shared lock for microseconds,
  // so retries over about 100 ms tell it from a training process, which holds it throughout.
  int error = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      error = 0;
      break;
    }
    error = errno;
    if (error != EWOULDBLOCK) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (error != 0) {
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK) {
      std::string holder;  // "" when the holder has just let go: "another process"
      FileLockHeld(path, &holder);
      throw RunDirInUse(run_dir, field, holder);
    }
    throw std::runtime_error(fmt::format("cannot lock {}: {}", path, std::strerror(error)));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // The pid is only for a refused process's message: without it the lock holds all the same.
  if (::ftruncate(fd_, 0) == 0) {
    const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
    static_cast<void>(written);
  }
}

void RunDirLock::RefuseIfHeld(const std::string& run_dir, const std::string& field) {
  std::string holder;
  if (FileLockHeld(run_dir + "/train.lock", &holder)) throw RunDirInUse(run_dir, field, holder);
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::string CheckpointDir(const std::string& run_dir, int rank) {
  return rank == 0 ? run_dir + "/checkpoints" : fmt::format("{}/checkpoints/rank{}", run_dir, rank);
}

std::string CheckpointPath(const std::string& run_dir, int64_t steps, int rank) {
  return fmt::format("{}/step_{:012d}.pt", CheckpointDir(run_dir, rank), steps);
}

int64_t CheckpointStepOf(const std::string& name) {
  if (name.size() < 9 || name.rfind("step_", 0) != 0 || name.substr(name.size() - 3) != ".pt") {
    return -1;
  }
  const std::string digits = name.substr(5, name.size() - 8);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stoll(digits);
}

std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& run_dir, int rank) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(CheckpointDir(run_dir, rank), ec)) {
    const int64_t step = CheckpointStepOf(entry.path().filename().string());
    if (step >= 0) out.emplace_back(step, entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void PruneCheckpoints(const std::string& run_dir, int keep, int rank) {
  const auto all = ListCheckpoints(run_dir, rank);
  std::error_code ec;
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i) fs::remove(all[i].second, ec);
  // Temp files of checkpoints a killed process left (".pt.tmp.<pid>").
  for (const auto& entry : fs::directory_iterator(CheckpointDir(run_dir, rank), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) == 0 && name.find(".pt.tmp.") != std::string::npos) {
      fs::remove(entry.path(), ec);
    }
  }
}

namespace {
nlohmann::json MeasurementJson(const energy::Measurement& m) {
  return {{"duration_s", m.duration_s}, {"energy_j", m.energy_j}};
}
energy::Measurement MeasurementFrom(const nlohmann::json& j) {
  energy::Measurement m;
  m.duration_s = j.at("duration_s").get<double>();
  m.energy_j = j.at("energy_j").get<std::map<std::string, double>>();
  return m;
}

// The budget's snapshot; its events in energy.json's form (report::BudgetEventsJson).
nlohmann::json BudgetSnapshotJson(const energy::BudgetSnapshot& b) {
  return {{"budget_wh", b.budget_wh},
          {"state", energy::BudgetStateName(b.state)},
          {"events", nlohmann::json::parse(report::BudgetEventsJson(b.events))}};
}

energy::BudgetSnapshot BudgetSnapshotFrom(const nlohmann::json& j) {
  energy::BudgetSnapshot b;
  b.budget_wh = j.at("budget_wh").get<double>();
  b.state = energy::ParseBudgetState(j.at("state").get<std::string>());
  b.events = report::ParseBudgetEventsJson(j.at("events").dump());
  return b;
}

// A JSON array of numbers that may be NaN, which JSON writes as null (an env's NaN rewards make
// episode returns and normaliser statistics NaN): null reads back as NaN.
// Errors: nlohmann::json::exception for an entry that is neither a number nor null.
std::vector<double> NumbersOrNan(const nlohmann::json& j) {
  std::vector<double> out;
  out.reserve(j.size());
  for (const auto& v : j) out.push_back(v.is_null() ? std::nan("") : v.get<double>());
  return out;
}

// The "trainer.state" entry's fields (all but env_state, which has entries of its own).
// Errors: nlohmann::json::exception or std::invalid_argument for a malformed entry.
TrainerState TrainerStateFrom(const nlohmann::json& j) {
  TrainerState state;
  state.steps = j.at("steps").get<int64_t>();
  state.iteration = j.at("iteration").get<int64_t>();
  state.next_eval = j.at("next_eval").get<int64_t>();
  state.next_checkpoint = j.at("next_checkpoint").get<int64_t>();
  state.episodes = j.at("episodes").get<int64_t>();
  if (j.contains("monitor_rows")) state.monitor_rows = j.at("monitor_rows").get<int64_t>();
  state.recent_returns = NumbersOrNan(j.at("recent_returns"));
  if (j.contains("recent_lengths")) state.recent_lengths = NumbersOrNan(j.at("recent_lengths"));
  if (j.contains("log_rows")) {
    const auto v = NumbersOrNan(j.at("log_rows"));
    if (v.size() != 6) throw std::invalid_argument("log_rows: 6 numbers expected");
    state.log_rows = {v[0], static_cast<int64_t>(v[1]), v[2], v[3], v[4], v[5]};
  } else {
    state.log_rows.global_episodes = static_cast<double>(state.episodes);
  }
  state.elapsed_s = j.at("elapsed_s").get<double>();
  state.cpu_s = j.at("cpu_s").get<double>();
  state.energy = MeasurementFrom(j.at("energy"));
  if (j.contains("windows")) {
    for (const auto& [key, w] : j.at("windows").items()) {
      // short_count: absent from checkpoints written before it was counted.
      state.windows[key] = {w.at("count").get<int64_t>(), MeasurementFrom(w.at("sum")),
                            w.value("short_count", int64_t{0})};
    }
  }
  state.rollout_env_steps = j.value("rollout_env_steps", int64_t{-1});
  state.eval_env_steps = j.value("eval_env_steps", int64_t{-1});
  state.normalizer = NumbersOrNan(j.at("normalizer"));
  state.env_non_finite_resets = j.value("env_non_finite_resets", int64_t{0});
  state.env_non_finite_outputs = j.value("env_non_finite_outputs", int64_t{0});
  if (j.contains("fixed_keys")) {
    state.fixed_keys = j.at("fixed_keys").get<std::map<std::string, std::string>>();
  }
  state.world_size = j.value("world_size", 1);
  state.rank = j.value("rank", 0);
  if (j.contains("allreduce")) {
    const auto& a = j.at("allreduce");
    state.allreduce_calls = a.at("calls").get<int64_t>();
    state.allreduce_bytes = a.at("bytes").get<int64_t>();
    state.allreduce_s = a.at("s").get<double>();
  }
  if (j.contains("budget")) state.budget = BudgetSnapshotFrom(j.at("budget"));
  if (j.contains("carbon_series")) {
    const auto& c = j.at("carbon_series");
    energy::SeriesCarbonState cs;
    cs.energy_j = c.at("energy_j").get<double>();
    cs.kwh_x_g_per_kwh = c.at("kwh_x_g_per_kwh").get<double>();
    cs.before_series_j = c.at("before_series_j").get<double>();
    cs.after_series_j = c.at("after_series_j").get<double>();
    cs.first_unix_s = c.at("first_unix_s").get<double>();
    cs.any = c.at("any").get<bool>();
    state.carbon_series = cs;
  }
  return state;
}
}  // namespace

void SaveResumeCheckpoint(const algo::Algorithm& algorithm, const std::string& path,
                          bool replay_buffer, const TrainerState& state) {
  nlohmann::json j;
  j["steps"] = state.steps;
  j["iteration"] = state.iteration;
  j["next_eval"] = state.next_eval;
  j["next_checkpoint"] = state.next_checkpoint;
  j["episodes"] = state.episodes;
  j["monitor_rows"] = state.monitor_rows;
  j["recent_returns"] = state.recent_returns;
  j["recent_lengths"] = state.recent_lengths;
  const LogRowState& rows = state.log_rows;
  j["log_rows"] = {rows.global_episodes,  rows.iteration_at_last_row, rows.episodes_at_last_row,
                   rows.pending_ep_count, rows.pending_ep_return,     rows.pending_ep_length};
  j["elapsed_s"] = state.elapsed_s;
  j["cpu_s"] = state.cpu_s;
  j["energy"] = MeasurementJson(state.energy);
  for (const auto& [key, w] : state.windows) {
    j["windows"][key] = {
        {"count", w.count}, {"sum", MeasurementJson(w.sum)}, {"short_count", w.short_count}};
  }
  j["rollout_env_steps"] = state.rollout_env_steps;
  j["eval_env_steps"] = state.eval_env_steps;
  j["normalizer"] = state.normalizer;
  j["env_non_finite_resets"] = state.env_non_finite_resets;
  j["env_non_finite_outputs"] = state.env_non_finite_outputs;
  j["fixed_keys"] = state.fixed_keys;
  j["world_size"] = state.world_size;
  j["rank"] = state.rank;
  j["allreduce"] = {
      {"calls", state.allreduce_calls}, {"bytes", state.allreduce_bytes}, {"s", state.allreduce_s}};
  if (state.budget) j["budget"] = BudgetSnapshotJson(*state.budget);
  if (const auto& c = state.carbon_series) {
    j["carbon_series"] = {{"energy_j", c->energy_j},
                          {"kwh_x_g_per_kwh", c->kwh_x_g_per_kwh},
                          {"before_series_j", c->before_series_j},
                          {"after_series_j", c->after_series_j},
                          {"first_unix_s", c->first_unix_s},
                          {"any", c->any}};
  }
  // The checkpoint folder (<run_dir>/checkpoints[/rank<r>]) is made when missing, but not the
  // run directory: one removed while the run trained stops the run (its config.yaml and logs
  // went with it) rather than coming back with a checkpoint and no reports.
  const fs::path folder = fs::path(path).parent_path();
  const fs::path checkpoints = folder.filename() == "checkpoints" ? folder : folder.parent_path();
  const fs::path run = checkpoints.has_parent_path() ? checkpoints.parent_path() : ".";
  std::error_code ec;
  if (!fs::is_directory(run, ec)) {
    throw std::runtime_error("cannot write '" + path + "': the run directory '" + run.string() +
                             "' is gone (removed while the run trained)");
  }
  fs::create_directories(folder, ec);  // a failure shows in the write
  const std::string text = j.dump();  // doubles round-trip exactly (shortest representation)
  algorithm.SaveTrainingState(path, replay_buffer, [&](algo::CheckpointWriter& w) {
    w.WriteString("trainer.state", text);
    w.WriteInt("trainer.env_state_saved", state.env_state.empty() ? 0 : 1);
    w.WriteBytes("trainer.env_state", state.env_state.data(),
                 static_cast<int64_t>(state.env_state.size()));
  });
}

TrainerState LoadResumeCheckpoint(algo::Algorithm* algorithm, const std::string& path) {
  TrainerState state;
  algorithm->LoadTrainingState(path, [&](algo::CheckpointReader& r) {
    if (!r.Has("trainer.state")) r.Fail("no 'trainer.state' entry (not a resume checkpoint)");
    try {
      state = TrainerStateFrom(nlohmann::json::parse(r.String("trainer.state")));
    } catch (const std::exception& e) {  // nlohmann::json's errors, an unknown budget name
      r.Fail(std::string("unreadable trainer.state: ") + e.what());
    }
    if (r.Int("trainer.env_state_saved") != 0) state.env_state = r.Bytes("trainer.env_state");
  });
  RequireFiniteParameters(*algorithm, path);
  return state;
}

void RequireFiniteParameters(const algo::Algorithm& algorithm, const std::string& path) {
  const std::vector<float> params = algorithm.GetParameters();
  const auto bad =
      std::count_if(params.begin(), params.end(), [](float p) { return !std::isfinite(p); });
  if (bad > 0) {
    throw ConfigError("checkpoint", path,
                      fmt::format("a checkpoint whose parameters are finite ({} of its {} are NaN "
                                  "or infinite: the file is damaged, or was written after a "
                                  "numerical failure)",
                                  bad, params.size()));
  }
}

namespace {

// The string entry `key` of the LibTorch archive at `path`, read without loading the model;
// nullopt when the archive has no such string entry.
// Errors: LibTorch's (c10::Error, a std::exception) for a file that is not an archive.
std::optional<std::string> ReadStringEntry(const std::string& path, const std::string& key) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  c10::IValue v;
  if (!archive.try_read(key, v) || !v.isString()) return std::nullopt;
  return v.toStringRef();
}

using energy::kJoulesPerWh;

// A segment killed after its checkpoint (SIGKILL, a crash, a lost node) wrote no energy.json, but
// its metrics.csv rows past the checkpoint hold the run's time (time_s) and energy per domain
// (energy/<domain>_wh) up to its last row: taken into *later, only upward. A single process's
// only: a data-parallel run's rows hold the job's figures, not one rank's. Returns whether a row
// past the checkpoint's step was found.
// Errors: std::runtime_error for an unreadable or malformed metrics.csv.
bool CarryOverKilledSegment(const std::string& run_dir, TrainerState* later) {
  const std::string path = run_dir + "/metrics.csv";
  auto [header, rows] = report::ReadMetricsCsv(path);
  {  // a last line without its newline is torn (the kill came while it was written)
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    char last = '\n';
    if (in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      in.get(last);
    }
    if (last != '\n' && !rows.empty()) rows.pop_back();
  }
  if (rows.empty() || header.empty() || header[0] != "global_step") return false;
  const std::vector<double>& row = rows.back();
  if (!(row[0] > static_cast<double>(later->steps))) return false;
  for (size_t c = 1; c < header.size(); ++c) {
    if (!std::isfinite(row[c])) continue;
    if (header[c] == "time_s") later->elapsed_s = std::max(later->elapsed_s, row[c]);
    for (auto& [domain, energy_j] : later->energy.energy_j) {
      if (header[c] == "energy/" + domain + "_wh") {
        energy_j = std::max(energy_j, row[c] * kJoulesPerWh);
      }
    }
  }
  return true;
}

}  // namespace

void CarryOverStoppedSegment(const std::string& run_dir, TrainerState* state) {
  TrainerState later = *state;  // every figure read before any is taken
  try {
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(run_dir + "/energy.json"));
    // A data-parallel rank's own figures are in distributed.ranks (the totals are the job's).
    const bool per_rank = state->world_size > 1;
    // A segment that failed after this checkpoint: its figures up to the failure.
    const bool failed_later =
        !per_rank && j.contains("failure") && j.at("steps").get<int64_t>() > state->steps;
    if (j.at("steps").get<int64_t>() != state->steps && !failed_later) {
      throw std::runtime_error("energy.json of another segment");
    }
    const nlohmann::json& src = per_rank ? j.at("distributed").at("ranks").at(state->rank) : j;
    if (per_rank && src.at("rank").get<int>() != state->rank) return;
    later.elapsed_s = std::max(state->elapsed_s, src.at("wall_time_s").get<double>());
    later.cpu_s = std::max(state->cpu_s, src.at("cpu_time_s").get<double>());
    const nlohmann::json& domains = src.at(per_rank ? "energy_j" : "domains");
    for (auto& [domain, energy_j] : later.energy.energy_j) {
      const auto d = domains.find(domain);
      if (d == domains.end()) continue;
      energy_j = std::max(energy_j, (per_rank ? *d : d->at("energy_j")).get<double>());
    }
    // The stopping checkpoint's own window closed after the checkpoint saved its windows: taken
    // from energy.json's (a single process's; a job's are summed over its ranks), so the resumed
    // windows still sum to the carried totals with it.
    const auto w = j.find("windows");
    if (!per_rank && !failed_later && w != j.end() && w->contains("checkpoint")) {
      const nlohmann::json& c = w->at("checkpoint");
      energy::WindowTotals& mine = later.windows["checkpoint"];
      if (c.at("count").get<int64_t>() > mine.count) {
        mine.count = c.at("count").get<int64_t>();
        mine.short_count = c.value("short_windows", mine.short_count);
        mine.sum.duration_s = c.at("duration_s").get<double>();
        for (const auto& [domain, e] : c.at("energy_j").items()) {
          mine.sum.energy_j[domain] = e.get<double>();
        }
      }
    }
    // After the failed segment, a resumed one may have been killed further on (its rows).
    if (failed_later) {
      try {
        CarryOverKilledSegment(run_dir, &later);
      } catch (const std::exception&) {  // the failed segment's figures stand
      }
    }
  } catch (const std::exception&) {
    // No energy.json of this step: a segment killed after its checkpoint, whose metrics.csv rows
    // may go further; else (none, unreadable) the checkpoint's figures.
    later = *state;
    try {
      if (state->world_size > 1 || !CarryOverKilledSegment(run_dir, &later)) return;
    } catch (const std::exception&) {
      return;
    }
  }
  // The energy's span (energy.json's duration_s, the denominator of emissions.csv's power and
  // rate) grows with the wall time carried, the span in which the carried energy was spent.
  later.energy.duration_s += later.elapsed_s - state->elapsed_s;
  *state = std::move(later);
}

std::map<std::string, std::string> ResumeFixedKeyValues(const Config& config) {
  std::map<std::string, std::string> values;
  const bool normalize =
      config.schema().Find("normalize") != nullptr && config.GetBool("normalize");
  for (const char* key :
       {"n_envs", "seed", "algo", "env_id", "policy_kwargs.net_arch", "policy_kwargs.net_arch.pi",
        "policy_kwargs.net_arch.vf", "policy_kwargs.activation_fn", "use_sde", "buffer_size",
        "normalize", "normalize_kwargs.norm_obs", "normalize_kwargs.clip_obs",
        "normalize_kwargs.norm_reward", "energy.watts_per_core"}) {
    if (config.schema().Find(key) == nullptr) continue;
    if (!normalize && std::string(key).rfind("normalize_kwargs.", 0) == 0) continue;
    values[key] = config.ValueText(key);
  }
  return values;
}

void RefuseChangedFixedKeys(const Config& config, const TrainerState& state,
                            const std::string& path) {
  const std::map<std::string, std::string> now = ResumeFixedKeyValues(config);
  for (const auto& [key, value] : state.fixed_keys) {
    const auto it = now.find(key);
    if (it == now.end() || it->second == value) continue;
    throw ConfigError(
        key, it->second,
        fmt::format("the checkpoint's own {}: {} was written with {}: {}, which a resume cannot "
                    "change (README \"Checkpoints, resume and signals\"); the run's config.yaml "
                    "says otherwise, edited since: set it back",
                    value, path, key, value));
  }
}

std::optional<TrainerState> PeekTrainerState(const std::string& path) {
  try {
    const std::optional<std::string> text = ReadStringEntry(path, "trainer.state");
    if (!text) return std::nullopt;
    return TrainerStateFrom(nlohmann::json::parse(*text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int CheckpointWorldSize(const std::string& path) {
  const std::optional<TrainerState> state = PeekTrainerState(path);
  return state ? state->world_size : -1;
}

void SaveFinalCheckpoint(const algo::Algorithm& algorithm, const std::string& run_dir,
                         const std::optional<NormalizerSnapshot>& normalizer) {
  const std::string dir = run_dir + "/checkpoints";
  algorithm.SaveTrainingState(FinalPendingPath(run_dir), /*replay_buffer=*/false,
                              [&](algo::CheckpointWriter& w) {
                                if (normalizer) {
                                  w.WriteString("final.normalizer", NormalizerJson(*normalizer));
                                }
                              });
  if (normalizer) SaveNormalizer(dir + "/normalizer.json", *normalizer);
}

std::string FinalPendingPath(const std::string& run_dir) {
  return run_dir + "/checkpoints/final.pt.pending";
}

void CommitFinalCheckpoint(const std::string& run_dir) {
  const std::string pending = FinalPendingPath(run_dir);
  const std::string final_pt = run_dir + "/checkpoints/final.pt";
  if (::rename(pending.c_str(), final_pt.c_str()) != 0) {
    throw std::runtime_error("cannot rename '" + pending + "' to '" + final_pt +
                             "': " + std::strerror(errno));
  }
  SyncDirectory(run_dir + "/checkpoints");
}

std::optional<NormalizerSnapshot> ReadFinalNormalizer(const std::string& path) {
  std::optional<std::string> text;
  try {
    text = ReadStringEntry(path, "final.normalizer");
  } catch (const std::exception& e) {
    const std::string what = e.what();  // LibTorch's first line, without its backtrace
    throw ConfigError(
        "checkpoint", path,
        "a final.pt written by greenrl train (" + what.substr(0, what.find('\n')) + ")");
  }
  if (!text) return std::nullopt;
  return NormalizerFromJson(*text, path + " (final.normalizer)");
}

void SaveBestCheckpoint(const algo::Algorithm& algorithm, const std::string& run_dir,
                        const BestEval& best) {
  const std::string dir = run_dir + "/checkpoints";
  nlohmann::ordered_json j = {{"global_step", best.global_step}, {"mean_reward", best.mean_reward}};
  const std::string copy = j.dump() + "\n";
  if (best.normalizer) j["normalizer"] = nlohmann::json::parse(NormalizerJson(*best.normalizer));
  algorithm.SaveTrainingState(
      dir + "/best.pt", /*replay_buffer=*/false,
      [&](algo::CheckpointWriter& w) { w.WriteString("best.eval", j.dump()); });
  WriteFileAtomic(dir + "/best.json", copy);
  if (best.normalizer) SaveNormalizer(dir + "/best_normalizer.json", *best.normalizer);
}

std::optional<BestEval> ReadBestCheckpoint(const std::string& run_dir) {
  const std::string dir = run_dir + "/checkpoints", path = dir + "/best.pt";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const std::string accepted = "a best.pt written by greenrl train (eval.save_best)";
  std::optional<std::string> record;
  try {
    record = ReadStringEntry(path, "best.eval");
  } catch (const std::exception& e) {
    throw ConfigError("checkpoint", path, accepted + " (" + e.what() + ")");
  }
  BestEval best;
  if (record) {  // one record, written with the policy
    try {
      const auto j = nlohmann::json::parse(*record);
      best.global_step = j.at("global_step").get<int64_t>();
      best.mean_reward = j.at("mean_reward").get<double>();
      if (j.contains("normalizer")) {
        best.normalizer = NormalizerFromJson(j.at("normalizer").dump(), path + " (best.eval)");
      }
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      throw ConfigError("checkpoint", path, accepted + " (entry best.eval: " + e.what() + ")");
    }
    return best;
  }
  // A best.pt of an earlier build: the files beside it describe it.
  try {
    const auto j = nlohmann::json::parse(ReadFile(dir + "/best.json"));
    best.global_step = j.at("global_step").get<int64_t>();
    best.mean_reward = j.at("mean_reward").get<double>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (fs::exists(dir + "/best_normalizer.json", ec)) {
    best.normalizer = LoadNormalizer(dir + "/best_normalizer.json");
  }
  return best;
}

report::EvaluationsLog ResumeEvaluationsLog(const std::string& path, int64_t steps,
                                            int eval_episodes, bool verbose) {
  if (!std::filesystem::exists(path)) return {};
  report::EvaluationsLog log;
  try {
    log = report::ReadEvaluationsNpz(path);
  } catch (const std::exception& e) {  // runtime_error, or bad_alloc from a damaged header
    if (verbose)
      fmt::print(stderr, "greenrl: warning: {}; the next evaluation starts evaluations.npz anew\n",
                 e.what());
    return {};
  }
  if (log.episodes() != 0 && log.episodes() != static_cast<size_t>(eval_episodes)) {
    if (verbose) {
      fmt::print(
          stderr,
          "greenrl: warning: {} holds evaluations of {} episodes and eval.episodes is now {}: "
          "the next evaluation starts it anew (metrics.csv keeps every evaluation's mean "
          "and std)\n",
          path, log.episodes(), eval_episodes);
    }
    return {};
  }
  const size_t before = log.timesteps.size();
  log.KeepUpTo(steps);
  if (log.timesteps.size() != before) report::WriteEvaluationsNpz(path, log);
  return log;
}

std::vector<std::string> TruncateMetricsCsv(const std::string& path, int64_t steps,
                                            std::vector<std::string>* notes) {
  std::istringstream in(ReadFile(path));
  std::string header_line, line, kept;
  if (!std::getline(in, header_line)) {
    return {};  // no row yet (log_interval): the first row writes the header
  }
  std::vector<std::string> columns;
  {
    std::stringstream hs(header_line);
    std::string col;
    while (std::getline(hs, col, ',')) columns.push_back(col);
  }
  const auto it = std::find(columns.begin(), columns.end(), "global_step");
  if (it == columns.end()) {
    throw std::runtime_error("cannot resume: '" + path + "' has no global_step column");
  }
  const size_t step_col = static_cast<size_t>(it - columns.begin());
  kept = header_line + "\n";
  std::vector<int64_t> damaged;  // line numbers (1-based) of rows dropped as not whole
  int64_t line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    // A torn last line of a killed run, or a damaged row: dropped, and said.
    if (static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1 != columns.size()) {
      damaged.push_back(line_number);
      continue;
    }
    std::stringstream ls(line);
    std::string cell;
    for (size_t c = 0; c <= step_col && std::getline(ls, cell, ','); ++c) {
    }
    char* end = nullptr;
    const double step = std::strtod(cell.c_str(), &end);
    if (cell.empty() || end != cell.c_str() + cell.size()) {
      damaged.push_back(line_number);
      continue;
    }
    if (step <= static_cast<double>(steps)) kept += line + "\n";
  }
  WriteFileAtomic(path, kept);
  if (notes != nullptr && !damaged.empty()) {
    notes->push_back(
        fmt::format("{}: dropped {} damaged row{} (line{} {}), not {} cells with a "
                    "number for global_step",
                    path, damaged.size(), damaged.size() == 1 ? "" : "s",
                    damaged.size() == 1 ? "" : "s", fmt::join(damaged, ", "), columns.size()));
  }
  return columns;
}

}  // namespace greenrl::train
