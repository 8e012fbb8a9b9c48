// dist: environment parsing, Chan's moment merge, and two ranks (threads of this process, each
// with its own c10d group, meeting through a FileStore so that parallel tests never share a
// port) running the collectives, including a rank that stops answering.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "greenrl/core/errors.h"
#include "greenrl/dist/dist_env.h"
#include "greenrl/dist/process_group.h"
#include "greenrl/dist/running_moments.h"

namespace greenrl::dist {
namespace {

std::function<const char*(const char*)> Vars(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    const auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(DistEnvTest, TorchrunVariables) {
  const DistEnv d = ReadDistEnv(Vars({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                                      {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "1234"}}));
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.world_size, 4);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.master_addr, "node7");
  EXPECT_EQ(d.master_port, 1234);
  EXPECT_EQ(d.source, "torchrun");
  // The same variables from `greenrl launch`, which marks itself.
  EXPECT_EQ(ReadDistEnv(Vars({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"GREENRL_LAUNCH", "1"}})).source,
            "greenrl launch");
}

// torchrun's agent store (torch/distributed/rendezvous.py): "True" makes every rank a client,
// with the restart count in the key prefix; any other text than True or False is refused.
TEST(DistEnvTest, TorchrunAgentStoreVariables) {
  const std::map<std::string, std::string> base = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "n0"}};
  auto with = [&](std::map<std::string, std::string> extra) {
    extra.insert(base.begin(), base.end());
    return ReadDistEnv(Vars(extra));
  };
  EXPECT_FALSE(with({}).use_agent_store);
  const DistEnv agent =
      with({{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"}});
  EXPECT_TRUE(agent.use_agent_store);
  EXPECT_EQ(agent.restart_count, 2);
  EXPECT_FALSE(with({{"TORCHELASTIC_USE_AGENT_STORE", "False"}}).use_agent_store);
  try {
    with({{"TORCHELASTIC_USE_AGENT_STORE", "1"}});
    ADD_FAILURE() << "accepted 1";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "TORCHELASTIC_USE_AGENT_STORE");
  }
  EXPECT_THROW(with({{"TORCHELASTIC_RESTART_COUNT", "-1"}}), ConfigError);
}

TEST(DistEnvTest, SlurmAndOpenMpiAndNone) {
  DistEnv d = ReadDistEnv(Vars({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"},
                                {"SLURM_LOCALID", "1"}, {"MASTER_ADDR", "n0"}}));
  EXPECT_EQ(d.source, "slurm");
  EXPECT_EQ(d.rank, 5);
  EXPECT_EQ(d.world_size, 8);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.master_port, 29500);
  d = ReadDistEnv(Vars({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                        {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "4000"}}));
  EXPECT_EQ(d.source, "openmpi");
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.local_rank, 1);  // no OMPI_COMM_WORLD_LOCAL_RANK: the global rank
  d = ReadDistEnv(Vars({}));
  EXPECT_EQ(d.source, "none");
  EXPECT_EQ(d.world_size, 1);
  EXPECT_EQ(d.rank, 0);
  // torchrun's variables win over SLURM's (torchrun inside an allocation).
  d = ReadDistEnv(Vars({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "1"},
                        {"SLURM_NTASKS", "1"}, {"MASTER_ADDR", "a"}}));
  EXPECT_EQ(d.source, "torchrun");
  EXPECT_EQ(d.world_size, 2);
}

void ExpectConfigError(const std::map<std::string, std::string>& vars, const std::string& field) {
  try {
    ReadDistEnv(Vars(vars));
    FAIL() << "no error for field " << field;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(DistEnvTest, InconsistentOrMissingValues) {
  ExpectConfigError({{"RANK", "0"}}, "WORLD_SIZE");
  ExpectConfigError({{"WORLD_SIZE", "2"}}, "RANK");
  ExpectConfigError({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}}, "RANK");
  ExpectConfigError({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}}, "RANK");
  ExpectConfigError({{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE");
  ExpectConfigError({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}, "MASTER_ADDR");
  ExpectConfigError(
      {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "70000"}},
      "MASTER_PORT");
  ExpectConfigError({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", ""}}, "MASTER_ADDR");
}

// What is no launch is no error: an allocation's shell has SLURM_NTASKS (or Open MPI's size)
// without a rank, and a single process ignores stray rendezvous variables (torchrun's pair
// stays strict: it always sets both).
TEST(DistEnvTest, AllocationShellsAndStrayRendezvousVariablesAreNoLaunch) {
  for (const std::map<std::string, std::string>& vars :
       std::vector<std::map<std::string, std::string>>{
           {{"SLURM_NTASKS", "4"}},
           {{"OMPI_COMM_WORLD_SIZE", "4"}},
           {{"MASTER_ADDR", ""}},
           {{"MASTER_PORT", "abc"}},
           {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"MASTER_PORT", "70000"}}}) {
    const DistEnv d = ReadDistEnv(Vars(vars));
    EXPECT_EQ(d.world_size, 1) << vars.begin()->first;
    EXPECT_EQ(d.rank, 0);
  }
  EXPECT_EQ(ReadDistEnv(Vars({{"SLURM_NTASKS", "4"}})).source, "none");
  // A missing MASTER_ADDR's error shows how each launcher's users set it.
  try {
    ReadDistEnv(Vars({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}));
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "MASTER_ADDR: got '(unset)'; rank 0's host name or IP address when the world size "
              "is above 1 (slurm launch; export MASTER_ADDR=$(scontrol show hostnames "
              "\"$SLURM_JOB_NODELIST\" | head -n1) before srun)");
  }
}

TEST(RunningMomentsTest, ChanMergeEqualsTheWholeStream) {
  // [1, 2] and [3, 4, 5]: the whole stream 1..5 has mean 3 and population variance 2.
  const Moments a{2.0, {1.5}, {0.25}};
  const Moments b{3.0, {4.0}, {2.0 / 3.0}};
  const Moments m = MergeMoments(a, b);
  EXPECT_DOUBLE_EQ(m.count, 5.0);
  EXPECT_DOUBLE_EQ(m.mean[0], 3.0);
  EXPECT_NEAR(m.var[0], 2.0, 1e-15);
  const Moments back = SubtractMoments(m, a);
  EXPECT_DOUBLE_EQ(back.count, 3.0);
  EXPECT_NEAR(back.mean[0], 4.0, 1e-14);
  EXPECT_NEAR(back.var[0], 2.0 / 3.0, 1e-14);
  EXPECT_EQ(SubtractMoments(a, a).count, 0.0);
  EXPECT_DOUBLE_EQ(MergeMoments(a, SubtractMoments(a, a)).mean[0], 1.5);
  EXPECT_THROW(MergeMoments(a, Moments{1.0, {0.0, 0.0}, {1.0, 1.0}}), std::invalid_argument);
}

TEST(DistOptionsTest, BackendAndTimeoutAreChecked) {
  DistOptions o;
  EXPECT_NO_THROW(ValidateDistOptions(o));
  o.backend = "nccl";
  try {
    ValidateDistOptions(o);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "dist.backend");
    EXPECT_NE(std::string(e.what()).find("NCCL"), std::string::npos) << e.what();
  }
  o.backend = "mpi";
  EXPECT_THROW(ValidateDistOptions(o), ConfigError);
  o.backend = "gloo";
  o.timeout_s = 0.0;
  EXPECT_THROW(ValidateDistOptions(o), ConfigError);
}

// A fresh FileStore path per group (ctest runs tests in parallel processes).
std::string StorePath(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("greenrl_dist_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove(p);
  return p.string();
}

std::unique_ptr<ProcessGroup> Join(int rank, const std::string& store, double timeout_s) {
  DistEnv env;
  env.rank = rank;
  env.world_size = 2;
  env.local_rank = rank;
  DistOptions o;
  o.timeout_s = timeout_s;
  o.file_store_path = store;
  return ProcessGroup::Connect(env, o);
}

// Rank 0 cannot listen on a MASTER_PORT another socket holds: said at once, as a port in use,
// not as a rendezvous timeout.
TEST(ProcessGroupTest, MasterPortInUseIsNamed) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  DistEnv env;
  env.rank = 0;
  env.world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = ntohs(addr.sin_port);
  DistOptions o;
  o.timeout_s = 5.0;
  const auto start = std::chrono::steady_clock::now();
  try {
    ProcessGroup::Connect(env, o);
    ADD_FAILURE() << "joined on a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the port is in use"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 4.0);
  ::close(fd);
}

TEST(ProcessGroupTest, TwoRanksAllReduceAndBroadcast) {
  const std::string store = StorePath("collectives");
  auto rank1 = std::async(std::launch::async, [&] {
    auto pg = Join(1, store, 20.0);
    std::vector<float> g{3.0f, 4.0f, 5.0f};
    pg->AllReduceMean(g.data(), 3, "test");
    std::vector<double> s{10.0, -1.0};
    pg->AllReduceSum(s.data(), 2, "test");
    std::vector<float> p{9.0f, 9.0f};
    pg->Broadcast(p.data(), 2, "test");
    return std::make_tuple(g, s, p, pg->stats().allreduce_calls);
  });
  auto pg = Join(0, store, 20.0);
  EXPECT_EQ(pg->rank(), 0);
  EXPECT_EQ(pg->world_size(), 2);
  std::vector<float> g{1.0f, 2.0f, 3.0f};
  pg->AllReduceMean(g.data(), 3, "test");
  std::vector<double> s{0.5, 2.0};
  pg->AllReduceSum(s.data(), 2, "test");
  std::vector<float> p{-1.0f, 0.25f};
  pg->Broadcast(p.data(), 2, "test");
  const auto [g1, s1, p1, calls1] = rank1.get();
  for (const auto& v : {g, g1}) EXPECT_EQ(v, (std::vector<float>{2.0f, 3.0f, 4.0f}));
  for (const auto& v : {s, s1}) EXPECT_EQ(v, (std::vector<double>{10.5, 1.0}));
  for (const auto& v : {p, p1}) EXPECT_EQ(v, (std::vector<float>{-1.0f, 0.25f}));
  EXPECT_EQ(pg->stats().allreduce_calls, 2);
  EXPECT_EQ(calls1, 2);
  EXPECT_EQ(pg->stats().allreduce_bytes, 3 * 4 + 2 * 8);
  EXPECT_EQ(pg->stats().broadcast_calls, 1);
  std::filesystem::remove(store);
}

// torchrun's agent hosts the TCPStore (here: this test, on a port it picked) and sets
// TORCHELASTIC_USE_AGENT_STORE=True: both ranks join it as clients, rank 0 too (hosting a second
// server on that port failed with "the port is in use"), and their keys go under
// /worker/attempt_<restart count>, where a rank of the same attempt finds them.
TEST(ProcessGroupTest, TorchrunAgentStoreHostsTheRendezvous) {
  c10d::TCPStoreOptions so;
  so.port = 0;
  so.isServer = true;
  so.numWorkers = 3;
  so.waitWorkers = false;
  so.timeout = std::chrono::seconds(20);
  auto agent = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  auto join = [&](int rank) {
    DistEnv env;
    env.rank = rank;
    env.world_size = 2;
    env.master_addr = "127.0.0.1";
    env.master_port = agent->getPort();
    env.source = "torchrun";
    env.use_agent_store = true;
    env.restart_count = 1;
    DistOptions o;
    o.timeout_s = 20.0;
    return ProcessGroup::Connect(env, o);
  };
  auto rank1 = std::async(std::launch::async, [&] {
    auto pg = join(1);
    std::vector<double> s{1.0, 2.0};
    pg->AllReduceSum(s.data(), 2, "test");
    return s;
  });
  auto pg = join(0);
  std::vector<double> s{10.0, 20.0};
  pg->AllReduceSum(s.data(), 2, "test");
  EXPECT_EQ(s, (std::vector<double>{11.0, 22.0}));
  EXPECT_EQ(rank1.get(), (std::vector<double>{11.0, 22.0}));
  // Every key the ranks wrote is under the attempt's prefix.
  c10d::PrefixStore attempt("/worker/attempt_1", agent);
  EXPECT_TRUE(attempt.check({"pg/0/0", "pg/0/1"}));
  EXPECT_FALSE(agent->check({"pg/0/0"}));
}

// AllGatherText gives every rank every rank's text, in rank order (the trainer's config check and
// rank 0's run directory name).
TEST(ProcessGroupTest, AllGatherTextGivesEveryRanksText) {
  const std::string store = StorePath("gather");
  auto rank1 = std::async(std::launch::async, [&] {
    auto pg = Join(1, store, 20.0);
    return pg->AllGatherText("name", "runs/b", "test");
  });
  auto pg = Join(0, store, 20.0);
  const std::vector<std::string> mine = pg->AllGatherText("name", "runs/a", "test");
  EXPECT_EQ(mine, (std::vector<std::string>{"runs/a", "runs/b"}));
  EXPECT_EQ(rank1.get(), mine);
  std::filesystem::remove(store);
}

TEST(ProcessGroupTest, GroupOfOneReturnsItsInput) {
  auto pg = ProcessGroup::Connect(DistEnv{}, DistOptions{});
  std::vector<float> g{1.0f, -2.0f};
  pg->AllReduceMean(g.data(), 2, "test");
  EXPECT_EQ(g, (std::vector<float>{1.0f, -2.0f}));
}

// Rank 1 joins and then never enters the collective (a hung rank): rank 0's all-reduce fails
// after the timeout, not later than 3x, naming the collective, the buffer and rank 1.
TEST(ProcessGroupTest, HungRankFailsTheOthersWithinTheTimeout) {
  const std::string store = StorePath("hang");
  const double timeout_s = 1.0;
  std::promise<void> rank0_done;
  auto rank1 = std::async(std::launch::async, [&] {
    auto pg = Join(1, store, timeout_s);
    rank0_done.get_future().wait();  // alive, but silent
  });
  auto pg = Join(0, store, timeout_s);
  std::vector<float> g(10, 1.0f);
  const auto t0 = std::chrono::steady_clock::now();
  std::string message;
  try {
    pg->AllReduceMean(g.data(), 10, "ppo gradients");
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rank0_done.set_value();
  rank1.get();
  ASSERT_FALSE(message.empty()) << "the all-reduce returned without its peer";
  EXPECT_GE(waited, 0.9 * timeout_s);
  EXPECT_LT(waited, 3.0 * timeout_s + 2.0);  // + the failure diagnosis' wait (<= timeout / 2)
  EXPECT_NE(message.find("all-reduce"), std::string::npos) << message;
  EXPECT_NE(message.find("ppo gradients"), std::string::npos) << message;
  EXPECT_NE(message.find("rank(s) 1 did not report it"), std::string::npos) << message;
  std::filesystem::remove(store);
}

}  // namespace
}  // namespace greenrl::dist
