// emissions.cc: CodeCarbon-compatible emissions.csv (see emissions.h).
#include "greenrl/report/emissions.h"

#include <fmt/format.h>

#include <cmath>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/energy/units.h"

namespace greenrl::report {
namespace {

using energy::kJoulesPerKwh;

// Shortest text that reads back to the same double ("0.125", "1e-05").
std::string Number(double value) { return fmt::format("{}", value); }

std::string Required(const char* name, double value) {
  GREENRL_CHECK(std::isfinite(value) && value >= 0.0,
                fmt::format("emissions.csv {} must be finite and >= 0, got {}", name, value));
  return Number(value);
}

// An optional number divided by `divisor` (kJoulesPerKwh for J -> kWh), or "" when unset.
std::string Optional(const char* name, const std::optional<double>& value, double divisor = 1.0) {
  if (!value.has_value()) return "";
  GREENRL_CHECK(std::isfinite(*value),
                fmt::format("emissions.csv {} must be finite, got {}", name, *value));
  return Number(*value / divisor);
}

std::string OptionalInt(const std::optional<std::int64_t>& value) {
  return value.has_value() ? fmt::format("{}", *value) : "";
}

// RFC 4180: quote a cell holding a comma, a quote or a line break; double its quotes.
std::string Text(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string JoinLine(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += cells[i];
  }
  return line + "\n";
}

// Proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms", civil_from_days).
void CivilFromDays(std::int64_t days, std::int64_t& year, int& month, int& day) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t day_of_era = days - era * 146097;
  const std::int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const std::int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const std::int64_t month_index = (5 * day_of_year + 2) / 153;
  day = static_cast<int>(day_of_year - (153 * month_index + 2) / 5 + 1);
  month = static_cast<int>(month_index < 10 ? month_index + 3 : month_index - 9);
  year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
}

}  // namespace

const std::vector<std::string>& EmissionsCsvColumns() {
  // CodeCarbon's emissions.csv columns, in its order (../shared/REFERENCES.md).
  static const std::vector<std::string> columns = {
      "timestamp",      "project_name",       "run_id",         "experiment_id",
      "duration",       "emissions",          "emissions_rate", "cpu_power",
      "gpu_power",      "ram_power",          "cpu_energy",     "gpu_energy",
      "ram_energy",     "energy_consumed",    "country_name",   "country_iso_code",
      "region",         "cloud_provider",     "cloud_region",   "os",
      "python_version", "codecarbon_version", "cpu_count",      "cpu_model",
      "gpu_count",      "gpu_model",          "longitude",      "latitude",
      "ram_total_size", "tracking_mode",      "on_cloud",       "pue",
  };
  return columns;
}

std::string FormatEmissionsCsv(const EmissionsRow& row) {
  const std::string duration = Required("duration", row.duration_s);
  const std::string emissions = Required("emissions", row.emissions_kg);
  const std::string energy_consumed = Required("energy_consumed", row.energy_consumed_j);
  GREENRL_CHECK(std::isfinite(row.pue),
                fmt::format("emissions.csv pue must be finite, got {}", row.pue));
  const std::vector<std::string> cells = {
      Text(row.timestamp),
      Text(row.project_name),
      Text(row.run_id),
      Text(row.experiment_id),
      duration,
      emissions,
      row.duration_s > 0.0 ? Number(row.emissions_kg / row.duration_s) : "",
      Optional("cpu_power", row.cpu_power_w),
      Optional("gpu_power", row.gpu_power_w),
      Optional("ram_power", row.ram_power_w),
      Optional("cpu_energy", row.cpu_energy_j, kJoulesPerKwh),
      Optional("gpu_energy", row.gpu_energy_j, kJoulesPerKwh),
      Optional("ram_energy", row.ram_energy_j, kJoulesPerKwh),
      Number(row.energy_consumed_j / kJoulesPerKwh),
      Text(row.country_name),
      Text(row.country_iso_code),
      Text(row.region),
      Text(row.cloud_provider),
      Text(row.cloud_region),
      Text(row.os),
      Text(row.python_version),
      Text(row.codecarbon_version),
      OptionalInt(row.cpu_count),
      Text(row.cpu_model),
      OptionalInt(row.gpu_count),
      Text(row.gpu_model),
      Optional("longitude", row.longitude),
      Optional("latitude", row.latitude),
      Optional("ram_total_size", row.ram_total_size_gb),
      Text(row.tracking_mode),
      row.on_cloud.has_value() ? (*row.on_cloud ? "Y" : "N") : "",
      Number(row.pue),
  };
  GREENRL_CHECK(cells.size() == EmissionsCsvColumns().size(), "one cell per column");
  return JoinLine(EmissionsCsvColumns()) + JoinLine(cells);
}

void WriteEmissionsCsv(const std::string& path, const EmissionsRow& row) {
  WriteFileAtomic(path, FormatEmissionsCsv(row));
}

std::string FormatEmissionsTimestamp(double unix_s) {
  GREENRL_CHECK(std::isfinite(unix_s), fmt::format("unix_s must be finite, got {}", unix_s));
  const auto seconds = static_cast<std::int64_t>(std::floor(unix_s));
  std::int64_t days = seconds / 86400;
  std::int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    days -= 1;
  }
  std::int64_t year = 0;
  int month = 0;
  int day = 0;
  CivilFromDays(days, year, month, day);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}", year, month, day,
                     second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
}

}  // namespace greenrl::report
