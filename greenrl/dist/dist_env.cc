#include "greenrl/dist/dist_env.h"

#include <cstdlib>
#include <string>

#include "greenrl/core/errors.h"

namespace greenrl::dist {

namespace {
int ParseInt(const char* name, const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < lo || v > hi) {
    throw ConfigError(name, text,
                      "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(v);
}
}  // namespace

DistEnv ReadDistEnv(const std::function<const char*(const char*)>& getenv_fn) {
  auto get = [&](const char* name) -> const char* {
    return getenv_fn ? getenv_fn(name) : std::getenv(name);
  };
  struct Launcher {
    const char* source;
    const char* rank;
    const char* size;
    const char* local;
  };
  static constexpr Launcher kLaunchers[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
      {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
  };
  DistEnv d;
  for (const Launcher& l : kLaunchers) {
    const char* rank = get(l.rank);
    const char* size = get(l.size);
    if (rank == nullptr && size == nullptr) continue;
    // An allocation's shell (salloc, an Open MPI job's environment) has the size without a rank:
    // a process started there by hand is no rank of a launch. torchrun sets both, always.
    if (rank == nullptr && std::string(l.source) != "torchrun") continue;
    if (rank == nullptr) {
      throw ConfigError(l.rank, "(unset)",
                        std::string("set together with ") + l.size + "=" + size);
    }
    if (size == nullptr) {
      throw ConfigError(l.size, "(unset)",
                        std::string("set together with ") + l.rank + "=" + rank);
    }
    d.source = l.source;
    // `greenrl launch` sets torchrun's variables and marks itself (cli/launch_command.cc).
    const char* greenrl_launch = get("GREENRL_LAUNCH");
    if (d.source == "torchrun" && greenrl_launch != nullptr && std::string(greenrl_launch) == "1") {
      d.source = "greenrl launch";
    }
    d.world_size = ParseInt(l.size, size, 1, 1 << 20);
    d.rank = ParseInt(l.rank, rank, 0, d.world_size - 1);
    const char* local = get(l.local);
    d.local_rank = local != nullptr ? ParseInt(l.local, local, 0, d.world_size - 1) : d.rank;
    break;
  }
  // The rendezvous variables matter to a data-parallel launch only: a single process ignores
  // them (a stray export in the shell refuses nothing), as torch reads them for init only.
  if (d.world_size <= 1) return d;
  const char* addr = get("MASTER_ADDR");
  if (addr != nullptr) {
    if (*addr == '\0') throw ConfigError("MASTER_ADDR", "", "rank 0's host name or IP address");
    d.master_addr = addr;
  } else {
    const std::string example =
        d.source == "slurm"
            ? "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1) "
              "before srun"
        : d.source == "openmpi" ? "export MASTER_ADDR=<the first host of the job> before mpirun, "
                                  "with -x MASTER_ADDR"
                                : "torchrun and greenrl launch set it; by hand, rank 0's address, "
                                  "e.g. MASTER_ADDR=127.0.0.1 on one machine";
    throw ConfigError("MASTER_ADDR", "(unset)",
                      "rank 0's host name or IP address when the world size is above 1 (" +
                          d.source + " launch; " + example + ")");
  }
  if (const char* port = get("MASTER_PORT")) d.master_port = ParseInt("MASTER_PORT", port, 1, 65535);
  // torchrun's elastic agent (torch/distributed/elastic/agent/server/local_elastic_agent.py)
  // passes str(bool): "True" or "False".
  if (const char* agent = get("TORCHELASTIC_USE_AGENT_STORE")) {
    const std::string value = agent;
    if (value != "True" && value != "False") {
      throw ConfigError("TORCHELASTIC_USE_AGENT_STORE", value,
                        "True or False (torchrun sets it: whether its agent hosts the store)");
    }
    d.use_agent_store = value == "True";
  }
  if (const char* restarts = get("TORCHELASTIC_RESTART_COUNT")) {
    d.restart_count = ParseInt("TORCHELASTIC_RESTART_COUNT", restarts, 0, 1 << 30);
  }
  return d;
}

}  // namespace greenrl::dist
