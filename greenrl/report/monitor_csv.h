// monitor_csv.h: SB3's Monitor file (stable_baselines3/common/monitor.py, SB3 2.x): one row per
// finished training episode, so SB3's `load_results` and `plot_results` and rl-zoo's plotting
// scripts read a greenrl run as they read an SB3 one. The file is
//   #{"t_start": <Unix time of the run's start, s>, "env_id": "<env id>"}
//   r,l,t
//   <return>,<length>,<seconds since t_start>
// r and t rounded to 6 decimals as SB3 writes them. Torch-free.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace greenrl::report {

class MonitorCsv {
 public:
  // A new file at `path` with SB3's two header lines, flushed.
  // Errors: std::runtime_error naming the path and the system's reason when it cannot be created
  // or written.
  static std::unique_ptr<MonitorCsv> Create(const std::string& path, const std::string& env_id,
                                            double t_start_unix_s);

  // A resumed run's file: keeps its header (and so its t_start) and its first `rows` episode
  // rows, those the resume checkpoint counted (rows(); later ones are repeated by the resumed
  // run), rewritten atomically, then appends. Of those rows, one that is not three numbers (a
  // torn last line of a killed run, a damaged one) is dropped, named in *notes; spaces around a
  // cell and CRLF line ends are read (and written back without). A missing or empty file is
  // created anew with t_start_unix_s; one without SB3's header (damaged, or a run before
  // greenrl wrote one) is moved to <path>.damaged (or .damaged.1, .2, ... where that exists),
  // said in *notes, and created anew.
  // notes: receives those messages for the caller to print, one line each; nullptr for none.
  // Errors: std::runtime_error naming the path when it cannot be read, moved, rewritten or
  // opened.
  static std::unique_ptr<MonitorCsv> Resume(const std::string& path, const std::string& env_id,
                                            int64_t rows, double t_start_unix_s,
                                            std::vector<std::string>* notes = nullptr);

  ~MonitorCsv();
  MonitorCsv(const MonitorCsv&) = delete;
  MonitorCsv& operator=(const MonitorCsv&) = delete;

  // Adds one episode: its return (undiscounted), length (steps) and end time, Unix s. Kept in
  // memory until Flush.
  void WriteEpisode(double episode_return, int64_t episode_length, double end_unix_s);
  // Appends the rows added since the last Flush to the file, whole or not at all (with
  // AppendWhole, a failed write leaves the file at its last whole row). The trainer calls it once
  // per iteration. Errors: std::runtime_error naming the file and the system's reason.
  void Flush();

  double t_start_unix_s() const { return t_start_; }

  // Episode rows of the file once the pending ones are flushed: those a resume kept, plus those
  // written since. What a resume checkpoint records (TrainerState::monitor_rows), so that a
  // later resume keeps exactly the rows of the episodes before it, even where they are fewer
  // than the episodes (a damaged row dropped, a file started anew).
  int64_t rows() const { return rows_in_file_ + pending_rows_; }

 private:
  MonitorCsv(const std::string& path, std::FILE* file, double t_start);
  std::string path_;
  std::FILE* file_;           // written at its end through its descriptor only (AppendWhole)
  std::string pending_;       // rows WriteEpisode added since the last Flush
  int64_t pending_rows_ = 0;  // how many
  int64_t rows_in_file_ = 0;  // episode rows written to the file (or kept by Resume)
  double t_start_;
};

}  // namespace greenrl::report
