// dist_env.h: where this process sits in a data-parallel job, read from the environment
// variables the usual launchers set (torch c10d's env:// rendezvous):
//   torchrun (and `greenrl launch`): RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
//     (https://pytorch.org/docs/1.13/elastic/run.html, "Environment Variables");
//   SLURM srun: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (https://slurm.schedmd.com/srun.html,
//     "OUTPUT ENVIRONMENT VARIABLES"), plus MASTER_ADDR from the job script;
//   Open MPI mpirun: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//     (https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html), plus MASTER_ADDR.
// Torch-free: parsing and validation only; process_group.h connects.
#pragma once

#include <functional>
#include <string>

namespace greenrl::dist {

// The first launcher whose variables are present wins, in the order torchrun, SLURM, Open MPI
// (torchrun inside a SLURM allocation sets RANK, which is then the one that counts).
struct DistEnv {
  int rank = 0;                      // global rank in [0, world_size)
  int world_size = 1;                // number of processes in the job
  // Rank on this node; the global rank when the launcher sets no local rank.
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";  // host of rank 0's TCPStore
  int master_port = 29500;           // port of rank 0's TCPStore (torchrun's default 29500)
  // Which launcher started the process: "torchrun" (its variables RANK, WORLD_SIZE, ...),
  // "greenrl launch" (the same variables plus GREENRL_LAUNCH=1, set by `greenrl launch`),
  // "slurm", "openmpi" or "none" (one process).
  std::string source = "none";
  // torchrun's agent store (TORCHELASTIC_USE_AGENT_STORE=True, which torchrun's static and c10d
  // rendezvous set): torchrun's agent already hosts the TCPStore on MASTER_ADDR:MASTER_PORT, so
  // every rank, rank 0 too, joins it as a client, under the key prefix
  // "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>" (torch/distributed/rendezvous.py,
  // _create_c10d_store). False: rank 0 hosts the store itself.
  bool use_agent_store = false;
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT (0 when unset)
};

// Reads the variables through `getenv` (default: std::getenv).
// Errors: greenrl::ConfigError naming the variable, its value and what is accepted, for: a
// non-integer or out-of-range number; RANK without WORLD_SIZE (or the reverse, likewise for the
// SLURM and Open MPI pairs); rank >= world size; MASTER_ADDR missing when world size > 1 under
// SLURM or Open MPI (torchrun always sets it); MASTER_ADDR empty; MASTER_PORT outside [1, 65535];
// TORCHELASTIC_USE_AGENT_STORE other than True or False; TORCHELASTIC_RESTART_COUNT not an
// integer >= 0.
DistEnv ReadDistEnv(const std::function<const char*(const char*)>& getenv = nullptr);

}  // namespace greenrl::dist
