// emissions.h: emissions.csv, one row per run with CodeCarbon's columns, in CodeCarbon's order
// and units, so tools that read CodeCarbon's output (its dashboard, pandas scripts, carbon
// reporting pipelines) read greenrl's (../shared/REFERENCES.md, "CodeCarbon emissions.csv
// columns"; ../shared/DESIGN.md, "Run directory").
//
// Units in the file are CodeCarbon's: duration s, emissions kg CO2e, emissions_rate kg/s, powers
// W, energies kWh, ram_total_size GB. EmissionsRow holds joules (greenrl's unit) and the writer
// converts. A value greenrl does not know is an empty cell (CodeCarbon's python_version and
// codecarbon_version columns, for instance, are always empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace greenrl::report {

// What the trainer fills at the end of a run. Optional fields left unset are written empty.
struct EmissionsRow {
  // timestamp: when the run ended, UTC, "YYYY-MM-DDTHH:MM:SS" (see FormatEmissionsTimestamp;
  // CodeCarbon writes its local time in this form).
  std::string timestamp;
  std::string project_name;   // project_name: e.g. "greenrl"
  std::string run_id;         // run_id: e.g. the run directory's name
  std::string experiment_id;  // experiment_id: e.g. "ppo-CartPole-v1"
  double duration_s = 0.0;    // duration: the span the energy was metered over, s
  double emissions_kg = 0.0;  // emissions: kg CO2e (CarbonResult::kg_co2e)
  // emissions_rate is emissions_kg / duration_s (kg/s), computed by the writer (empty if the
  // duration is 0).
  std::optional<double> cpu_power_w;   // cpu_power: average CPU power, W (cpu_energy_j / duration)
  std::optional<double> gpu_power_w;   // gpu_power: average GPU power, W
  std::optional<double> ram_power_w;   // ram_power: average DRAM power, W
  // The energy columns are CodeCarbon's: the metered energy times the PUE (the facility's
  // energy; codecarbon/core/measure.py multiplies each reading by its PUE), so that emissions /
  // energy_consumed is the grid intensity; the power columns above are the hardware's.
  std::optional<double> cpu_energy_j;  // cpu_energy: J x PUE, written as kWh
  std::optional<double> gpu_energy_j;  // gpu_energy: J x PUE, written as kWh
  std::optional<double> ram_energy_j;  // ram_energy: J x PUE, written as kWh
  // energy_consumed: all energy the emissions were computed from, J x PUE, written as kWh (may
  // exceed cpu + gpu + ram when a domain fits none of them, e.g. psys).
  double energy_consumed_j = 0.0;
  std::string country_name;        // country_name: "France" (empty for the world average)
  std::string country_iso_code;    // country_iso_code: CodeCarbon uses ISO 3166-1 alpha-3 ("FRA")
  std::string region;              // region: sub-national region, e.g. "ile-de-france"
  std::string cloud_provider;      // cloud_provider: "aws", "gcp", "azure", or empty
  std::string cloud_region;        // cloud_region: e.g. "eu-west-3"
  std::string os;  // os: uname's "<sysname>-<release>-<machine>", e.g. "Linux-6.8.0-x86_64"
  std::string python_version;      // python_version: empty (greenrl is C++)
  std::string codecarbon_version;  // codecarbon_version: empty (not produced by CodeCarbon)
  std::optional<std::int64_t> cpu_count;    // cpu_count: logical CPUs
  std::string cpu_model;                    // cpu_model: e.g. "AMD EPYC 7763 64-Core Processor"
  std::optional<std::int64_t> gpu_count;    // gpu_count: GPUs used
  std::string gpu_model;                    // gpu_model: e.g. "NVIDIA H100 80GB HBM3"
  std::optional<double> longitude;          // longitude: degrees
  std::optional<double> latitude;           // latitude: degrees
  std::optional<double> ram_total_size_gb;  // ram_total_size: GB (CodeCarbon's unit)
  // tracking_mode: "machine" (device / package counters: the whole machine's draw) or "process"
  // (the estimator's per-process figure), CodeCarbon's two values.
  std::string tracking_mode;
  std::optional<bool> on_cloud;  // on_cloud: written "Y" / "N" as CodeCarbon does
  double pue = 1.0;              // pue: the PUE applied (CarbonResult::pue)
};

// Returns: the 32 column names, in CodeCarbon's order: timestamp, project_name, run_id,
//   experiment_id, duration, emissions, emissions_rate, cpu_power, gpu_power, ram_power,
//   cpu_energy, gpu_energy, ram_energy, energy_consumed, country_name, country_iso_code, region,
//   cloud_provider, cloud_region, os, python_version, codecarbon_version, cpu_count, cpu_model,
//   gpu_count, gpu_model, longitude, latitude, ram_total_size, tracking_mode, on_cloud, pue.
const std::vector<std::string>& EmissionsCsvColumns();

// Returns: the file's text: the header line and one row, each ending in "\n". Numbers are
//   written in the shortest form that reads back to the same double; text cells that hold a
//   comma, a quote or a line break are quoted (RFC 4180, quotes doubled).
// Errors: GREENRL_CHECK on a negative or non-finite duration_s, emissions_kg or
//   energy_consumed_j, or a non-finite optional number.
std::string FormatEmissionsCsv(const EmissionsRow& row);

// Writes FormatEmissionsCsv(row) to `path` atomically (greenrl::WriteFileAtomic), replacing any
// previous file (one run, one row).
// Errors: as FormatEmissionsCsv; std::runtime_error naming the path when it cannot be written.
void WriteEmissionsCsv(const std::string& path, const EmissionsRow& row);

// Returns: unix_s (Unix seconds) as UTC "YYYY-MM-DDTHH:MM:SS" (seconds truncated), the form of
//   CodeCarbon's timestamp column. E.g. 1795971600 -> "2026-11-29T17:00:00".
std::string FormatEmissionsTimestamp(double unix_s);

}  // namespace greenrl::report
