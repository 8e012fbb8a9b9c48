#include "greenrl/train/trainer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/algo/sac.h"
#include "greenrl/core/atomic_file.h"
#include "greenrl/core/clock.h"
#include "greenrl/core/cpu_info.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/openblas_core.h"
#include "greenrl/core/rng.h"
#include "greenrl/core/shell_word.h"
#include "greenrl/dist/running_moments.h"
#include "greenrl/energy/budget.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/energy/job_energy.h"
#include "greenrl/energy/monitor.h"
#include "greenrl/energy/sampler.h"
#include "greenrl/energy/select.h"
#include "greenrl/energy/units.h"
#include "greenrl/env/registry.h"
#include "greenrl/report/emissions.h"
#include "greenrl/report/evaluations_npz.h"
#include "greenrl/report/monitor_csv.h"
#include "greenrl/report/tfevents_writer.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/episode_window.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/power_limit_profiler.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/signals.h"
#include "greenrl/train/trained_agent.h"
#include "greenrl/train/work_energy.h"

namespace greenrl::train {

namespace fs = std::filesystem;

namespace {

using energy::kJoulesPerWh;
}  // namespace

std::unique_ptr<algo::Algorithm> MakeAlgorithm(const Config& config, const env::EnvSpec& spec) {
  // AlgorithmIds() lists what is handled here. LoadRunConfig has already refused an env whose
  // action space the algorithm does not support, naming the envs that fit (CheckAlgorithmFitsEnv).
  if (config.GetString("algo") == "dqn") {
    return algo::MakeDqn(algo::DqnConfigFromConfig(config), spec);
  }
  if (config.GetString("algo") == "sac") {
    return algo::MakeSac(algo::SacConfigFromConfig(config), spec);
  }
  return algo::MakePpo(algo::PpoConfigFromConfig(config), spec);
}

namespace {
// Whether `dir` holds only what a run that failed before its first file leaves: its train.lock
// (released when it ended; a holder is refused when the new run takes the lock) and an empty
// checkpoints folder.
bool HoldsOnlyAnEmptyRunsLeftovers(const std::string& dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool lock = name == "train.lock" && entry.is_regular_file(ec);
    const bool empty_checkpoints =
        name == "checkpoints" && entry.is_directory(ec) && fs::is_empty(entry.path(), ec);
    if (!lock && !empty_checkpoints) return false;
  }
  return !ec;
}
}  // namespace

void RequireNewOrEmptyDir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      throw ConfigError("--out", dir, "a new or empty directory (it is a file)");
    }
    if (!fs::is_empty(dir, ec) && !HoldsOnlyAnEmptyRunsLeftovers(dir)) {
      throw ConfigError("--out", dir, "a new or empty directory (it exists and is not empty)");
    }
  }
}

namespace {

// `greenrl train <args>` as this process was started: alone, or as one of world_size ranks of
// greenrl launch, torchrun, or srun / mpirun (which only the user can spell).
std::string TrainCommandAsStarted(const dist::DistEnv& dist_env, int world_size,
                                  const std::string& args) {
  const std::string& program = ProgramName();  // a program of the user's own knows its envs
  if (world_size == 1) return program + " train " + args;
  if (dist_env.source == "torchrun") {
    return fmt::format(
        "torchrun --no-python --nproc_per_node P {} train {} (as this run was "
        "started: P ranks per node, {} in all)",
        program, args, world_size);
  }
  if (dist_env.source == "slurm" || dist_env.source == "openmpi") {
    return fmt::format("`{} train {}` on each of {} ranks, started as this run was ({})", program,
                       args, world_size, dist_env.source);
  }
  return fmt::format("{} launch --nproc {} -- train {}", program, world_size, args);
}

void CreateRunDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "checkpoints", ec);
  if (ec) throw std::runtime_error("cannot create run directory '" + dir + "': " + ec.message());
}

// The monitor.csv rows a resume from `state` keeps: those the checkpoint counted, or, in a
// checkpoint written before it counted them, one per episode.
int64_t MonitorRowsOf(const TrainerState& state) {
  return state.monitor_rows >= 0 ? state.monitor_rows : state.episodes;
}

// A dry run's check of a new run's directory: creates what CreateRunDir would, with the same
// error where it fails, then removes what it created, so nothing is left.
// Errors: CreateRunDir's std::runtime_error.
void ProbeRunDir(const std::string& dir) {
  std::error_code ec;
  fs::path first_missing = fs::path(dir) / "checkpoints";
  if (fs::exists(first_missing, ec)) return;  // nothing to create (and nothing to remove)
  for (fs::path p = first_missing.parent_path(); !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    first_missing = p;
    if (p == p.parent_path()) break;
  }
  CreateRunDir(dir);
  fs::remove_all(first_missing, ec);
}
}  // namespace

void ConfigureThreads(int torch_threads) {
  // Debian's LibTorch is built with OpenMP: at::set_num_threads also calls omp_set_num_threads,
  // which OpenBLAS's OpenMP build (libopenblas0-openmp) reads before each call. Its pthreads
  // build keeps a pool of its own, sized here.
  at::set_num_threads(torch_threads);
  SizeOpenBlasPthreads(torch_threads);
}

void RequireSameConfigOnEveryRank(const std::vector<std::string>& configs) {
  // The lines without their "  # doc" comments and surrounding blanks, each key named in full
  // ("energy.budget_wh: 0.002" for "budget_wh: 0.002" under "energy:").
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::vector<std::pair<size_t, std::string>> sections;  // (indent, name) of the open ones
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      line = line.substr(0, line.find("  #"));
      const size_t first = line.find_first_not_of(' ');
      const size_t last = line.find_last_not_of(' ');
      if (first == std::string::npos) {
        out.push_back("");
        continue;
      }
      const std::string body = line.substr(first, last - first + 1);
      while (!sections.empty() && sections.back().first >= first) sections.pop_back();
      std::string path;
      for (const auto& section : sections) path += section.second + ".";
      out.push_back(path + body);
      if (body.size() > 1 && body.back() == ':')
        sections.emplace_back(first, body.substr(0, body.size() - 1));
    }
    return out;
  };
  const std::vector<std::string> reference = lines(configs.at(0));
  for (size_t r = 1; r < configs.size(); ++r) {
    if (configs[r] == configs[0]) continue;
    const std::vector<std::string> mine = lines(configs[r]);
    size_t k = 0;
    while (k < mine.size() && k < reference.size() && mine[k] == reference[k]) ++k;
    const std::string theirs = k < mine.size() ? mine[k] : "(no more keys)";
    const std::string rank0 = k < reference.size() ? reference[k] : "(no more keys)";
    throw ConfigError("config", fmt::format("rank {}: {}", r, theirs),
                      fmt::format("the same resolved config on every rank (rank 0: {}); start "
                                  "every rank with the same --config and --set values",
                                  rank0));
  }
}

int64_t RunLastStep(const Config& config, int world_size) {
  const std::string algo = config.GetString("algo");
  const int64_t per_env = algo == "ppo" ? config.GetInt("n_steps") : config.GetInt("train_freq");
  const int64_t block = per_env * config.GetInt("n_envs") * static_cast<int64_t>(world_size);
  const int64_t total_steps = config.GetInt("n_timesteps");
  return (total_steps + block - 1) / block * block;
}

std::string DefaultRunDir(const Config& config) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return fmt::format("runs/{}_{}_s{}_{}", config.GetString("env_id"), config.GetString("algo"),
                     config.GetInt("seed"), stamp);
}

std::string ClaimNewRunDir(const std::string& base) {
  std::error_code ec;
  const fs::path parent = fs::path(base).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);  // runs/; a failure shows below
  for (int n = 1;; ++n) {
    const std::string candidate = n == 1 ? base : fmt::format("{}_{}", base, n);
    if (fs::create_directory(candidate, ec)) return candidate;  // made here: no one else's
    std::error_code exists_ec;
    if (ec && !fs::exists(candidate, exists_ec)) {  // a file of that name is taken too
      throw std::runtime_error("cannot create run directory '" + candidate + "': " + ec.message());
    }
  }
}

std::string NextFreeRunDir(const std::string& base) {
  std::error_code ec;
  if (!fs::exists(base, ec)) return base;
  for (int n = 2;; ++n) {
    const std::string candidate = fmt::format("{}_{}", base, n);
    if (!fs::exists(candidate, ec)) return candidate;
  }
}

report::EmissionsRow MakeEmissionsRow(const report::RunReport& r, double end_unix_s) {
  report::EmissionsRow row;
  row.timestamp = report::FormatEmissionsTimestamp(end_unix_s);  // CodeCarbon: the end
  row.project_name = "greenrl";
  row.run_id = fs::path(r.run_dir).filename().string();
  row.experiment_id = r.algo + "-" + r.env_id;
  // CodeCarbon's duration is the span its energy was measured over (the tracker's start to stop):
  // the energy totals' span (energy.json's duration_s), which the power and rate columns divide by.
  row.duration_s = r.monitor_duration_s > 0.0 ? r.monitor_duration_s : r.wall_time_s;
  row.emissions_kg = r.carbon.kg_co2e;
  double cpu_j = 0, gpu_j = 0, ram_j = 0;
  bool has_cpu = false, has_gpu = false, has_ram = false;
  int64_t gpu_domains = 0;  // one "gpu:<index>" domain per metered GPU
  for (const auto& d : r.domains) {
    if (!energy::IsAdditiveDomain(d.domain)) continue;
    if (d.domain.rfind("gpu:", 0) == 0) {
      gpu_j += d.energy_j;
      has_gpu = true;
      ++gpu_domains;
    } else if (d.domain.rfind("dram:", 0) == 0) {
      ram_j += d.energy_j;
      has_ram = true;
    } else {
      cpu_j += d.energy_j;
      has_cpu = true;
    }
  }
  // CodeCarbon's energy columns are the facility's energy: it multiplies each reading by the PUE
  // before adding it up (codecarbon/core/measure.py, MeasurePowerEnergy.do_measure), while its
  // power columns are the hardware's draw.
  const double pue = r.carbon.pue;
  const double t = row.duration_s > 0 ? row.duration_s : 1.0;
  if (has_cpu) row.cpu_energy_j = cpu_j * pue, row.cpu_power_w = cpu_j / t;
  if (has_gpu) row.gpu_energy_j = gpu_j * pue, row.gpu_power_w = gpu_j / t;
  if (has_ram) row.ram_energy_j = ram_j * pue, row.ram_power_w = ram_j / t;
  row.energy_consumed_j = r.total_energy_j() * pue;
  if (const energy::RegionIntensity* region = energy::FindRegion(r.carbon.region)) {
    row.country_name = region->name;
    row.country_iso_code = region->alpha3;
  }
  // CodeCarbon's os is Python's platform.platform(), "<system>-<release>-<machine>-with-<libc>";
  // uname(2)'s first three.
  utsname uts{};
  row.os = ::uname(&uts) == 0 ? fmt::format("{}-{}-{}", uts.sysname, uts.release, uts.machine)
                              : std::string("Linux");
  row.cpu_count = static_cast<int64_t>(std::thread::hardware_concurrency());
  row.cpu_model = ThisCpu().model;
  row.gpu_count = gpu_domains;
  // CodeCarbon's ram_total_size: psutil.virtual_memory().total / 1024^3 (codecarbon/external/
  // hardware.py, RAM.machine_memory_GB with its B_TO_GB of 1024^3), the machine's whole memory.
  if (const double bytes = MachineMemoryBytes(); bytes > 0.0) {
    row.ram_total_size_gb = bytes / (1024.0 * 1024.0 * 1024.0);
  }
  bool process_scope = false;
  for (const auto& d : r.domains) process_scope |= d.scope == "process";
  row.tracking_mode = process_scope ? "process" : "machine";
  row.pue = r.carbon.pue;
  return row;
}

namespace {
// Data-parallel pieces of Train (see trainer.h).

// The normaliser's statistics as Chan moments, from its GetState() layout
// [version, obs_dim, obs_count, obs_mean[d], obs_var[d], ret_count, ret_mean, ret_var].
struct NormMoments {
  dist::Moments obs, ret;
};
NormMoments ReadNormMoments(const std::vector<double>& s) {
  const size_t d = static_cast<size_t>(s[1]);
  NormMoments m;
  m.obs = {s[2], {s.begin() + 3, s.begin() + 3 + d}, {s.begin() + 3 + d, s.begin() + 3 + 2 * d}};
  m.ret = {s[3 + 2 * d], {s[4 + 2 * d]}, {s[5 + 2 * d]}};
  return m;
}

// Merges what every rank's normaliser saw since the last merge (its statistics minus `base`,
// the merged statistics all ranks started the rollout from) into `base`, in rank order, and sets
// the result on every rank: all ranks normalise with identical statistics afterwards.
void MergeNormalizers(Collectives& c, env::NormalizeVecEnv* normalizer, std::vector<double>* base) {
  std::vector<double> state = normalizer->GetState();
  const NormMoments local = ReadNormMoments(state), from = ReadNormMoments(*base);
  const dist::Moments d_obs = dist::SubtractMoments(local.obs, from.obs);
  const dist::Moments d_ret = dist::SubtractMoments(local.ret, from.ret);
  const size_t dim = d_obs.mean.size(), slot = 4 + 2 * dim;
  std::vector<double> all(slot * static_cast<size_t>(c.world_size()), 0.0);
  double* mine = &all[slot * static_cast<size_t>(c.rank())];
  mine[0] = d_obs.count;
  std::copy(d_obs.mean.begin(), d_obs.mean.end(), mine + 1);
  std::copy(d_obs.var.begin(), d_obs.var.end(), mine + 1 + dim);
  mine[1 + 2 * dim] = d_ret.count, mine[2 + 2 * dim] = d_ret.mean[0];
  mine[3 + 2 * dim] = d_ret.var[0];
  c.AllReduceSum(all.data(), static_cast<int64_t>(all.size()), "normalizer statistics");
  NormMoments merged = from;
  for (int r = 0; r < c.world_size(); ++r) {
    const double* p = &all[slot * static_cast<size_t>(r)];
    merged.obs = dist::MergeMoments(merged.obs,
                                    {p[0], {p + 1, p + 1 + dim}, {p + 1 + dim, p + 1 + 2 * dim}});
    merged.ret =
        dist::MergeMoments(merged.ret, {p[1 + 2 * dim], {p[2 + 2 * dim]}, {p[3 + 2 * dim]}});
  }
  state[2] = merged.obs.count;
  std::copy(merged.obs.mean.begin(), merged.obs.mean.end(), state.begin() + 3);
  std::copy(merged.obs.var.begin(), merged.obs.var.end(), state.begin() + 3 + dim);
  state[3 + 2 * dim] = merged.ret.count, state[4 + 2 * dim] = merged.ret.mean[0];
  state[5 + 2 * dim] = merged.ret.var[0];
  normalizer->SetState(state);
  *base = std::move(state);
}

// A rank's seed: rank 0 keeps the config's (a one-rank run is unchanged), rank r > 0 uses
// seed + 1000003 r mod 2^32 (the config's seed range).
uint64_t RankSeed(uint64_t seed, int rank) {
  return (seed + 1000003ull * static_cast<uint64_t>(rank)) % 4294967296ull;
}

// `value` > 0 rounded up to `digits` significant digits (0.00201897x -> 0.00201898 at 6).
double CeilSignificant(double value, int digits) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(value))));
  return std::ceil(value * scale * (1.0 - 1e-12)) / scale;
}

// The energy budget's refusals of a resume, before any training: a run the budget stopped needs
// a larger budget (or none) with room for the next iteration the stop estimated plus its final
// evaluation's reserve, else it would stop again after one iteration; and any budget must be
// more than what the run has used. state: the newest resume checkpoint's; used_j: the run's (the
// job's) energy at it, J.
// Errors: ConfigError("energy.budget_wh", ...) saying the least budget that works.
void RefuseResumeBudget(const energy::BudgetOptions& options, const TrainerState& state,
                        double used_j) {
  if (options.budget_wh <= 0.0) return;
  if (state.budget && state.budget->stopped()) {
    const energy::BudgetSnapshot& b = *state.budget;
    if (options.budget_wh <= b.budget_wh) {
      throw ConfigError(
          "energy.budget_wh", fmt::format("{}", options.budget_wh),
          fmt::format("a budget above the {} Wh that stopped this run at step {}: resume "
                      "with --set energy.budget_wh=W, W > {}, or energy.budget_wh=0 for no "
                      "budget",
                      b.budget_wh, b.stopped_at_step(), b.budget_wh));
    }
    const auto stop = std::find_if(b.events.rbegin(), b.events.rend(), [](const auto& e) {
      return e.action == energy::BudgetAction::kStop;
    });
    if (stop != b.events.rend()) {
      const double needed_j =
          used_j + options.stop_margin * stop->next_iteration_energy_j + stop->reserve_j;
      // Quoted rounded up (6 significant digits), so the value quoted is accepted.
      const double needed_wh = CeilSignificant(needed_j / kJoulesPerWh, 6);
      if (options.budget_wh * kJoulesPerWh < needed_j) {
        throw ConfigError(
            "energy.budget_wh", fmt::format("{}", options.budget_wh),
            fmt::format("at least {:.6g} Wh, which buys one more iteration by the stop's "
                        "estimates (the resumed process's start before its first iteration comes "
                        "on top: give a little more to stay within it), and more for more of "
                        "them: this run used {:.6g} Wh up to step {}, where the "
                        "budget stopped it with its next iteration estimated at {:.5g} J (x "
                        "stop_margin {}) and what follows the last one (its final evaluation or "
                        "the stop's checkpoint) at {:.5g} J; a smaller budget stops it again "
                        "after one iteration",
                        needed_wh, used_j / kJoulesPerWh, b.stopped_at_step(),
                        stop->next_iteration_energy_j, options.stop_margin, stop->reserve_j));
      }
    }
  }
  // A budget the run has already used up would stop it after one more iteration.
  if (options.budget_wh * kJoulesPerWh <= used_j) {
    throw ConfigError("energy.budget_wh", fmt::format("{}", options.budget_wh),
                      fmt::format("a budget above the {:.6g} Wh this run used up to its checkpoint "
                                  "at step {}, or 0 for no budget",
                                  used_j / kJoulesPerWh, state.steps));
  }
}
}  // namespace

TrainResult Train(const Config& config, TrainOptions options) {
  // --- Everything that can refuse the input, before the run dir exists.
  const std::string env_id = config.GetString("env_id");
  const std::string algo_id = config.GetString("algo");
  const uint64_t seed = static_cast<uint64_t>(config.GetInt("seed"));
  const int n_envs = static_cast<int>(config.GetInt("n_envs"));
  const int64_t total_steps = config.GetInt("n_timesteps");
  const int64_t eval_freq = config.GetInt("eval.freq");
  const int eval_episodes = static_cast<int>(config.GetInt("eval.episodes"));
  const int final_episodes = static_cast<int>(config.GetInt("eval.final_episodes"));
  const bool save_best = config.GetBool("eval.save_best");
  // Data-parallel without --out: every rank takes rank 0's name once connected (below), since
  // each rank's clock may name another second.
  // Without --out: the first free of the default name and its _2, _3, ... (NextFreeRunDir), for
  // the checks before the run; the run claims its own (ClaimNewRunDir of `default_base`) where it
  // makes it, below.
  const std::string default_base = options.out_dir.empty() ? DefaultRunDir(config) : "";
  std::string run_dir = options.out_dir.empty() ? NextFreeRunDir(default_base) : options.out_dir;
  struct RemoveIfEmpty {  // a claimed run directory (below) that no file reached
    std::string dir;
    ~RemoveIfEmpty() {
      std::error_code ec;
      if (!dir.empty()) fs::remove(dir, ec);  // fails, leaving it, once anything is inside
    }
  } claimed_run_dir;
  // Data-parallel group (world size 1 without a launcher): checked before any work.
  const dist::DistOptions dist_options = DistOptionsFrom(config);
  dist::ValidateDistOptions(dist_options);
  const dist::DistEnv dist_env =
      options.process_group != nullptr ? dist::DistEnv{} : dist::ReadDistEnv();
  std::unique_ptr<dist::ProcessGroup> owned_group;
  dist::ProcessGroup* group = options.process_group;
  const int world_size = group != nullptr ? group->world_size() : dist_env.world_size;
  const int rank = group != nullptr ? group->rank() : dist_env.rank;
  const bool writer = rank == 0;  // rank 0 alone writes the run dir, evaluates, checkpoints
  // MuJoCo's own warnings follow the run's: rank 0's alone, none under --quiet; restored on return.
  struct SimulatorWarnings {
    const bool before = env::SimulatorWarningsPrinted();
    ~SimulatorWarnings() { env::SetSimulatorWarningsPrinted(before); }
  } restore_simulator_warnings;
  env::SetSimulatorWarningsPrinted(options.verbose && writer);
  // --- resume (checkpointing.h): the run dir must hold an unfinished run with a checkpoint.
  const CheckpointOptions ckpt = CheckpointOptionsFrom(config);
  const energy::BudgetOptions budget_options = BudgetOptionsFrom(config);
  std::vector<std::pair<int64_t, std::string>> resume_from;
  // No second process trains into this directory (checkpointing.h). A resume takes the lock
  // before it reads a checkpoint: a run still stopping (writing its last checkpoint, or
  // final.pt) holds it, and the resume is refused rather than continuing from an older
  // checkpoint or a finished run; so a refused resume has written its pid into train.lock (the
  // lock file, made where missing) and nothing else. A new run takes it once it made the
  // directory (below), and checks again there that the directory is empty; a dry run checks it
  // and writes nothing.
  // Data-parallel: every rank checks the lock before connecting (rank 0 takes it once the ranks
  // are connected, below), so a refusal is every rank's at once, not rank 0's alone while the
  // others wait dist.timeout_s for it at the rendezvous.
  std::optional<RunDirLock> run_lock;
  if (options.resume && fs::is_directory(run_dir)) {  // else refused below
    if (options.dry_run || world_size > 1) {
      RunDirLock::RefuseIfHeld(run_dir, "--resume");
    } else {
      run_lock.emplace(run_dir, "--resume");
    }
  }
  if (options.resume) {
    resume_from = ListCheckpoints(run_dir);
    // The newest checkpoint that reads (the load below skips or reports unreadable ones).
    std::optional<TrainerState> newest;
    std::string newest_path;
    for (auto it = resume_from.rbegin(); it != resume_from.rend() && !newest; ++it) {
      newest = PeekTrainerState(it->second);
      newest_path = it->second;
    }
    // What a stopped segment spent after its checkpoint counts too (energy.json's figures).
    if (newest) CarryOverStoppedSegment(run_dir, &*newest);
    if (fs::exists(run_dir + "/checkpoints/final.pt")) {
      // Say why it finished when eval.reward_threshold ended it before n_timesteps.
      std::string why;
      try {
        const nlohmann::json early =
            nlohmann::json::parse(std::ifstream(run_dir + "/energy.json")).at("early_stop");
        if (!early.is_null()) {
          why = fmt::format(": eval.reward_threshold {} ended it at step {} of {}",
                            early.at("reward_threshold").get<double>(),
                            early.at("global_step").get<int64_t>(),
                            early.at("n_timesteps").get<int64_t>());
        }
      } catch (const std::exception&) {  // no or an older energy.json: final.pt says enough
      }
      throw ConfigError(
          "--resume", run_dir,
          "an unfinished run (this one finished" + why +
              "; it has checkpoints/final.pt); to train its agent further, start a "
              "new run from it: " +
              TrainCommandAsStarted(dist_env, world_size,
                                    "--config " + ShellWord(run_dir + "/config.yaml") +
                                        " --trained-agent " + ShellWord(run_dir) +
                                        " --set n_timesteps=N"));
    }
    // A run the energy budget stopped ended with a resume checkpoint (no final.pt): it continues
    // under a larger budget (or none), which must be given before any work. With several ranks
    // the energy here is rank 0's, a lower bound of the job's: the ranks check again with the
    // job's once they have loaded their checkpoints (below).
    if (newest) RefuseResumeBudget(budget_options, *newest, newest->energy.total_energy_j());
    if (resume_from.empty()) {
      throw ConfigError(
          "--resume", run_dir,
          std::string("a run directory with a resume checkpoint (checkpoints/step_*.pt)") +
              (fs::exists(FinalPendingPath(run_dir))
                   ? "; this run trained to its end and its final writes did not finish: " +
                         ProgramName() +
                         " eval and export --run read its policy, checkpoints/final.pt.pending"
                   : ""));
    }
    // Nothing left to train would end the run without an iteration: refuse before any work.
    if (total_steps <= resume_from.back().first) {
      throw ConfigError("n_timesteps", std::to_string(total_steps),
                        fmt::format("more than the step of the newest checkpoint, {} ({}): "
                                    "resume with --set n_timesteps=N, N > {}",
                                    resume_from.back().first, resume_from.back().second,
                                    resume_from.back().first));
    }
    // The ranks' envs, generators and replay buffers are saved per rank: a resume needs the
    // world size the run was checkpointed with (every rank reads rank 0's newest checkpoint, so
    // all of them refuse alike, before any connection).
    // (The newest readable checkpoint, peeked above; an unreadable one is skipped or reported
    // by the load below.)
    if (newest && newest->world_size != world_size) {
      throw ConfigError(
          "--resume", run_dir,
          fmt::format("a launch with the world size the run was checkpointed with: {} was "
                      "written with WORLD_SIZE {}, this launch has WORLD_SIZE {}",
                      newest_path, newest->world_size, world_size));
    }
    if (rank > 0) resume_from = ListCheckpoints(run_dir, rank);  // this rank's own files
  } else {
    // Every rank, before connecting (no rank writes into it before then): with --out the ranks
    // check the same directory and refuse alike; without, rank r > 0 checks a name it drops for
    // rank 0's once connected.
    RequireNewOrEmptyDir(run_dir);
    if (options.dry_run && fs::exists(run_dir + "/train.lock")) RunDirLock::RefuseIfHeld(run_dir);
  }
  // --- end resume
  // trained_agent (rl-zoo's --trained-agent): a new run starting from another run's agent,
  // found and checked against this config before any work; a resume ignores it (its checkpoint
  // holds the agent).
  std::optional<TrainedAgentFiles> trained_agent;
  report::TrainedAgentReport trained_agent_report;
  // config.yaml keeps it (and carbon.intensity_csv, energy.powercap_root, an energy.nvml_library
  // given as a path) as an absolute path, so a --resume, eval or export from another folder finds
  // it; tidied ("a/./b", "a//b", "a/x/../b" as "a/b"), as Python's os.path.abspath gives it.
  auto absolute_path = [](const std::string& p) {
    return fs::absolute(p).lexically_normal().string();
  };
  Config saved_config = config;
  if (const std::string series = config.GetString("carbon.intensity_csv"); !series.empty()) {
    saved_config.Set("carbon.intensity_csv", absolute_path(series));
  }
  // (Set only when that changes them: the defaults stay defaults.) A library name without '/' is
  // dlopen's to search for, and stays as it is.
  for (const char* key : {"energy.powercap_root", "energy.nvml_library"}) {
    const std::string path = config.GetString(key);
    const bool nvml = std::string(key) == "energy.nvml_library";
    if (path.empty() || (nvml && path.find('/') == std::string::npos)) continue;
    if (const std::string tidy = absolute_path(path); tidy != path) saved_config.Set(key, tidy);
  }
  if (const std::string given = config.GetString("trained_agent"); !given.empty()) {
    const std::string path = absolute_path(given);
    saved_config.Set("trained_agent", path);
    if (!options.resume) {
      trained_agent = ResolveTrainedAgent(path, config);  // its notes are said once it loads
      trained_agent_report = {trained_agent->checkpoint, trained_agent->energy_wh};
    } else {  // only for the report
      trained_agent_report = TrainedAgentOfResumedRun(path, run_dir, config);
    }
  }
  const energy::CarbonOptions carbon_options = CarbonOptionsFrom(config);
  energy::ValidateCarbonOptions(carbon_options);
  std::optional<energy::IntensitySeries> intensity_series;
  if (!config.GetString("carbon.intensity_csv").empty()) {  // by its tidy path (intensity_source)
    intensity_series =
        energy::IntensitySeries::LoadCsv(saved_config.GetString("carbon.intensity_csv"));
  }

  ConfigureThreads(static_cast<int>(config.GetInt("threads.torch")));
  if (options.verbose && writer) {
    const std::string spin =
        SpinningOpenMpWarning(static_cast<int>(config.GetInt("threads.torch")));
    if (!spin.empty()) fmt::print(stderr, "greenrl: {}\n", spin);
  }
  if (group == nullptr && world_size > 1 && !options.dry_run) {
    owned_group = dist::ProcessGroup::Connect(dist_env, dist_options);
    group = owned_group.get();
  }
  if (group != nullptr && world_size > 1) {
    // Every rank must train the same resolved config: a rank started with another --set would
    // otherwise train beside the others (another learning rate: the copies drift apart) or stop
    // matching their collectives. Compared line by line with rank 0's.
    RequireSameConfigOnEveryRank(
        group->AllGatherText("config", config.ToYaml(), "resolved config"));
    // Without --out rank 0 claims its default name by making the directory, so that another job
    // started in the same second, whose rank 0 found the same name free, takes the next one
    // (its other ranks' files would otherwise land in this one before rank 0 could check it
    // again); removed again, while still empty, if the run fails before it writes there.
    if (writer && options.out_dir.empty() && !options.resume) {
      run_dir = ClaimNewRunDir(default_base);
      claimed_run_dir.dir = run_dir;
    }
    // One run directory for the job: without --out rank 0's name; with --out (or --resume) the
    // same directory on every rank, else rank 0's reports and rank r's checkpoints would part.
    // Whether each rank was given one travels with it ("given " or "default " before the path),
    // so that a directory given to some ranks only is refused by every rank alike.
    const std::string given = fs::absolute(run_dir).lexically_normal().string();
    const std::vector<std::string> dirs = group->AllGatherText(
        "run_dir", options.out_dir.empty() ? "default " + run_dir : "given " + given,
        "run directory");
    auto was_given = [](const std::string& d) { return d.rfind("given ", 0) == 0; };
    auto path_of = [](const std::string& d) { return d.substr(d.find(' ') + 1); };
    const std::string flag = options.resume ? "--resume" : "--out";
    for (size_t r = 1; r < dirs.size(); ++r) {
      if (was_given(dirs[r]) != was_given(dirs[0])) {
        const size_t giver = was_given(dirs[0]) ? 0 : r;
        throw ConfigError(flag, path_of(dirs[giver]),
                          fmt::format("{} on every rank or on none: rank {} gave it, rank {} did "
                                      "not (its checkpoints would go elsewhere)",
                                      flag, giver, giver == 0 ? r : 0));
      }
      if (was_given(dirs[0]) && dirs[r] != dirs[0]) {
        throw ConfigError(flag, fmt::format("rank {}: {}", r, path_of(dirs[r])),
                          fmt::format("the same run directory on every rank (rank 0: {}): "
                                      "rank 0 writes the reports and every rank its checkpoints "
                                      "into it",
                                      path_of(dirs[0])));
      }
    }
    if (options.out_dir.empty()) run_dir = path_of(dirs[0]);
  }
  Config rank_config = config;
  if (rank > 0) rank_config.Set("seed", std::to_string(RankSeed(seed, rank)));
  // threads.env is an upper bound: too few rows per thread would make the hand-off cost more
  // than it saves (env::EnvThreadsFor); results do not depend on it.
  const int env_threads_asked = static_cast<int>(config.GetInt("threads.env"));
  const int env_threads = env::EnvThreadsFor(env_id, n_envs, env_threads_asked);
  if (env_threads < env_threads_asked && options.verbose && writer) {
    fmt::print(stderr,
               "greenrl: threads.env {}: stepping {} {} env{} on {} thread{} (fewer rows "
               "per thread would cost more in hand-offs than they save)\n",
               env_threads_asked, n_envs, env_id, n_envs == 1 ? "" : "s", env_threads,
               env_threads == 1 ? "" : "s");
  }
  std::unique_ptr<env::VecEnv> env =
      env::MakeVecEnv(env_id, n_envs, RankSeed(seed, rank), env_threads);
  // VecNormalize (normalize: true): the agent trains on normalised obs and rewards; evaluation
  // and the checkpoint use the same statistics, frozen.
  env::NormalizeVecEnv* normalizer = nullptr;
  if (config.GetBool("normalize")) {
    auto wrapped =
        std::make_unique<env::NormalizeVecEnv>(std::move(env), NormalizeOptionsFrom(config));
    normalizer = wrapped.get();
    env = std::move(wrapped);
  }
  auto snapshot = [&]() -> std::optional<NormalizerSnapshot> {
    if (normalizer == nullptr) return std::nullopt;
    return NormalizerSnapshot{normalizer->options(), normalizer->GetState()};
  };
  auto algorithm = MakeAlgorithm(rank_config, env->spec());
  // Off-policy replay stores the raw transitions and normalises sampled batches (SB3).
  if (normalizer != nullptr) algorithm->SetReplayNormalizer(normalizer);
  if (trained_agent) {  // its parameters and optimiser state (every rank loads the same file)
    // A damaged newest resume checkpoint (or final.pt.pending) gives way to the one before, as
    // eval and export take them; the newest one's error when none loads.
    const std::string newest = trained_agent->checkpoint;
    try {
      LoadNewestLoadable(&*trained_agent, [&](const TrainedAgentFiles& found) {
        algorithm->LoadCheckpoint(found.checkpoint);
        RequireFiniteParameters(*algorithm, found.checkpoint);
      });
    } catch (const ConfigError& e) {  // another network shape or kind, a damaged file
      throw ConfigError("trained_agent", config.GetString("trained_agent"),
                        "an agent this run's network can load; its checkpoint " + newest +
                            " does not load, needing " +
                            (e.accepted().empty() ? std::string(e.what()) : e.accepted()));
    }
    if (options.verbose && writer) {  // rank 0's say it for the job
      for (const std::string& note : trained_agent->notes) {
        fmt::print(stderr, "greenrl: {}\n", note);
      }
      const std::string notice = ResumeCheckpointNotice(*trained_agent);
      if (!notice.empty()) fmt::print(stderr, "greenrl: trained agent: {}\n", notice);
    }
    trained_agent_report.checkpoint = trained_agent->checkpoint;
    // An agent taken from a resume checkpoint (its run has no final.pt yet, or one was named):
    // config.yaml names that file, so that training again from config.yaml loads the same agent
    // after its run has trained further or finished.
    if (!trained_agent->final_checkpoint) {
      saved_config.Set("trained_agent", absolute_path(trained_agent->checkpoint));
    }
    algorithm->ResetNumTimesteps();  // a new run's schedules, as rl-zoo's learn
    if (normalizer != nullptr) normalizer->SetState(trained_agent->normalizer->state);
  }
  if (world_size > 1 && !options.dry_run) {
    algorithm->SetCollectives(group);  // broadcasts rank 0's parameters
  }
  std::vector<double> normalizer_base;  // the merged statistics all ranks share (data-parallel)
  if (normalizer != nullptr) normalizer_base = normalizer->GetState();

  // A resume's checkpoint (an older one when the newest does not load) must leave steps to train.
  // Errors: ConfigError "n_timesteps" when it is at or past n_timesteps.
  auto require_steps_left = [&](const TrainerState& state, const std::string& path) {
    if (!path.empty() && state.steps >= total_steps) {
      throw ConfigError(
          "n_timesteps", std::to_string(total_steps),
          fmt::format("more than the step of the checkpoint resumed, {} ({})", state.steps, path));
    }
  };
  // --- resume (checkpointing.h): a single process loads the newest of its checkpoints that
  // loads into the agent now, before anything is logged, so a checkpoint this config cannot take
  // (another network) is refused with only why; the ranks of a data-parallel run agree on one
  // below, once connected. When none loads, the oldest one's ConfigError.
  TrainerState resumed;  // the totals of earlier segments (zero for a new run)
  std::string resumed_path;
  std::vector<std::string> passed_over;  // newer checkpoints that did not load
  for (auto it = resume_from.rbegin();
       world_size == 1 && it != resume_from.rend() && resumed_path.empty(); ++it) {
    // A config.yaml edited since the run wrote it: refused by name (not a checkpoint to skip).
    if (const auto peek = PeekTrainerState(it->second)) {
      RefuseChangedFixedKeys(config, *peek, it->second);
    }
    try {
      resumed = LoadResumeCheckpoint(algorithm.get(), it->second);
      resumed_path = it->second;
      CarryOverStoppedSegment(run_dir, &resumed);  // energy.json's later figures, same step
    } catch (const ConfigError& e) {
      if (std::next(it) == resume_from.rend()) throw;
      if (options.verbose) fmt::print(stderr, "greenrl: skipping {}: {}\n", it->second, e.what());
      passed_over.push_back(it->second);
    }
  }
  require_steps_left(resumed, resumed_path);
  // A newer checkpoint that did not load belongs to the steps this resume does again: set aside
  // as <name>.damaged (kept to look at), so that it neither counts against checkpoint_keep, which
  // deleted the older good ones first while it stayed, nor is tried by a later resume.
  if (!options.dry_run) {
    for (const std::string& path : passed_over) {
      std::error_code ec;
      fs::rename(path, path + ".damaged", ec);
      if (options.verbose && ec) {
        fmt::print(stderr, "greenrl: could not set aside {0} as {0}.damaged ({1}); it stays\n",
                   path, ec.message());
      } else if (options.verbose) {
        fmt::print(stderr, "greenrl: set aside {0} as {0}.damaged: no longer a resume checkpoint\n",
                   path);
      }
    }
  }

  // What this process spent before its meters start (loading LibTorch, reading the config) is
  // reported beside the totals, never in them, as no meter saw it.
  const double cpu_before_meters_s = ProcessCpuSeconds();
  std::string meter_reason, meter_brief;
  std::vector<std::unique_ptr<energy::EnergyMeter>> meters =
      RunMeters(config, std::move(options.meter_override), &meter_reason, &meter_brief);
  // Logged in full once, here; the closing summary then names the meters only (meter_brief).
  const bool meter_reason_logged = options.verbose && writer;
  if (meter_reason_logged) fmt::print(stderr, "greenrl: energy meter: {}\n", meter_reason);
  if (options.verbose && writer) {
    for (const std::string& warning : options.warnings) {
      fmt::print(stderr, "greenrl: {}\n", warning);
    }
  }
  if (options.verbose && writer && algo_id == "ppo") {
    // SB3 warns of the same: every epoch is then one (truncated) minibatch of the rollout.
    const int64_t rollout = config.GetInt("n_steps") * config.GetInt("n_envs");
    const int64_t batch_size = config.GetInt("batch_size");
    if (batch_size > rollout) {
      fmt::print(stderr,
                 "greenrl: batch_size {} is above n_steps * n_envs = {}: each epoch is one "
                 "minibatch of the whole rollout ({} rows), as in SB3\n",
                 batch_size, rollout, rollout);
    } else if (rollout % batch_size != 0) {
      fmt::print(stderr,
                 "greenrl: batch_size {} does not divide n_steps * n_envs = {}: after every {} "
                 "full minibatches comes one of {} rows (SB3 warns of the same; a batch_size that "
                 "divides the rollout avoids it)\n",
                 batch_size, rollout, rollout / batch_size, rollout % batch_size);
    }
    // Whole rollouts, as SB3's learn: a run far past n_timesteps (CleanRL's --total-timesteps
    // 4000 with --num-envs 4 and SB3's n_steps 2048 trains 8192 steps) says so.
    const int64_t job_rollout = rollout * world_size;
    const int64_t planned = (total_steps + job_rollout - 1) / job_rollout * job_rollout;
    if (!options.resume && planned - total_steps >= total_steps / 4 && planned > total_steps) {
      fmt::print(stderr,
                 "greenrl: n_timesteps {} is {:.2f} rollouts of n_steps * n_envs{} = {} steps: "
                 "the run trains whole rollouts, {} steps, as SB3 does (a smaller n_steps or "
                 "n_envs comes closer)\n",
                 total_steps, static_cast<double>(total_steps) / job_rollout,
                 world_size > 1 ? " * ranks" : "", job_rollout, planned);
    }
  }
  const std::optional<double> reward_threshold = RewardThresholdFrom(config);
  if (options.verbose && writer && reward_threshold &&
      config.GetInt("eval.freq") >= config.GetInt("n_timesteps")) {
    fmt::print(stderr,
               "greenrl: eval.reward_threshold is set, but no periodic evaluation comes before "
               "n_timesteps {} (eval.freq {}): it cannot stop this run\n",
               config.GetInt("n_timesteps"), config.GetInt("eval.freq"));
  }
  // Pusher's Gymnasium reward_threshold is 0, and each of its reward terms (distance to the
  // goal, control cost, distance of the arm to the object) is <= 0 (Gymnasium 1.0 pusher_v4/v5),
  // so no episode reaches the threshold.
  if (options.verbose && writer && reward_threshold &&
      config.GetString("eval.reward_threshold") == "env" &&
      config.GetString("env_id").rfind("Pusher-", 0) == 0) {
    fmt::print(stderr,
               "greenrl: eval.reward_threshold env is {}'s reward_threshold 0, which no episode "
               "reaches (every Pusher reward is negative): it cannot stop this run; give a "
               "number instead\n",
               config.GetString("env_id"));
  }
  // DQN and SAC update only once num_timesteps passes learning_starts (SB3's rule), which a
  // short run never reaches (the MuJoCo presets' 10000 against a quick --set n_timesteps). The
  // run's last step is n_timesteps rounded up to whole rollouts (train_freq steps of every env of
  // every rank), as SB3's learn loop overshoots it.
  const int64_t rollout = algo_id == "dqn" || algo_id == "sac"
                              ? config.GetInt("train_freq") * config.GetInt("n_envs") * world_size
                              : 1;
  const int64_t last_step =
      algo_id == "dqn" || algo_id == "sac" ? RunLastStep(config, world_size) : total_steps;
  const std::string last_step_text =
      last_step == total_steps
          ? fmt::format("n_timesteps {}", total_steps)
          : fmt::format(
                "the run's last step {} (n_timesteps {} rounded up to whole train_freq "
                "blocks of {} steps)",
                last_step, total_steps, rollout);
  // As PPO's note above: a run far past n_timesteps (a quick --set n_timesteps=10 against
  // train_freq 32) says so.
  if (options.verbose && writer && !options.resume && (algo_id == "dqn" || algo_id == "sac") &&
      last_step - total_steps >= total_steps / 4 && last_step > total_steps) {
    fmt::print(stderr,
               "greenrl: n_timesteps {} is {:.2f} blocks of train_freq * n_envs{} = {} steps: the "
               "run trains whole blocks, {} steps, as SB3 does\n",
               total_steps, static_cast<double>(total_steps) / rollout,
               world_size > 1 ? " * ranks" : "", rollout, last_step);
  }
  if (options.verbose && writer && (algo_id == "dqn" || algo_id == "sac") &&
      config.GetInt("learning_starts") >= last_step) {
    if (options.resume && !resume_from.empty()) {
      // Earlier segments may have made updates (a resume that raised learning_starts): only
      // this segment's steps are warm-up ones. The checkpoint's step: the one loaded, or for
      // several ranks (which agree on one later) the newest.
      const int64_t from = world_size == 1 ? resumed.steps : resume_from.back().first;
      fmt::print(stderr,
                 "greenrl: learning_starts {} is not below {}: from the checkpoint's step {} "
                 "on, this run takes uniform random actions and makes no gradient step (any "
                 "updates made before it are kept)\n",
                 config.GetInt("learning_starts"), last_step_text, from);
    } else {
      fmt::print(stderr,
                 "greenrl: learning_starts {} is not below {}: the run ends before its updates "
                 "start (warm-up actions only, no gradient step)\n",
                 config.GetInt("learning_starts"), last_step_text);
    }
  }
  // SB3's DQN warns of this too (stable_baselines3/dqn/dqn.py, DQN._setup_model): a target
  // update per vec step at most.
  if (options.verbose && writer && algo_id == "dqn" &&
      config.GetInt("n_envs") > config.GetInt("target_update_interval")) {
    fmt::print(stderr,
               "greenrl: n_envs {} is above target_update_interval {}: the target network is "
               "updated at most once per step of the {} envs, every {} env steps (SB3 warns of "
               "the same)\n",
               config.GetInt("n_envs"), config.GetInt("target_update_interval"),
               config.GetInt("n_envs"), config.GetInt("n_envs"));
  }
  if (options.verbose && writer && world_size > 1) {
    fmt::print(stderr, "greenrl: data-parallel: {} ranks ({}), backend {}, timeout {} s\n",
               world_size, dist_env.source, dist_options.backend, dist_options.timeout_s);
  }
  // A resume measures the domains its checkpoint counted: energy is carried domain by domain, so
  // another set (energy.meter or energy.powercap_root changed, or RAPL or a GPU readable on one
  // machine and not on the other) would drop the earlier segments' energy from energy.json's
  // domains and totals while carbon kept it. Refused before anything is written (a single
  // process's dry run too, from its meters' domains).
  auto require_resumed_domains = [&](std::vector<std::string> names) {
    if (resumed_path.empty() || resumed.energy.energy_j.empty()) return;
    std::string saved, here;
    for (const auto& [domain, joules] : resumed.energy.energy_j) {
      saved += (saved.empty() ? "" : ", ") + domain;
    }
    std::sort(names.begin(), names.end());  // as the checkpoint's map lists them
    for (const std::string& name : names) here += (here.empty() ? "" : ", ") + name;
    if (saved == here) return;
    throw ConfigError(
        "energy.meter", config.GetString("energy.meter"),
        fmt::format("the meters the run was measured with, domains {} ({}); here they are {} "
                    "(another energy.meter, energy.powercap_root or energy.gpu, or a machine "
                    "whose RAPL or GPU readings differ): resume where those meters read, or start "
                    "a new run from this one's agent, whose report adds this run's energy: "
                    "greenrl train --config {}/config.yaml --trained-agent {} --out NEW_DIR",
                    saved, resumed_path, here, run_dir, run_dir));
  };
  if (options.dry_run && world_size == 1) {
    std::vector<std::string> names;
    for (const auto& meter : meters) {
      for (const std::string& d : meter->domains()) names.push_back(d);
    }
    require_resumed_domains(names);
  }
  if (options.dry_run) {  // every check a run makes before its first write has passed
    if (writer && !options.resume) ProbeRunDir(run_dir);
    TrainResult result;
    result.rank = rank;
    result.dry_run = true;
    result.config_yaml = saved_config.ToYaml();
    result.run_dir = run_dir;
    result.last_step = RunLastStep(config, world_size);
    result.report.trained_agent = trained_agent_report;  // the agent it loaded, for the last line
    return result;
  }
  const Clock& clock = options.clock != nullptr ? *options.clock : SteadyClock::Instance();

  // --- The run directory: resolved config first, metrics flushed row by row.
  std::unique_ptr<report::MetricsCsv> metrics_csv;
  std::optional<report::TfEventsWriter> tfevents;  // the same rows for TensorBoard
  // SB3's Monitor file, one row per finished training episode of this rank (rank 0:
  // monitor.csv; rank r > 0: rank<r>.monitor.csv, which SB3's load_results reads beside it).
  std::unique_ptr<report::MonitorCsv> monitor_csv;
  // config.yaml: the resolved config; a data-parallel run's first line says how many ranks
  // trained it, which the file's keys do not (a plain `train --config` of it trains one).
  // A program of the user's own (cli::Main with register_envs) is named there too: greenrl
  // itself does not know its envs (LoadRunConfig names it when the env id is unknown).
  auto config_file_text = [&] {
    const std::string ranks = world_size > 1
                                  ? fmt::format(
                                        "# trained by {} data-parallel ranks: {} launch --nproc "
                                        "{} -- train --config <this file> reruns it\n",
                                        world_size, ProgramName(), world_size)
                                  : "";
    const std::string program =
        ProgramName() != "greenrl" ? TrainedByProgramLine(ProgramName()) + "\n" : "";
    return program + ranks + saved_config.ToYaml();
  };
  // Windows wait for the device's queued work (PPO on CUDA), and the short-window warning
  // is rank 0's, silenced with the others when not verbose.
  energy::EnergyMonitor::WarnFn monitor_warn;
  if (!writer || !options.verbose) monitor_warn = [](const std::string&) {};
  // A line on stderr during the loop: over the progress line, when there is one (cleared first,
  // so the line does not run into it; the progress line comes back at its next update).
  auto say = [&](const std::string& line) {
    fmt::print(stderr, "{}{}\n", options.progress && writer ? "\r\033[K" : "", line);
  };
  // The meters' and the sampler's warnings too, when there is a progress line.
  const auto warn_over_progress = [&say](const std::string& message) {
    say("greenrl warning: " + message);
  };
  if (writer && options.verbose && options.progress) monitor_warn = warn_over_progress;
  energy::EnergyMonitor monitor(
      std::move(meters), clock, [&algorithm] { algorithm->SynchronizeDevice(); }, monitor_warn);
  // Data-parallel: which rank's reading of each domain enters the job's energy (job_energy.h),
  // from every rank's machine key and domain identities. weights[q][k]; 1 for one process.
  std::vector<std::vector<double>> job_weights(static_cast<size_t>(world_size),
                                               std::vector<double>(monitor.domains().size(), 1.0));
  if (world_size > 1) {
    const size_t num_domains = monitor.domains().size();
    std::vector<double> counts(static_cast<size_t>(world_size), 0.0);
    counts[static_cast<size_t>(rank)] = static_cast<double>(num_domains);
    group->AllReduceSum(counts.data(), world_size, "energy domain counts");
    for (int q = 0; q < world_size; ++q) {
      if (counts[static_cast<size_t>(q)] != static_cast<double>(num_domains)) {
        throw std::runtime_error(fmt::format(
            "rank {} meters {} energy domains and rank {} meters {}: every rank needs the same "
            "meters (energy.meter)",
            q, counts[static_cast<size_t>(q)], rank, num_domains));
      }
    }
    // The same domains by name and provenance on every rank: rank r's figures are written under
    // rank 0's names, so RAPL's package on one rank and the CPU-time estimate on another (a
    // machine whose RAPL is unreadable) would be summed as one "measured" domain.
    std::string names;
    for (const energy::DomainInfo& d : monitor.domains()) {
      names += (names.empty() ? "" : ", ") + d.domain + " (" + energy::ToString(d.provenance) + ")";
    }
    const std::vector<std::string> all_names =
        group->AllGatherText("energy_domains", names, "energy domains");
    for (size_t q = 1; q < all_names.size(); ++q) {
      if (all_names[q] != all_names[0]) {
        throw ConfigError(
            "energy.meter", config.GetString("energy.meter"),
            fmt::format("the same energy domains on every rank: rank 0 meters {}, rank {} {} "
                        "(each rank's energy is added domain by domain; give every rank the same "
                        "meters, e.g. --set energy.meter=estimator where one machine cannot read "
                        "RAPL)",
                        all_names[0], q, all_names[q]));
      }
    }
    const size_t row = 1 + num_domains;  // machine key, then one identity key per domain
    std::vector<double> keys(row * static_cast<size_t>(world_size), 0.0);
    double* mine = &keys[row * static_cast<size_t>(rank)];
    mine[0] = static_cast<double>(energy::MachineKey());
    std::vector<energy::Scope> scopes;
    for (size_t k = 0; k < num_domains; ++k) {
      mine[1 + k] = static_cast<double>(energy::JobKey(monitor.domains()[k].identity));
      scopes.push_back(monitor.domains()[k].scope);
    }
    group->AllReduceSum(keys.data(), static_cast<int64_t>(keys.size()), "energy domain keys");
    std::vector<energy::RankDomainKeys> ranks(static_cast<size_t>(world_size));
    for (size_t q = 0; q < ranks.size(); ++q) {
      ranks[q].machine_key = static_cast<uint64_t>(keys[row * q]);
      for (size_t k = 0; k < num_domains; ++k) {
        ranks[q].identity_keys.push_back(static_cast<uint64_t>(keys[row * q + 1 + k]));
      }
    }
    job_weights = energy::JobDomainWeights(scopes, ranks);
  }
  // The run directory, once the ranks agree on their meters (above: a refusal writes nothing).
  if (writer) {
    // A default name (no --out) is claimed by making the directory, as a data-parallel rank 0
    // did above: another run of the same second that found the same name free at its start
    // takes the next one.
    if (world_size == 1 && options.out_dir.empty() && !options.resume) {
      run_dir = ClaimNewRunDir(default_base);
      claimed_run_dir.dir = run_dir;
    }
    CreateRunDir(run_dir);
    if (!run_lock) {
      run_lock.emplace(run_dir, options.resume ? "--resume" : "--out");
      // Checked empty at the start; another run may have written here since (its setup and
      // meters lie between): checked again, now that no other can start. (Not with several
      // ranks, whose other ranks may have written their own files here by now; a data-parallel
      // resume takes the lock here, having checked it free at the start.)
      if (world_size == 1 && !options.resume) RequireNewOrEmptyDir(run_dir);
    }
    // A resumed run opens metrics.csv and a new event file once its checkpoint is loaded, so a
    // refused resume writes nothing more than train.lock's pid.
    if (!options.resume) {
      WriteFileAtomic(run_dir + "/config.yaml", config_file_text());
      metrics_csv = std::make_unique<report::MetricsCsv>(run_dir + "/metrics.csv");
      tfevents.emplace(run_dir);
    }
  }

  const std::string monitor_path = run_dir + (rank == 0 ? std::string("/monitor.csv")
                                                        : fmt::format("/rank{}.monitor.csv", rank));
  energy::SamplerOptions sampler_options;
  if (writer) sampler_options.power_csv_path = run_dir + "/power.csv";
  sampler_options.append_csv = options.resume;
  if (!options.verbose) sampler_options.warn = [](const std::string&) {};
  if (writer && options.verbose && options.progress) sampler_options.warn = warn_over_progress;
  energy::Sampler sampler(monitor, clock, config.GetFloat("energy.sample_period_s"),
                          std::move(sampler_options));
  const double start_unix_s = UnixNowS();
  if (!options.resume) {  // a resumed run reopens it once its checkpoint is loaded (below)
    std::error_code ec;
    if (!writer) fs::create_directories(run_dir, ec);  // rank 0 may not have made it yet
    monitor_csv = report::MonitorCsv::Create(monitor_path, env_id, start_unix_s);
  }
  const double t0 = clock.NowS();
  const double cpu0 = ProcessCpuSeconds();
  energy::BudgetController budget(budget_options, /*start_s=*/0.0);  // times relative to t0
  // GPU power limits: Zeus-style profiling (energy.power_limit) and the budget's throttle rung.
  const std::string power_limit_mode = config.GetString("energy.power_limit");
  std::unique_ptr<energy::PowerLimitControl> power_control;
  std::string why_no_power_control = "energy.power_limit=off and no budget";
  if (power_limit_mode != "off" || budget.enabled()) {
    energy::PowerLimitOptions limit_options;
    limit_options.nvml.library_path = config.GetString("energy.nvml_library");
    limit_options.dry_run = power_limit_mode != "auto";
    power_control = energy::NvmlPowerLimitControl::TryCreate(limit_options, &why_no_power_control);
  }
  PowerLimitProfiler power_limits(
      std::move(power_control), power_limit_mode, config.GetFloat("energy.power_limit_eta"),
      static_cast<int>(config.GetInt("energy.power_limit_iterations")), why_no_power_control);
  if (options.verbose && writer) {
    for (const auto& line : power_limits.log()) fmt::print(stderr, "greenrl: {}\n", line);
  }
  // Energy of the GPU domains (or of everything when no GPU is metered): what a power limit moves.
  auto limit_energy_j = [&](const energy::Measurement& m) {
    double gpu = 0.0;
    bool any_gpu = false;
    for (const auto& [domain, e] : m.energy_j) {
      if (domain.rfind("gpu:", 0) == 0) gpu += e, any_gpu = true;
    }
    return any_gpu ? gpu : m.total_energy_j();
  };
  // The first rung needs a reduced-precision update this device runs natively.
  std::string why_no_reduced_precision;
  if (!algorithm->CanReducePrecision(&why_no_reduced_precision)) {
    budget.ReportUnsupported(energy::BudgetAction::kReducePrecision, why_no_reduced_precision);
  }
  env->Reset();

  // --- resume (checkpointing.h), data-parallel: the newest checkpoint every rank loads.
  if (options.resume && world_size > 1) {
    // Data-parallel: the ranks agree on the newest global step whose checkpoint every rank has
    // and loads (a rank killed mid-run may lack the newest one), each loading its own file.
    int64_t below = std::numeric_limits<int64_t>::max();
    for (;;) {
      int64_t candidate = -1;
      for (auto it = resume_from.rbegin(); it != resume_from.rend(); ++it) {
        if (it->first < below) {
          candidate = it->first;
          break;
        }
      }
      std::vector<double> table(static_cast<size_t>(world_size), 0.0);
      table[static_cast<size_t>(rank)] = static_cast<double>(candidate);  // exact below 2^53
      group->AllReduceSum(table.data(), world_size, "resume checkpoint steps");
      const int64_t agreed = static_cast<int64_t>(*std::min_element(table.begin(), table.end()));
      if (agreed < 0) {
        const int64_t q = std::min_element(table.begin(), table.end()) - table.begin();
        throw ConfigError("--resume", run_dir,
                          fmt::format("a resume checkpoint of the same step for every rank; rank "
                                      "{} has none{} in {}",
                                      q,
                                      below == std::numeric_limits<int64_t>::max()
                                          ? std::string()
                                          : fmt::format(" below step {}", below),
                                      CheckpointDir(run_dir, static_cast<int>(q))));
      }
      double loaded = 0.0;
      for (const auto& [step, path] : resume_from) {
        if (step != agreed) continue;
        // Every rank reads the same config.yaml: all refuse alike.
        if (const auto peek = PeekTrainerState(path)) RefuseChangedFixedKeys(config, *peek, path);
        try {
          resumed = LoadResumeCheckpoint(algorithm.get(), path);
          resumed_path = path;
          loaded = 1.0;
        } catch (const ConfigError& e) {
          if (options.verbose) fmt::print(stderr, "greenrl: skipping {}: {}\n", path, e.what());
        }
      }
      group->AllReduceSum(&loaded, 1, "resume checkpoint loaded");
      if (loaded == static_cast<double>(world_size)) break;
      resumed_path.clear();
      below = agreed;
    }
  }
  if (world_size > 1) require_steps_left(resumed, resumed_path);  // the ranks' agreed one
  if (!resumed_path.empty()) {
    std::vector<std::string> names;
    for (const energy::DomainInfo& d : monitor.domains()) names.push_back(d.domain);
    require_resumed_domains(names);
  }
  if (options.resume && world_size > 1) {
    // What the stopped segment spent after the checkpoint (energy.json's figures of this rank).
    CarryOverStoppedSegment(run_dir, &resumed);
    // The budget's resume checks on the job's energy at the checkpoint (each rank's domains
    // weighted as in job_total_so_far: a counter shared by ranks on one machine once), the same
    // figure on every rank, so that every rank refuses alike.
    if (budget_options.budget_wh > 0.0) {
      const size_t num_domains = monitor.domains().size();
      std::vector<double> sums(num_domains, 0.0);
      for (size_t k = 0; k < num_domains; ++k) {
        const auto it = resumed.energy.energy_j.find(monitor.domains()[k].domain);
        if (it != resumed.energy.energy_j.end()) {
          sums[k] = job_weights[static_cast<size_t>(rank)][k] * it->second;
        }
      }
      group->AllReduceSum(sums.data(), static_cast<int64_t>(num_domains), "job energy at resume");
      double job_j = 0.0;
      for (double e : sums) job_j += e;
      RefuseResumeBudget(budget_options, resumed, job_j);
    }
  }
  // The power sampler (power.csv) starts once a data-parallel resume has passed its checks, so a
  // refused one leaves power.csv as it was (a single process is checked before all this).
  sampler.Start();
  // Restores the env (exact state, or the reset policy: fresh episodes from the reset above,
  // with the saved normaliser statistics).
  auto restore_env = [&](const TrainerState& st) {
    if (!st.env_state.empty()) {
      size_t offset = 0;
      try {
        env->LoadState(st.env_state, &offset);
      } catch (const std::invalid_argument& e) {
        throw ConfigError("checkpoint", resumed_path,
                          std::string("an env state for this config (") + e.what() + ")");
      }
      if (offset != st.env_state.size()) {  // e.g. a VecNormalize's statistics left unread
        throw ConfigError("checkpoint", resumed_path,
                          fmt::format("an env state for this config ({} of its {} bytes were "
                                      "left unread: the checkpoint's envs were wrapped otherwise)",
                                      st.env_state.size() - offset, st.env_state.size()));
      }
    } else {
      env->Reset();
      if (normalizer != nullptr && !st.normalizer.empty()) normalizer->SetState(st.normalizer);
      if (options.verbose && writer) {
        fmt::print(stderr,
                   "greenrl: {}'s env state is not saved (MuJoCo, or an env class that is not "
                   "saved byte for byte): the envs start fresh "
                   "episodes, so this run is no longer identical to an uninterrupted one\n",
                   env_id);
      }
    }
    // Data-parallel: checkpoints are taken after the merge, so the restored statistics are the
    // ones all ranks share.
    if (normalizer != nullptr) normalizer_base = normalizer->GetState();
  };
  // evaluations.npz (SB3's EvalCallback log): every periodic evaluation's episodes, rewritten
  // atomically after each; a resumed run keeps the ones up to its checkpoint.
  const std::string evaluations_path = run_dir + "/evaluations.npz";
  report::EvaluationsLog evaluations;
  if (!resumed_path.empty()) {
    restore_env(resumed);
    // metrics.csv without the rows past the checkpoint (the iterations repeated now), appended.
    // TensorBoard rows go to a new event file beside the earlier ones (TensorBoard reads every
    // file in the folder), opened by a restart event that makes TensorBoard drop the earlier
    // files' rows past the checkpoint, as metrics.csv drops them.
    std::vector<std::string> dropped;  // damaged rows of the logs, said below
    if (writer) {
      metrics_csv = std::make_unique<report::MetricsCsv>(
          run_dir + "/metrics.csv",
          TruncateMetricsCsv(run_dir + "/metrics.csv", resumed.steps, &dropped));
      tfevents.emplace(run_dir);
      tfevents->WriteRestart(resumed.steps + 1);
    }
    monitor_csv = report::MonitorCsv::Resume(monitor_path, env_id, MonitorRowsOf(resumed),
                                             UnixNowS(), &dropped);
    if (options.verbose) {
      for (const std::string& note : dropped) fmt::print(stderr, "greenrl: {}\n", note);
    }
    if (writer) {
      evaluations =
          ResumeEvaluationsLog(evaluations_path, resumed.steps, eval_episodes, options.verbose);
    }
    if (options.verbose) {
      fmt::print(stderr, "greenrl: resuming {} from {} (step {})\n", run_dir, resumed_path,
                 resumed.steps);
    }
    // A resume without the replay buffer refills it before its updates go on (DQN, SAC): said,
    // and when that takes the rest of the run, that it makes no gradient step.
    const int64_t wait = algorithm->updates_wait_until();
    if (options.verbose && writer && wait > 0 && wait > config.GetInt("learning_starts")) {
      fmt::print(stderr,
                 "greenrl: the replay buffer refills (a checkpoint without it: "
                 "checkpoint_replay_buffer false): updates wait for learning_starts {} "
                 "transitions, until step {}{}\n",
                 config.GetInt("learning_starts"), wait,
                 wait >= last_step ? fmt::format(", which is not below {}: this run acts with its "
                                                 "policy and makes no gradient step",
                                                 last_step_text)
                                   : std::string());
    }
    // The resolved config of this segment (--set overrides such as a larger n_timesteps
    // included), so a later plain --resume continues with it; written only once the checkpoint
    // has loaded, so a refused resume leaves the file as it was.
    if (writer) WriteFileAtomic(run_dir + "/config.yaml", config_file_text());
  }
  // --- end resume

  std::deque<double> recent_returns;  // the last 100 finished training episodes (the job's)
  std::deque<double> recent_lengths;  // their lengths, steps
  // The energy budget's estimate of the final evaluation (eval.final_episodes episodes), J: the
  // energy per evaluation env step of this process's evaluations so far (the eval window over
  // the env steps they stepped: every env until the longest episode ended), else, before any,
  // of its rollouts (an evaluation steps its envs as a rollout does), times final_episodes x the
  // TimeLimit, the most steps an evaluation episode can take: a bound, so later and longer
  // episodes than the early evaluations' do not outrun it. "So far" takes in the earlier
  // segments of a resumed run (their windows and step counts, carried in the checkpoint), so a
  // resume's first iteration, slower while caches and allocations warm up, does not set the
  // estimate alone (a SAC run resumed with 2.7x the budget it had used stopped after one step:
  // 23.5 J per step estimated from its first, against 1.08 J before). A checkpoint written
  // before the step counts were saved leaves this segment's own figures.
  const bool carry_window_steps = resumed.rollout_env_steps >= 0 && resumed.eval_env_steps >= 0;
  int64_t local_rollout_steps = carry_window_steps ? resumed.rollout_env_steps : 0;
  int64_t eval_env_steps = carry_window_steps ? resumed.eval_env_steps : 0;
  auto carried_window_j = [&](const std::string& key) {
    const auto it = resumed.windows.find(key);
    return carry_window_steps && it != resumed.windows.end() ? it->second.sum.total_energy_j()
                                                             : 0.0;
  };
  const double carried_rollout_j = carried_window_j("rollout");
  const double carried_eval_j = carried_window_j("eval");
  auto final_eval_reserve_j = [&]() -> double {
    double j_per_step = 0.0;
    if (eval_env_steps > 0) {
      j_per_step = (carried_eval_j + monitor.TotalsFor("eval").sum.total_energy_j()) /
                   static_cast<double>(eval_env_steps);
    } else if (local_rollout_steps > 0) {
      j_per_step = (carried_rollout_j + monitor.TotalsFor("rollout").sum.total_energy_j()) /
                   static_cast<double>(local_rollout_steps);
    }
    return j_per_step * final_episodes * static_cast<double>(env->spec().max_episode_steps);
  };
  std::vector<algo::EpisodeRecord> episodes;
  int64_t steps = 0;
  int64_t iteration = 0;
  int64_t next_eval = eval_freq > 0 ? eval_freq : -1;
  // The progress line's first figures come a quarter second into the segment, not after its
  // first iteration: steps/s and W over the first milliseconds said 2210 steps/s and 103.9 W for
  // SAC Pendulum's (95 steps/s and 8 W over the run; configs/sac/pendulum.yaml with
  // n_timesteps=3000, the 2-core AMD EPYC VM, 2026-12-07 16:36 UTC).
  double last_progress_s = resumed.elapsed_s;
  bool progress_estimated = false;  // some of the total is the estimator's (a counter's is not)
  for (const energy::DomainInfo& d : monitor.domains()) {
    progress_estimated =
        progress_estimated || (d.additive && d.provenance == energy::Provenance::kEstimated);
  }
  bool skip_non_critical = false;
  bool stopped_by_budget = false;
  report::EarlyStopReport early_stop;  // eval.reward_threshold's stop, when it ends the run
  algo::Metrics row;
  // --- resume, signals and guard state (checkpointing.h, signals.h)
  int64_t next_checkpoint = ckpt.freq > 0 ? ckpt.freq : -1;
  int64_t episodes_total = 0;
  // log_interval (SB3's): a row at every log_interval-th iteration (PPO), or at the iteration
  // in which the count of finished episodes (all ranks) reaches a multiple of log_interval
  // (DQN, SAC); deferred to the next 10th iteration under the budget's skip rung. The row's
  // charts/episodic_* are the means of the episodes since the last row.
  const int64_t log_interval = config.GetInt("log_interval");
  const bool log_by_episodes = algo_id != "ppo";
  LogRowState log_rows;  // carried in resume checkpoints
  auto mark_row_written = [&] {
    log_rows = {log_rows.global_episodes, iteration, log_rows.global_episodes, 0.0, 0.0, 0.0};
  };
  bool interrupted = false;
  int stop_signal = 0;
  std::string last_checkpoint;
  int64_t skips_seen = algorithm->nonfinite_skips();
  int nonfinite_streak = 0;
  int guard_restores = 0;
  // eval.save_best: the evaluation whose policy checkpoints/best.pt holds, as best.pt itself
  // records (SaveBestCheckpoint). A resumed run takes them from best.pt, not from its
  // checkpoint: a run that crashed after a better evaluation than its last checkpoint knew left
  // that policy in best.pt, and the figures must describe the file. A numerical-guard restore
  // keeps them too.
  int64_t best_eval_step = -1;
  double best_eval_mean = NAN;
  if (writer && !resumed_path.empty()) {
    try {
      if (const std::optional<BestEval> best = ReadBestCheckpoint(run_dir)) {
        best_eval_step = best->global_step;
        best_eval_mean = best->mean_reward;
      }
    } catch (const ConfigError& e) {  // a damaged best.pt: the next evaluation replaces it
      if (options.verbose) {
        fmt::print(stderr,
                   "greenrl: no best evaluation known: {}; the next evaluation writes a "
                   "new best.pt\n",
                   e.what());
      }
    }
  }
  auto apply_position = [&](const TrainerState& st) {
    steps = st.steps;
    iteration = st.iteration;
    // The schedules follow this segment's eval.freq and checkpoint_freq, which a --resume may
    // change: the first multiple above the step. With unchanged keys that is what the
    // checkpoint holds (st.next_eval, st.next_checkpoint: both only ever move to the next
    // multiple past the step).
    next_eval = eval_freq > 0 ? (st.steps / eval_freq + 1) * eval_freq : -1;
    next_checkpoint = ckpt.freq > 0 ? (st.steps / ckpt.freq + 1) * ckpt.freq : -1;
    episodes_total = st.episodes;
    log_rows = st.log_rows;
    recent_returns.assign(st.recent_returns.begin(), st.recent_returns.end());
    recent_lengths.assign(st.recent_lengths.begin(), st.recent_lengths.end());
  };
  if (!resumed_path.empty()) {
    apply_position(resumed);
    last_checkpoint = resumed_path;
    skips_seen = algorithm->nonfinite_skips();
  }
  // carbon.intensity_csv: the energy is priced as the run goes, each iteration's at its own time
  // (the earlier segments' as their checkpoint carries it; a checkpoint without those sums, or
  // one of a run without a series, gets its energy priced in this segment's first iteration).
  std::optional<energy::SeriesCarbon> series_carbon;
  double series_priced_to_unix_s = start_unix_s;
  if (intensity_series) {
    series_carbon.emplace(*intensity_series, carbon_options.pue,
                          resumed.carbon_series.value_or(energy::SeriesCarbonState{}));
  }
  // Prices the energy since the last call (`total`: the run's, or the job's with several ranks).
  auto price_energy = [&](const energy::Measurement& total) {
    if (!series_carbon) return;
    const double now = UnixNowS();
    const double new_j = total.total_energy_j() - series_carbon->state().energy_j;
    series_carbon->Add(
        {series_priced_to_unix_s, std::max(now, series_priced_to_unix_s), std::max(0.0, new_j)});
    series_priced_to_unix_s = std::max(now, series_priced_to_unix_s);
  };
  // The carbon of `total`, priced by price_energy with a series, else by the fixed intensity;
  // with a series, carbon.region names the country (emissions.csv) when set.
  auto carbon_of = [&](const energy::Measurement& total) {
    if (!series_carbon) return energy::ComputeCarbon(total.total_energy_j(), carbon_options);
    energy::CarbonResult c = series_carbon->Result();
    if (const energy::RegionIntensity* row = energy::FindRegion(carbon_options.region)) {
      c.region = row->code;
    }
    return c;
  };
  // Totals of this process plus the earlier segments'.
  auto total_so_far = [&]() {
    energy::Measurement m = monitor.Total();
    m.duration_s += resumed.energy.duration_s;
    for (const auto& [domain, e] : resumed.energy.energy_j) m.energy_j[domain] += e;
    return m;
  };
  // Data-parallel: the job's energy so far, the same figure on every rank (job_energy.h: each
  // rank's domains weighted so a counter shared by ranks on one machine counts once), and rank
  // 0's run time (earlier segments' included) in *rank0_s, so that every rank's budget controller
  // sees the same inputs and takes the same decisions. One collective; every rank calls it once per
  // iteration.
  auto job_total_so_far = [&](double* rank0_s) {
    energy::Measurement m = total_so_far();
    const size_t num_domains = monitor.domains().size();
    std::vector<double> sums(num_domains + 1, 0.0);
    for (size_t k = 0; k < num_domains; ++k) {
      sums[k] = job_weights[static_cast<size_t>(rank)][k] * m.energy_j[monitor.domains()[k].domain];
    }
    sums[num_domains] = rank == 0 ? clock.NowS() - t0 + resumed.elapsed_s : 0.0;
    group->AllReduceSum(sums.data(), static_cast<int64_t>(sums.size()), "job energy");
    for (size_t k = 0; k < num_domains; ++k) m.energy_j[monitor.domains()[k].domain] = sums[k];
    *rank0_s = sums[num_domains];
    return m;
  };
  auto windows_so_far = [&]() {
    auto windows = monitor.AllWindowTotals();
    for (const auto& [key, w] : resumed.windows) {
      auto& t = windows[key];
      t.count += w.count;
      t.short_count += w.short_count;
      t.sum.duration_s += w.sum.duration_s;
      for (const auto& [domain, e] : w.sum.energy_j) t.sum.energy_j[domain] += e;
    }
    return windows;
  };
  // Each resume checkpoint is measured in its own window ("checkpoint"; its state is taken before
  // the window opens, so a resumed run's totals stop where the saved figures do). The budget's
  // estimate of the next periodic one is the larger of the last one's energy (a replay buffer's
  // grows) and the mean of all so far, earlier segments' included (steadier on a counter that
  // changes every 100 ms); 0 before the first. It changes only when a checkpoint window closes, so
  // it is kept, not recomputed at every iteration's budget decision.
  double last_checkpoint_j = 0.0;
  double checkpoint_estimate_j = 0.0;
  bool budget_checkpoint_decided = false;  // the budget's first checkpoint (below) is decided
  // The additive domains' sum of `energy_j` (J per domain) as this rank's share of the job's (a
  // meter the ranks share counted once), J.
  auto job_share_j = [&](const std::map<std::string, double>& energy_j) {
    double j = 0.0;
    for (size_t k = 0; k < monitor.domains().size(); ++k) {
      const energy::DomainInfo& d = monitor.domains()[k];
      const auto e = energy_j.find(d.domain);
      if (d.additive && e != energy_j.end()) {
        j += job_weights[static_cast<size_t>(rank)][k] * e->second;
      }
    }
    return j;
  };
  auto update_checkpoint_estimate = [&]() {
    const auto windows = windows_so_far();
    const auto it = windows.find("checkpoint");
    const double mean_j =
        it != windows.end() && it->second.count > 0
            ? job_share_j(it->second.sum.energy_j) / static_cast<double>(it->second.count)
            : 0.0;
    checkpoint_estimate_j = std::max(last_checkpoint_j, mean_j);
  };
  update_checkpoint_estimate();  // a resumed run's earlier checkpoints
  auto write_checkpoint = [&]() {
    monitor.BeginWindow("checkpoint");
    TrainerState st;
    st.steps = steps;
    st.iteration = iteration;
    st.next_eval = next_eval;
    st.next_checkpoint = next_checkpoint;
    st.episodes = episodes_total;
    if (monitor_csv) st.monitor_rows = monitor_csv->rows();
    st.log_rows = log_rows;
    st.recent_returns.assign(recent_returns.begin(), recent_returns.end());
    st.recent_lengths.assign(recent_lengths.begin(), recent_lengths.end());
    st.elapsed_s = clock.NowS() - t0 + resumed.elapsed_s;
    st.cpu_s = ProcessCpuSeconds() - cpu0 + resumed.cpu_s;
    st.energy = total_so_far();
    st.windows = windows_so_far();
    // Unknown (-1) again after a checkpoint without them: the windows saved count every segment,
    // these steps only this one's.
    st.rollout_env_steps = carry_window_steps ? local_rollout_steps : -1;
    st.eval_env_steps = carry_window_steps ? eval_env_steps : -1;
    if (!env->SaveState(&st.env_state)) st.env_state.clear();
    st.env_non_finite_resets = resumed.env_non_finite_resets + env->non_finite_resets();
    st.env_non_finite_outputs = resumed.env_non_finite_outputs + env->non_finite_outputs();
    st.fixed_keys = ResumeFixedKeyValues(config);
    if (normalizer != nullptr) st.normalizer = normalizer->GetState();
    st.world_size = world_size;
    st.rank = rank;
    if (group != nullptr) {  // all segments' all-reduce figures
      st.allreduce_calls = resumed.allreduce_calls + group->stats().allreduce_calls;
      st.allreduce_bytes = resumed.allreduce_bytes + group->stats().allreduce_bytes;
      st.allreduce_s = resumed.allreduce_s + group->stats().allreduce_s;
    }
    if (budget.enabled() || !budget.events().empty()) st.budget = budget.Snapshot();
    if (series_carbon) {
      // A single process prices its energy up to the checkpoint's reading, so a resumed run
      // starts where this one stopped; ranks of a data-parallel run keep the sums of their last
      // iteration (the job's energy needs a collective; the energy since then, a few joules at
      // most, goes to the resumed run's first iteration).
      if (world_size == 1) price_energy(st.energy);
      st.carbon_series = series_carbon->state();
    }
    // Data-parallel: every rank saves its own state (envs, generators, replay buffer, energy),
    // rank r > 0 under checkpoints/rank<r>/ (checkpointing.h).
    const std::string path = CheckpointPath(run_dir, steps, rank);
    SaveResumeCheckpoint(*algorithm, path, ckpt.replay_buffer, st);
    PruneCheckpoints(run_dir, ckpt.keep, rank);
    last_checkpoint = path;
    last_checkpoint_j = job_share_j(monitor.EndWindow("checkpoint").energy_j);
    update_checkpoint_estimate();
  };
  // A resumed run's budget goes on from the checkpoint: its step, the job's energy and the run
  // time so far are the first iteration's origin, the earlier decisions stay in energy.json,
  // and under the same budget the ladder's rungs are applied again (BudgetController::Resume).
  auto apply_budget_action = [&](energy::BudgetAction action, double env_threads_fraction) {
    if (action == energy::BudgetAction::kReducePrecision) algorithm->ReducePrecision();
    if (action == energy::BudgetAction::kSkipNonCritical) skip_non_critical = true;
    if (action == energy::BudgetAction::kThrottle) {
      power_limits.Throttle();
      env->SetActiveThreads(  // max(1, round(n x fraction)), as BudgetOptions says
          std::max(1, static_cast<int>(std::lround(env->num_threads() * env_threads_fraction))));
    }
  };
  if (!resumed_path.empty() && (budget.enabled() || resumed.budget)) {
    double origin_s = clock.NowS() - t0 + resumed.elapsed_s;
    double origin_j = 0.0;  // a disabled controller only carries the earlier events
    if (budget.enabled()) {
      origin_j = (world_size > 1 ? job_total_so_far(&origin_s) : total_so_far()).total_energy_j();
    }
    for (energy::BudgetAction action : budget.Resume(
             resumed.budget.value_or(energy::BudgetSnapshot{}), steps, origin_j, origin_s)) {
      apply_budget_action(action, budget_options.throttle_env_threads_fraction);
    }
  }
  // DQN's and SAC's steps before learning_starts take no gradient step and cost a fraction of
  // later ones: the budget's forecast measures its rate after them.
  budget.SetSteadyFrom(algorithm->updates_wait_until());
  // --- end resume, signals and guard state

  // energy/power_w is the energy over the span the meters measured it in (the monitor's, from
  // before the run directory is written, earlier segments' included), not over the row's time_s
  // from the loop's start: the setup's energy over the first iteration's time read as a power no
  // CPU draws (55 W on 2 cores for DQN's quick first rows).
  auto energy_columns = [&](const energy::Measurement& total, algo::Metrics* r) {
    r->emplace_back("energy/total_wh", total.total_energy_j() / kJoulesPerWh);
    for (const auto& [domain, e] : total.energy_j) {
      r->emplace_back("energy/" + domain + "_wh", e / kJoulesPerWh);
    }
    r->emplace_back("energy/power_w",
                    total.duration_s > 0 ? total.total_energy_j() / total.duration_s : NAN);
    r->emplace_back("carbon/g_co2e", carbon_of(total).kg_co2e * 1000.0);
  };

  // An env that returned a NaN or infinite observation or reward (a custom env's bug; the losses
  // then go non-finite): said once per rank (each counts its own envs' rows), naming the env, as
  // Gymnasium's passive env checker warns; counted over the run (the segments before a resume
  // too). Checked after each rollout, before the update reads it.
  const auto non_finite_outputs_so_far = [&] {
    return resumed.env_non_finite_outputs + env->non_finite_outputs();
  };
  bool non_finite_outputs_said = false;
  auto say_non_finite_outputs = [&]() {
    if (non_finite_outputs_said || !options.verbose) return;
    const int64_t n = non_finite_outputs_so_far();
    if (n == 0) return;
    non_finite_outputs_said = true;
    say(fmt::format(
        "greenrl: warning: {}{} returned a NaN or infinite observation or reward ({} env resets "
        "and steps so far, by step {}): the losses go non-finite from such data; check the env's "
        "Reset and Step",
        env_id, world_size > 1 ? fmt::format(" (rank {}'s envs)", rank) : "", n, steps));
  };
  // The same for the evaluation envs, whose returns are then NaN: said once.
  bool eval_non_finite_said = false;
  EvalResult final_eval;
  // A failure inside the loop (an exception from a custom env's Step or Reset, the numerical
  // guard's stop, a full disk): a single process writes energy.json and emissions.csv with what
  // the run spent up to it (eval_note "failed at step S: ..."; `greenrl report` says "failed",
  // not "killed"), then rethrows. No checkpoint is written then (the failure may leave the envs
  // or the rollout half-stepped); --resume continues from the last periodic one, and the energy
  // spent since counts (CarryOverStoppedSegment). Data-parallel ranks rethrow at once: their
  // peers may be gone, and the job's figures need every rank.
  std::exception_ptr failure;
  std::string failure_what;
  try {
    while (steps < total_steps) {
      ++iteration;
      episodes.clear();
      power_limits.BeforeIteration();
      const bool profiling_limits = power_limits.profiling();
      const double iteration_start_s = clock.NowS();
      energy::Measurement iteration_start;
      if (profiling_limits) iteration_start = monitor.Total();
      monitor.BeginWindow("rollout");
      int64_t rollout_steps = algorithm->CollectRollout(*env, &episodes);
      monitor.EndWindow("rollout");
      local_rollout_steps += rollout_steps;
      if (world_size > 1) {
        // Steps of all ranks; normaliser statistics merged before the update reads the rollout.
        double global_steps = static_cast<double>(rollout_steps);
        group->AllReduceSum(&global_steps, 1, "rollout steps");
        rollout_steps = static_cast<int64_t>(global_steps);
        if (normalizer != nullptr) MergeNormalizers(*group, normalizer, &normalizer_base);
      }
      steps += rollout_steps;
      say_non_finite_outputs();

      if (options.before_update) options.before_update(iteration, *algorithm);
      // An update window only where Update takes gradient steps: DQN's and SAC's calls before
      // learning_starts take none, and counted as windows they made energy.json's update count
      // one per env step.
      const bool updates_now = steps > algorithm->updates_wait_until();
      if (updates_now) monitor.BeginWindow("update");
      algo::Metrics update_metrics = algorithm->Update(algo::ProgressRemaining(steps, total_steps));
      if (updates_now) monitor.EndWindow("update");
      // --- numerical guard (checkpointing.h, guard.*): updates that skipped a non-finite step.
      nonfinite_streak = algorithm->nonfinite_skips() > skips_seen ? nonfinite_streak + 1 : 0;
      skips_seen = algorithm->nonfinite_skips();
      if (nonfinite_streak >= ckpt.guard_max_consecutive) {
        // An env that returned non-finite data is the likely cause, whatever the guard does.
        const int64_t env_non_finite = non_finite_outputs_so_far();
        const std::string why = fmt::format(
            "non-finite loss or gradient in {} updates in a row (global_step {}){}",
            nonfinite_streak, steps,
            env_non_finite == 0
                ? ""
                : fmt::format(", after {} returned a NaN or infinite observation or reward in {} "
                              "env resets and steps (check its Reset and Step)",
                              env_id, env_non_finite));
        if (ckpt.guard_on_repeat == "stop" || last_checkpoint.empty() || guard_restores >= 4) {
          throw std::runtime_error(
              why + "; stopping (guard.on_repeat=" + ckpt.guard_on_repeat +
              (last_checkpoint.empty() ? ", no checkpoint to restore yet"
               : guard_restores >= 4   ? ", 4 restores already"
                                       : "") +
              "). The last good checkpoint: " +
              (last_checkpoint.empty() ? std::string("none") : last_checkpoint));
        }
        // The factor before the restore, halved: the checkpoint's own may be an earlier one's (a
        // second restore from the same checkpoint would otherwise halve its factor again, to the
        // same rate, and replay the steps that failed).
        const double lr_scale = algorithm->learning_rate_scale();
        const TrainerState st = LoadResumeCheckpoint(algorithm.get(), last_checkpoint);
        restore_env(st);
        apply_position(st);
        if (budget.enabled()) {  // the steps after the checkpoint are done again
          double now_s = clock.NowS() - t0 + resumed.elapsed_s;
          const energy::Measurement at = world_size > 1 ? job_total_so_far(&now_s) : total_so_far();
          budget.Rewind(st.steps, at.total_energy_j(), now_s);
        }
        std::vector<std::string> dropped;  // damaged rows of the logs, said below
        if (writer) {  // rows past the checkpoint are repeated now: cut them, reopen
          metrics_csv.reset();
          metrics_csv = std::make_unique<report::MetricsCsv>(
              run_dir + "/metrics.csv", TruncateMetricsCsv(run_dir + "/metrics.csv", st.steps,
                                                           options.verbose ? &dropped : nullptr));
          if (tfevents) tfevents->WriteRestart(st.steps + 1);  // TensorBoard drops them too
          const size_t rows = evaluations.timesteps.size();
          evaluations.KeepUpTo(st.steps);
          if (evaluations.timesteps.size() != rows) {
            report::WriteEvaluationsNpz(evaluations_path, evaluations);
          }
        }
        monitor_csv.reset();  // its episodes past the checkpoint are repeated now too
        monitor_csv =
            report::MonitorCsv::Resume(monitor_path, env_id, MonitorRowsOf(st), start_unix_s,
                                       options.verbose ? &dropped : nullptr);
        for (const std::string& note : dropped) fmt::print(stderr, "greenrl: {}\n", note);
        algorithm->SetLearningRateScale(0.5 * lr_scale);
        ++guard_restores;
        nonfinite_streak = 0;
        skips_seen = algorithm->nonfinite_skips();
        if (options.verbose) {
          fmt::print(stderr, "greenrl: {}; restored {} (step {}) and halved the learning rate\n",
                     why, last_checkpoint, st.steps);
        }
        continue;
      }
      // --- end numerical guard
      // Data-parallel: episode statistics over every rank's finished episodes, losses averaged.
      double dist_ep_return = 0, dist_ep_length = 0, dist_ep_count = 0;
      std::vector<algo::EpisodeRecord> job_episodes;  // the last 100 of every rank's, in job order
      int dist_stop_signal = 0;  // the stop signal any rank received, agreed by all ranks
      if (world_size > 1) {
        const size_t signal_slots = 3 + update_metrics.size();  // one per rank, after the metrics
        // Then one block of finished episodes per rank (episode_window.h).
        const size_t episode_slots = signal_slots + static_cast<size_t>(world_size);
        std::vector<double> sums(
            episode_slots + static_cast<size_t>(world_size) * kEpisodeBlockSize, 0.0);
        sums[signal_slots + static_cast<size_t>(rank)] =
            options.handle_signals ? StopSignalReceived() : 0;
        PackEpisodeBlock(episodes,
                         &sums[episode_slots + static_cast<size_t>(rank) * kEpisodeBlockSize]);
        for (const auto& e : episodes) {
          sums[0] += e.episode_return;
          sums[1] += static_cast<double>(e.episode_length);
        }
        sums[2] = static_cast<double>(episodes.size());
        for (size_t k = 0; k < update_metrics.size(); ++k) sums[3 + k] = update_metrics[k].second;
        group->AllReduceSum(sums.data(), static_cast<int64_t>(sums.size()), "metrics");
        dist_ep_return = sums[0], dist_ep_length = sums[1], dist_ep_count = sums[2];
        job_episodes = UnpackEpisodesInJobOrder(&sums[episode_slots], world_size);
        for (size_t k = 0; k < update_metrics.size(); ++k) {
          update_metrics[k].second = sums[3 + k] / world_size;
        }
        // A signal reaches the ranks at different moments (or only one of them): all ranks stop
        // at the end of the same iteration, with this rank's signal or else the lowest rank's.
        dist_stop_signal = static_cast<int>(sums[signal_slots + static_cast<size_t>(rank)]);
        for (int q = 0; q < world_size && dist_stop_signal == 0; ++q) {
          dist_stop_signal = static_cast<int>(sums[signal_slots + static_cast<size_t>(q)]);
        }
      }
      if (profiling_limits) {
        power_limits.AfterIteration(
            limit_energy_j(monitor.Total()) - limit_energy_j(iteration_start),
            clock.NowS() - iteration_start_s);
      }

      bool last = steps >= total_steps;
      double eval_mean = NAN, eval_std = NAN, eval_length = NAN;
      const bool periodic_eval_due = next_eval > 0 && steps >= next_eval;
      // Under the budget's skip rung periodic evaluations stop, unless eval.reward_threshold
      // reads them: a run that may stop when solved keeps checking.
      const bool evaluate_now =
          last || (periodic_eval_due && (!skip_non_critical || reward_threshold.has_value()));
      auto evaluate = [&](int n) {
        monitor.BeginWindow("eval");
        const auto norm = snapshot();
        const EvalResult eval = EvaluatePolicy(*algorithm, env_id, n, seed,
                                               /*deterministic=*/true, norm ? &*norm : nullptr);
        monitor.EndWindow("eval");
        if (eval.non_finite_outputs > 0 && !eval_non_finite_said && options.verbose) {
          eval_non_finite_said = true;
          say(fmt::format(
              "greenrl: warning: {}'s evaluation envs returned a NaN or infinite observation or "
              "reward ({} env resets and steps in the evaluation at step {}): its returns are "
              "not numbers; check the env's Reset and Step",
              env_id, eval.non_finite_outputs, steps));
        }
        eval_env_steps +=
            static_cast<int64_t>(n) * *std::max_element(eval.lengths.begin(), eval.lengths.end());
        eval_mean = eval.mean_return;
        eval_std = eval.std_return;
        eval_length = std::accumulate(eval.lengths.begin(), eval.lengths.end(), 0.0) /
                      static_cast<double>(eval.lengths.size());
        if (last) final_eval = eval;
        // A periodic evaluation's row; the final evaluation gives the row of a periodic one due at
        // the same step from its first eval.episodes episodes, those a periodic evaluation would
        // run (episode i's env starts from seed stream i whatever the count), unless that step
        // already has its row (eval.reward_threshold's stop evaluates twice there). A final
        // evaluation with fewer episodes than eval.episodes gives none.
        if (periodic_eval_due && n >= eval_episodes) {
          if (evaluations.timesteps.empty() || evaluations.timesteps.back() != steps) {
            evaluations.Append(steps, {eval.returns.begin(), eval.returns.begin() + eval_episodes},
                               {eval.lengths.begin(), eval.lengths.begin() + eval_episodes});
            report::WriteEvaluationsNpz(evaluations_path, evaluations);
          }
        }
        // eval.save_best (SB3's EvalCallback with best_model_save_path): a higher mean reward than
        // every earlier evaluation's keeps this policy, with its normaliser statistics.
        const bool new_best = save_best && std::isfinite(eval.mean_return) &&
                              (best_eval_step < 0 || eval.mean_return > best_eval_mean);
        if (new_best) {
          SaveBestCheckpoint(*algorithm, run_dir, {steps, eval.mean_return, norm});
          best_eval_step = steps;
          best_eval_mean = eval.mean_return;
        }
        // A periodic evaluation's result on stderr, as SB3's EvalCallback (verbose=1) prints
        // it; the final one is the summary's.
        if (!last && options.verbose) {
          say(
              fmt::format("greenrl: eval at step {}: mean reward {:.2f} ± {:.2f} over {} "
                          "episodes, length {:.1f}{}",
                          steps, eval.mean_return, eval.std_return, n, eval_length,
                          new_best ? " (new best: checkpoints/best.pt)" : ""));
        }
      };
      if (writer && evaluate_now) evaluate(last ? final_episodes : eval_episodes);
      // eval.reward_threshold (SB3's StopTrainingOnRewardThreshold): a periodic evaluation that
      // reaches it makes this iteration the last, with the final evaluation and final.pt of a
      // finished run. Rank 0 evaluates; with several ranks its verdict reaches all of them here,
      // so every rank stops after this iteration.
      if (reward_threshold && evaluate_now && !last) {
        double reached = writer && eval_mean >= *reward_threshold ? 1.0 : 0.0;
        if (world_size > 1) group->AllReduceSum(&reached, 1, "reward threshold");
        if (reached > 0.0) {
          early_stop.stopped = true;
          early_stop.reward_threshold = *reward_threshold;
          early_stop.eval_mean_reward = eval_mean;  // rank 0's; NaN elsewhere
          early_stop.global_step = steps;
          early_stop.n_timesteps = total_steps;
          last = true;
          if (writer) evaluate(final_episodes);
        }
      }
      while (next_eval > 0 && steps >= next_eval) next_eval += eval_freq;

      double ep_return = 0, ep_length = 0;
      for (const auto& e : episodes) {
        ep_return += e.episode_return;
        ep_length += static_cast<double>(e.episode_length);
      }
      // SB3's window of the last 100 episodes: the job's with several ranks (the same on each).
      for (const auto& e : world_size > 1 ? job_episodes : episodes) {
        recent_returns.push_back(e.episode_return);
        if (recent_returns.size() > static_cast<size_t>(kEpisodeWindow)) recent_returns.pop_front();
        recent_lengths.push_back(static_cast<double>(e.episode_length));
        if (recent_lengths.size() > static_cast<size_t>(kEpisodeWindow)) recent_lengths.pop_front();
      }
      auto mean = [](const std::deque<double>& values) {
        double sum = 0;
        for (double v : values) sum += v;
        return values.empty() ? NAN : sum / static_cast<double>(values.size());
      };
      const double recent_mean = mean(recent_returns);
      double n_ep = static_cast<double>(episodes.size());
      if (world_size > 1) {  // the iteration's means over every rank's episodes
        ep_return = dist_ep_return, ep_length = dist_ep_length, n_ep = dist_ep_count;
      }
      episodes_total += static_cast<int64_t>(episodes.size());
      if (monitor_csv != nullptr && !episodes.empty()) {
        const double now_unix_s = UnixNowS();  // for an episode without its own end time
        for (const algo::EpisodeRecord& e : episodes) {
          monitor_csv->WriteEpisode(e.episode_return, e.episode_length,
                                    std::isnan(e.end_unix_s) ? now_unix_s : e.end_unix_s);
        }
        monitor_csv->Flush();
      }
      log_rows.global_episodes += n_ep;
      log_rows.pending_ep_count += n_ep;
      log_rows.pending_ep_return += ep_return;
      log_rows.pending_ep_length += ep_length;
      const double n_row = log_rows.pending_ep_count;
      row.clear();
      row.emplace_back("global_step", static_cast<double>(steps));
      row.emplace_back("time_s", 0.0);  // filled when the row is written
      row.emplace_back("charts/SPS", 0.0);
      row.emplace_back("charts/episodic_return",
                       n_row > 0 ? log_rows.pending_ep_return / n_row : NAN);
      row.emplace_back("charts/episodic_length",
                       n_row > 0 ? log_rows.pending_ep_length / n_row : NAN);
      row.emplace_back("rollout/ep_rew_mean", recent_mean);
      row.emplace_back("rollout/ep_len_mean", mean(recent_lengths));
      row.insert(row.end(), update_metrics.begin(), update_metrics.end());
      row.emplace_back("losses/nonfinite_skips", static_cast<double>(skips_seen));
      row.emplace_back("eval/mean_reward", eval_mean);
      row.emplace_back("eval/std_reward", eval_std);
      row.emplace_back("eval/mean_ep_length", eval_length);  // SB3's EvalCallback key
      if (last) break;  // the last row is written after the final checkpoint's pending write, below

      const double elapsed_s = clock.NowS() - t0 + resumed.elapsed_s;
      double budget_time_s = clock.NowS() - t0 + resumed.elapsed_s;
      // Data-parallel: the whole job's energy (all ranks), for the metrics row and the budget.
      const energy::Measurement total =
          world_size > 1 ? job_total_so_far(&budget_time_s) : total_so_far();
      price_energy(total);

      // The budget acts on what this iteration cost (energy.json records every decision); with
      // several ranks on the job's energy and rank 0's clock, so all ranks decide alike.
      bool budget_decided = false;  // an event this iteration: its row is written (below)
      if (budget.enabled()) {
        // What comes after the last iteration must fit: the final evaluation (rank 0's estimate:
        // it evaluates) when the run finishes, the resume checkpoint a stop writes (every rank
        // its own: checkpoint_estimate_j) when it stops, so the larger of the two. A periodic
        // checkpoint due before the next iteration (below) must fit too. Summed over the ranks,
        // the same on every rank so that all decide alike.
        const double checkpoint_j = checkpoint_estimate_j;
        double reserve_j[3] = {writer ? final_eval_reserve_j() : 0.0,
                               next_checkpoint > 0 && steps >= next_checkpoint ? checkpoint_j : 0.0,
                               checkpoint_j};
        if (world_size > 1) group->AllReduceSum(reserve_j, 3, "budget reserves");
        const size_t events_before = budget.events().size();
        const energy::BudgetDecision decision = budget.OnIteration(
            steps, total_steps, total.total_energy_j(), budget_time_s,
            std::max(reserve_j[0], reserve_j[2]), reserve_j[1],
            reserve_j[2] > reserve_j[0] ? "stop checkpoint" : "final evaluation");
        skip_non_critical = decision.skip_non_critical;
        budget_decided = budget.events().size() > events_before;
        // Each decision on stderr as it is taken (energy.json and the summary list them too).
        if (options.verbose && writer) {
          for (size_t e = events_before; e < budget.events().size(); ++e) {
            const energy::BudgetEvent& event = budget.events()[e];
            say(fmt::format("greenrl: energy budget: {}{}: {}",
                            energy::BudgetActionName(event.action),
                            event.taken ? "" : " (passed over)", event.reason));
          }
        }
        for (energy::BudgetAction action : decision.actions) {
          apply_budget_action(action, decision.env_threads_fraction);
        }
        if (decision.stop) {
          stopped_by_budget = true;
          // A resume checkpoint and no final.pt (the run is unfinished): `--resume` with a larger
          // budget continues here, after this iteration's row (written below, after the loop).
          mark_row_written();
          write_checkpoint();
          break;  // final checkpoint and reports below
        }
        if (decision.throttle && decision.idle_s > 0) {
          algorithm->ReleaseSpinningThreads();  // the sleep costs no spinning worker's CPU
          std::this_thread::sleep_for(std::chrono::duration<double>(decision.idle_s));
        }
      }

      // A row when log_interval says so, and for every evaluation; under budget pressure only
      // every 10th iteration (the rows in between are summed up in the next one), and the row of
      // each iteration the budget took a decision at (energy.json's events have their rows).
      const auto multiples = [&](double count) {
        return std::floor(count / static_cast<double>(log_interval));
      };
      const bool interval_due =
          log_by_episodes
              ? multiples(log_rows.global_episodes) > multiples(log_rows.episodes_at_last_row)
              : multiples(static_cast<double>(iteration)) >
                    multiples(static_cast<double>(log_rows.iteration_at_last_row));
      if (evaluate_now ||
          (interval_due && (!skip_non_critical || iteration % 10 == 0 || budget_decided))) {
        mark_row_written();
        row[1].second = elapsed_s;
        row[2].second = steps / elapsed_s;
        energy_columns(total, &row);
        if (metrics_csv) metrics_csv->WriteRow(row);
        if (tfevents) tfevents->WriteRow(row);
      }
      if (options.progress && writer && elapsed_s - last_progress_s >= 0.25) {
        last_progress_s = elapsed_s;
        // "return -" until the first training episode ends (no mean yet); "est." when the
        // figures are an estimate (the CPU-time estimator's), as the summary labels them.
        fmt::print(stderr,
                   "\r[greenrl] step {}/{}  {:.0f} steps/s  return {}  {:.1f} W  {:.4f} Wh{}   ",
                   steps, total_steps, steps / elapsed_s,
                   std::isnan(recent_mean) ? std::string("-") : fmt::format("{:.1f}", recent_mean),
                   total.total_energy_j() / elapsed_s, total.total_energy_j() / kJoulesPerWh,
                   progress_estimated ? " est." : "");
        std::fflush(stderr);
      }
      // --- resume checkpoints and stop signals (checkpointing.h, signals.h)
      stop_signal = world_size > 1           ? dist_stop_signal
                    : options.handle_signals ? StopSignalReceived()
                                             : 0;
      interrupted =
          stop_signal != 0 || (options.stop_after_steps > 0 && steps >= options.stop_after_steps);
      // Under a budget, a run with no checkpoint measured yet (this segment's or an earlier
      // one's) writes one after its first iteration: the resume checkpoint a budget stop writes
      // then has an estimate, which the stop rule keeps in hand (a count every rank shares).
      bool budget_checkpoint = false;
      if (budget.enabled() && !budget_checkpoint_decided) {
        const auto windows = windows_so_far();
        const auto it = windows.find("checkpoint");
        budget_checkpoint = it == windows.end() || it->second.count == 0;
        budget_checkpoint_decided = true;
      }
      if (interrupted || budget_checkpoint || (next_checkpoint > 0 && steps >= next_checkpoint)) {
        while (next_checkpoint > 0 && steps >= next_checkpoint) next_checkpoint += ckpt.freq;
        write_checkpoint();
      }
      if (interrupted) break;
      // --- end resume checkpoints and stop signals
    }
  } catch (const std::exception& e) {
    if (world_size > 1 || !writer) throw;
    failure = std::current_exception();
    failure_what = e.what();
    for (const char* key : {"rollout", "update", "eval", "checkpoint"}) {
      if (monitor.IsWindowOpen(key)) monitor.EndWindow(key);  // its energy counts where it was
    }
  }
  bool failed = failure != nullptr;
  // A write after the loop that fails (the final checkpoint's, the last metrics row's, the
  // reports': a full disk) fails a single-process run there, as a failure inside the loop does:
  // energy.json and emissions.csv say "failed" with what it spent, and its error is rethrown.
  auto fail_after_loop = [&](const std::exception& e) {
    if (world_size > 1 || failed) throw;
    failure = std::current_exception();
    failure_what = e.what();
    failed = true;
  };
  if (options.progress && writer) fmt::print(stderr, "\n");

  // --- Final checkpoint (pending), the figures every report shares (one reading), the reports,
  // then the final checkpoint's rename.
  TrainResult result;
  result.rank = rank;
  result.interrupted = interrupted;  // --- signals: a resume checkpoint instead of final.pt
  result.stop_signal = stop_signal;
  result.resume_checkpoint = interrupted || stopped_by_budget ? last_checkpoint : "";
  result.guard_restores = guard_restores;
  // The policy is written here (metered) as checkpoints/final.pt.pending and renamed final.pt
  // once energy.json, emissions.csv and the last metrics row are written: a run is finished when
  // it has final.pt, and one that failed in between (a full disk) keeps its trained policy for
  // eval and export and is resumed from its newest resume checkpoint, if it has one.
  if (writer) {
    try {
      const std::optional<NormalizerSnapshot> norm = snapshot();
      if (!stopped_by_budget && !failed && !interrupted) {
        SaveFinalCheckpoint(*algorithm, run_dir, norm);  // the policy with its statistics
        result.checkpoint_path = run_dir + "/checkpoints/final.pt";
      }
      if (norm && (stopped_by_budget || interrupted)) {
        // The resume checkpoint's statistics (which it holds itself), for people and scripts.
        SaveNormalizer(run_dir + "/checkpoints/normalizer.json", *norm);
      }
    } catch (const std::exception& e) {
      fail_after_loop(e);
    }
    // Unfinished (a budget stop, a failure): the last resume checkpoint.
    if (result.checkpoint_path.empty() && !interrupted) result.checkpoint_path = last_checkpoint;
  }
  say_non_finite_outputs();
  sampler.Stop();
  power_limits.Restore();
  const double wall_time_s = clock.NowS() - t0 + resumed.elapsed_s;
  double cpu_time_s = ProcessCpuSeconds() - cpu0 + resumed.cpu_s;
  energy::Measurement total = total_so_far();
  // Data-parallel: every rank's wall time, CPU time, all-reduce time and energy per domain
  // (domains in monitor order, the same on every rank of one build and meter choice), gathered
  // through one sum over a [world_size, slot] table where each rank fills its own row.
  std::vector<double> per_rank;
  // The envs' faults and non-finite outputs over the run (all segments); the job's, summed over
  // the ranks, when data-parallel.
  int64_t env_non_finite_resets = resumed.env_non_finite_resets + env->non_finite_resets();
  int64_t env_non_finite_outputs = non_finite_outputs_so_far();
  std::map<std::string, std::map<std::string, double>> job_window_j;  // window -> domain -> J
  const size_t num_domains = monitor.domains().size(), slot = 5 + num_domains;
  if (world_size > 1) {
    per_rank.assign(slot * static_cast<size_t>(world_size), 0.0);
    double* mine = &per_rank[slot * static_cast<size_t>(rank)];
    mine[0] = static_cast<double>(num_domains);
    mine[1] = wall_time_s, mine[2] = cpu_time_s;
    mine[3] = resumed.allreduce_s + group->stats().allreduce_s;  // all segments, as the others
    mine[4] = total.total_energy_j();
    for (size_t k = 0; k < num_domains; ++k) {
      const auto it = total.energy_j.find(monitor.domains()[k].domain);
      mine[5 + k] = it == total.energy_j.end() ? 0.0 : it->second;
    }
    group->AllReduceSum(per_rank.data(), static_cast<int64_t>(per_rank.size()), "per-rank energy");
    cpu_time_s = 0.0;
    for (int q = 0; q < world_size; ++q) {
      const double* p = &per_rank[slot * static_cast<size_t>(q)];
      GREENRL_CHECK(static_cast<size_t>(p[0]) == num_domains,
                    "rank " + std::to_string(q) + " metered " + std::to_string(p[0]) +
                        " energy domains, rank " + std::to_string(rank) + " " +
                        std::to_string(num_domains));
      cpu_time_s += p[2];
    }
    // The job's energy per domain: shared counters once per machine (job_energy.h).
    for (size_t k = 0; k < num_domains; ++k) {
      double job_j = 0.0;
      for (int q = 0; q < world_size; ++q) {
        job_j += job_weights[static_cast<size_t>(q)][k] *
                 per_rank[slot * static_cast<size_t>(q) + 5 + k];
      }
      total.energy_j[monitor.domains()[k].domain] = job_j;
    }
    // The windows' energy, the same way: every rank's rollout, update and checkpoint (and rank 0's
    // eval) energy per domain, weighted, in [window, domain] slots; counts and durations stay rank
    // 0's (the ranks run them in lockstep).
    const std::vector<std::string> kWindows = {"rollout", "update", "eval", "checkpoint"};
    const auto windows = windows_so_far();
    std::vector<double> window_j(kWindows.size() * num_domains, 0.0);
    for (size_t w = 0; w < kWindows.size(); ++w) {
      const auto it = windows.find(kWindows[w]);
      if (it == windows.end()) continue;
      for (size_t k = 0; k < num_domains; ++k) {
        const auto e = it->second.sum.energy_j.find(monitor.domains()[k].domain);
        if (e != it->second.sum.energy_j.end()) {
          window_j[w * num_domains + k] = job_weights[static_cast<size_t>(rank)][k] * e->second;
        }
      }
    }
    group->AllReduceSum(window_j.data(), static_cast<int64_t>(window_j.size()), "window energy");
    for (size_t w = 0; w < kWindows.size(); ++w) {
      for (size_t k = 0; k < num_domains; ++k) {
        job_window_j[kWindows[w]][monitor.domains()[k].domain] = window_j[w * num_domains + k];
      }
    }
    double env_counts[2] = {static_cast<double>(env_non_finite_resets),
                            static_cast<double>(env_non_finite_outputs)};
    group->AllReduceSum(env_counts, 2, "env output counts");
    env_non_finite_resets = static_cast<int64_t>(env_counts[0]);
    env_non_finite_outputs = static_cast<int64_t>(env_counts[1]);
  }
  report::RunReport& r = result.report;
  // A stop signal after the last iteration began finds a run that finishes anyway (the loop
  // checks the flag only between iterations): TrainResult::late_stop_signal.
  const bool handle_signals = options.handle_signals;
  auto note_late_signal = [&] {
    if (!interrupted && handle_signals) result.late_stop_signal = StopSignalReceived();
  };
  if (!writer) {  // the run dir and its reports are rank 0's
    r.steps = steps;
    r.wall_time_s = wall_time_s;
    note_late_signal();
    return result;
  }
  price_energy(total);
  row[1].second = wall_time_s;
  row[2].second = steps / wall_time_s;
  energy_columns(total, &row);
  // An interrupted run wrote its rows in the loop, where log_interval (or the budget's thinning)
  // called for them, so its last row may be before its checkpoint's step: the resumed run's
  // next row sums up the iterations since, as the uninterrupted run's does.
  // A failed run's last row is the one its loop wrote (the row being built may be half-filled).
  if (!interrupted && !failed) {
    try {
      metrics_csv->WriteRow(row);
      if (tfevents) tfevents->WriteRow(row);
    } catch (const std::exception& e) {
      fail_after_loop(e);
    }
  }

  r.algo = algo_id;
  r.update_path = algorithm->UpdatePath();
  r.env_id = env_id;
  r.run_dir = run_dir;
  r.seed = seed;
  r.steps = steps;
  r.wall_time_s = wall_time_s;
  r.world_size = world_size;
  r.cpu_time_s = cpu_time_s;
  r.cpu_before_meters_s = cpu_before_meters_s;
  r.steps_per_s = steps / wall_time_s;
  r.env_non_finite_resets = env_non_finite_resets;
  r.env_non_finite_outputs = env_non_finite_outputs;
  // The command that continues this run: a data-parallel one needs its world size back, started
  // as the run was (greenrl launch; torchrun; srun or mpirun, which only the user can spell).
  const std::string resume_command =
      TrainCommandAsStarted(dist_env, world_size, "--resume " + ShellWord(run_dir));
  const std::string failed_resume =
      last_checkpoint.empty()
          ? "no resume checkpoint was written before it; checkpoint_freq sets how often"
          : fmt::format("{} continues it from {}", resume_command, last_checkpoint);
  auto note_failure = [&] {
    r.eval_episodes = 0;
    r.failure = failure_what;
    r.eval_note = fmt::format("failed at step {}: {} ({})", steps, failure_what, failed_resume);
  };
  if (failed) {
    note_failure();
  } else if (interrupted) {
    r.eval_episodes = 0;
    r.eval_note = fmt::format("interrupted{} at step {}: {} continues it",
                              stop_signal != 0 ? fmt::format(" by signal {}", stop_signal) : "",
                              steps, resume_command);
  } else if (stopped_by_budget) {
    r.eval_episodes = 0;
    r.eval_note = fmt::format(
        "the energy budget ended the run at step {} ({} eval --run {} evaluates its "
        "checkpoint; {} --set energy.budget_wh=W continues it under a larger budget W)",
        steps, ProgramName(), ShellWord(run_dir), resume_command);
  } else {
    r.eval_episodes = final_episodes;
    r.eval_mean_return = final_eval.mean_return;
    r.eval_std_return = final_eval.std_return;
  }
  r.monitor_duration_s = total.duration_s;
  for (const auto& d : monitor.domains()) {
    const auto it = total.energy_j.find(d.domain);
    r.domains.push_back({d.domain, d.meter, energy::ToString(d.provenance),
                         energy::ToString(d.scope), it == total.energy_j.end() ? 0.0 : it->second,
                         SharedNote(d.domain, d.scope, monitor.meters())});
  }
  for (const auto& [key, totals] : windows_so_far()) {
    const auto job = job_window_j.find(key);  // data-parallel: the job's energy of the window
    r.windows.push_back({key, totals.count, totals.sum.duration_s,
                         job != job_window_j.end() ? job->second : totals.sum.energy_j,
                         totals.short_count});
  }
  r.meter_reason = meter_reason;
  r.meter_update_period_s = monitor.update_period_s();
  if (best_eval_step >= 0 && writer) {
    r.best_eval = {best_eval_step, best_eval_mean, run_dir + "/checkpoints/best.pt"};
  }
  r.trained_agent = trained_agent_report;
  if (meter_reason_logged) r.meter_brief = meter_brief;
  for (const energy::EnergyMeter* m : monitor.meters()) {  // read at the end: final counters
    for (const auto& [k, v] : m->Details()) r.meter_details.emplace_back(m->name() + "." + k, v);
  }
  r.carbon = carbon_of(total);
  r.early_stop = early_stop;
  r.budget.enabled = budget.enabled();
  r.budget.budget_wh = budget_options.budget_wh;
  r.budget.final_state = energy::BudgetStateName(budget.state());
  r.budget.stopped = stopped_by_budget;
  r.budget.interrupted = interrupted;
  r.budget.stop_reason = budget.stop_reason();
  r.budget.events = budget.events();  // earlier segments' decisions too, budget or not now
  r.power_limit_mode = power_limit_mode;
  r.power_limit_log = power_limits.log();
  r.sampler.period_s = sampler.period_s();
  r.sampler.max_safe_period_s = sampler.MaxSafePeriodS();
  r.sampler.rows = static_cast<int64_t>(sampler.rows().size());
  r.sampler.missed_ticks = sampler.missed_ticks();
  r.sampler.cpu_time_s = sampler.cpu_time_s();
  // energy.json (with the ranks' own figures under data-parallel training).
  auto write_energy_json = [&] {
    report::WriteEnergyJson(run_dir + "/energy.json", r);
    if (world_size > 1) {
      // energy.json's totals above are the job's (job_energy.h); "distributed" keeps each rank's
      // figures.
      nlohmann::json j = nlohmann::json::parse(std::ifstream(run_dir + "/energy.json"));
      nlohmann::json ranks = nlohmann::json::array();
      for (int q = 0; q < world_size; ++q) {
        const double* p = &per_rank[slot * static_cast<size_t>(q)];
        nlohmann::json e = nlohmann::json::object();
        // The part of the job's total this rank's readings make: a counter it shares with
        // ranks on its machine is in every one's readings and counted from the lowest of them
        // (job_weights), so these sum to the job's total where total_energy_j does not.
        double in_job_j = 0.0;
        for (size_t k = 0; k < num_domains; ++k) {
          e[monitor.domains()[k].domain] = p[5 + k];
          if (energy::IsAdditiveDomain(monitor.domains()[k].domain)) {
            in_job_j += job_weights[static_cast<size_t>(q)][k] * p[5 + k];
          }
        }
        ranks.push_back({{"rank", q},
                         {"wall_time_s", p[1]},
                         {"cpu_time_s", p[2]},
                         {"allreduce_s", p[3]},
                         {"total_energy_j", p[4]},
                         {"job_energy_j", in_job_j},
                         {"energy_j", e}});
      }
      const dist::CommStats& cs = group->stats();
      j["distributed"] = {{"world_size", world_size},
                          {"launcher", dist_env.source},
                          {"backend", dist_options.backend},
                          {"timeout_s", dist_options.timeout_s},
                          {"energy_note",
                           "totals, windows' energy, carbon, emissions.csv and metrics.csv energy "
                           "columns are the job's (process-scope domains summed over ranks, a "
                           "counter shared by ranks on one machine once); window counts and "
                           "durations are rank 0's; a rank's total_energy_j and energy_j are "
                           "what its meters read (a shared counter in each rank's), its "
                           "job_energy_j the part of the job's total they make (the ranks' sum "
                           "to it)"},
                          {"rank0_allreduce_calls", resumed.allreduce_calls + cs.allreduce_calls},
                          {"rank0_allreduce_bytes", resumed.allreduce_bytes + cs.allreduce_bytes},
                          {"rank0_allreduce_s", resumed.allreduce_s + cs.allreduce_s},
                          {"ranks", ranks}};
      WriteFileAtomic(run_dir + "/energy.json",
                      j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    }
  };
  // The reports: emissions.csv, then energy.json, which says how the run ended, then final.pt
  // (a finished run's: final.pt.pending renamed). Each is tried whatever became of the one
  // before. One that fails fails a single-process run (as a failure inside the loop does), and
  // energy.json says so; when a failed run's reports cannot be written (a full disk), that is
  // said (unless quiet) and the run's own error is the one that reaches the caller.
  struct WriteError {
    std::exception_ptr error;
    std::string what;
  };
  auto try_write = [](const std::function<void()>& write) -> std::optional<WriteError> {
    try {
      write();
      return std::nullopt;
    } catch (const std::exception& e) {
      return WriteError{std::current_exception(), e.what()};
    }
  };
  auto fail_at = [&](const WriteError& e) {
    if (world_size > 1) std::rethrow_exception(e.error);
    failure = e.error;
    failure_what = e.what;
    failed = true;
    note_failure();
  };
  const std::optional<WriteError> emissions_error = try_write([&] {
    report::WriteEmissionsCsv(run_dir + "/emissions.csv", MakeEmissionsRow(r, UnixNowS()));
  });
  if (emissions_error && !failed) fail_at(*emissions_error);
  std::optional<WriteError> energy_error = try_write(write_energy_json);
  if (!energy_error && !failed && !interrupted && !stopped_by_budget) {
    if (const auto commit_error = try_write([&] { CommitFinalCheckpoint(run_dir); })) {
      fail_at(*commit_error);  // energy.json said "finished": it says "failed" now
      energy_error = try_write(write_energy_json);
    }
  }
  if (energy_error && !failed) fail_at(*energy_error);
  if (failed) {
    // A report that failed besides the run's own error (not the error itself, said once).
    const bool emissions_too = emissions_error && emissions_error->error != failure;
    const bool energy_too = energy_error && energy_error->error != failure;
    if (options.verbose && (emissions_too || energy_too)) {  // --quiet: the run's own error
      fmt::print(stderr, "greenrl: the failed run's {} could not be written either: {}\n",
                 energy_too && emissions_too ? "energy.json and emissions.csv"
                 : energy_too                ? "energy.json"
                                             : "emissions.csv",
                 (energy_too ? energy_error : emissions_error)->what);
    }
    // Also under --quiet, as a stop signal's line: where the run's figures and resume are (when
    // no report could be written, --quiet leaves the one line of the run's own error).
    if (options.verbose || !energy_error || !emissions_error) {
      fmt::print(
          stderr, "greenrl: the run failed at step {}; {} the {:.4g} Wh it spent; {}\n", steps,
          !energy_error && !emissions_error ? run_dir + "/energy.json and emissions.csv record"
          : !energy_error                   ? run_dir + "/energy.json records"
          : !emissions_error                ? run_dir + "/emissions.csv records"
                                            : "no report records",
          total.total_energy_j() / kJoulesPerWh, failed_resume);
    }
    std::rethrow_exception(failure);
  }
  note_late_signal();
  return result;
}

}  // namespace greenrl::train
