// emissions.csv: CodeCarbon's header exactly, a row's numbers exactly, read back by a CSV parser.
#include "greenrl/report/emissions.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"

namespace greenrl::report {
namespace {

// A small RFC 4180 reader: records of cells; quoted cells may hold commas, quotes ("") and line
// breaks.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string cell;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      record.push_back(cell);
      cell.clear();
      records.push_back(record);
      record.clear();
    } else {
      cell += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  EXPECT_TRUE(cell.empty() && record.empty()) << "last line lacks its newline";
  return records;
}

// A one-hour run on a machine in France: 0.5 kWh CPU, 1 kWh GPU, 0.1 kWh DRAM.
EmissionsRow MakeRow() {
  EmissionsRow row;
  row.timestamp = FormatEmissionsTimestamp(1795971600.75);
  row.project_name = "greenrl";
  row.run_id = "ppo-CartPole-v1-1";
  row.experiment_id = "ppo, CartPole \"v1\"";  // needs quoting
  row.duration_s = 3600.0;
  row.emissions_kg = 0.125;
  row.cpu_power_w = 500.0;  // 1.8e6 J / 3600 s
  row.gpu_power_w = 1000.0;
  row.ram_power_w = 100.0;
  row.cpu_energy_j = 1.8e6;
  row.gpu_energy_j = 3.6e6;
  row.ram_energy_j = 3.6e5;
  row.energy_consumed_j = 5.76e6;
  row.country_name = "France";
  row.country_iso_code = "FRA";
  row.os = "Linux-6.8.0-x86_64";
  row.cpu_count = 16;
  row.cpu_model = "AMD EPYC 7763 64-Core Processor";
  row.gpu_count = 1;
  row.gpu_model = "NVIDIA H200";
  row.ram_total_size_gb = 128.0;
  row.tracking_mode = "machine";
  row.on_cloud = false;
  row.pue = 1.5;
  return row;
}

TEST(EmissionsCsvTest, HeaderIsCodeCarbons) {
  const std::string text = FormatEmissionsCsv(MakeRow());
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header,
            "timestamp,project_name,run_id,experiment_id,duration,emissions,emissions_rate,"
            "cpu_power,gpu_power,ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed,"
            "country_name,country_iso_code,region,cloud_provider,cloud_region,os,python_version,"
            "codecarbon_version,cpu_count,cpu_model,gpu_count,gpu_model,longitude,latitude,"
            "ram_total_size,tracking_mode,on_cloud,pue");
  EXPECT_EQ(EmissionsCsvColumns().size(), 32u);
}

TEST(EmissionsCsvTest, RowNumbersExactAndReadBack) {
  const std::string path = ::testing::TempDir() + "/emissions.csv";
  WriteEmissionsCsv(path, MakeRow());
  const auto records = ParseCsv(ReadFile(path));
  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(records[0], EmissionsCsvColumns());
  ASSERT_EQ(records[1].size(), 32u);
  std::map<std::string, std::string> cell;
  for (std::size_t i = 0; i < 32; ++i) cell[records[0][i]] = records[1][i];

  EXPECT_EQ(cell["timestamp"], "2026-11-29T17:00:00");
  EXPECT_EQ(cell["project_name"], "greenrl");
  EXPECT_EQ(cell["run_id"], "ppo-CartPole-v1-1");
  EXPECT_EQ(cell["experiment_id"], "ppo, CartPole \"v1\"");
  EXPECT_EQ(cell["duration"], "3600");
  EXPECT_EQ(cell["emissions"], "0.125");
  EXPECT_EQ(std::stod(cell["emissions_rate"]), 0.125 / 3600.0);  // kg/s
  EXPECT_EQ(cell["emissions_rate"], "3.472222222222222e-05");
  EXPECT_EQ(cell["cpu_power"], "500");
  EXPECT_EQ(cell["gpu_power"], "1000");
  EXPECT_EQ(cell["ram_power"], "100");
  EXPECT_EQ(cell["cpu_energy"], "0.5");  // kWh
  EXPECT_EQ(cell["gpu_energy"], "1");
  EXPECT_EQ(cell["ram_energy"], "0.1");
  EXPECT_EQ(cell["energy_consumed"], "1.6");
  EXPECT_EQ(cell["country_name"], "France");
  EXPECT_EQ(cell["country_iso_code"], "FRA");
  EXPECT_EQ(cell["region"], "");
  EXPECT_EQ(cell["cloud_provider"], "");
  EXPECT_EQ(cell["os"], "Linux-6.8.0-x86_64");
  EXPECT_EQ(cell["python_version"], "");
  EXPECT_EQ(cell["codecarbon_version"], "");
  EXPECT_EQ(cell["cpu_count"], "16");
  EXPECT_EQ(cell["cpu_model"], "AMD EPYC 7763 64-Core Processor");
  EXPECT_EQ(cell["gpu_count"], "1");
  EXPECT_EQ(cell["gpu_model"], "NVIDIA H200");
  EXPECT_EQ(cell["longitude"], "");
  EXPECT_EQ(cell["latitude"], "");
  EXPECT_EQ(cell["ram_total_size"], "128");
  EXPECT_EQ(cell["tracking_mode"], "machine");
  EXPECT_EQ(cell["on_cloud"], "N");
  EXPECT_EQ(cell["pue"], "1.5");
}

TEST(EmissionsCsvTest, UnknownsEmptyAndZeroDuration) {
  EmissionsRow row;
  row.on_cloud = true;
  row.latitude = -33.5;
  const auto records = ParseCsv(FormatEmissionsCsv(row));
  ASSERT_EQ(records.size(), 2u);
  const std::vector<std::string>& cells = records[1];
  ASSERT_EQ(cells.size(), 32u);
  EXPECT_EQ(cells[4], "0");   // duration
  EXPECT_EQ(cells[5], "0");   // emissions
  EXPECT_EQ(cells[6], "");    // emissions_rate: no duration
  EXPECT_EQ(cells[7], "");    // cpu_power
  EXPECT_EQ(cells[10], "");   // cpu_energy
  EXPECT_EQ(cells[13], "0");  // energy_consumed
  EXPECT_EQ(cells[22], "");   // cpu_count
  EXPECT_EQ(cells[27], "-33.5");
  EXPECT_EQ(cells[30], "Y");
  EXPECT_EQ(cells[31], "1");
}

TEST(EmissionsCsvTest, TimestampsAndChecks) {
  EXPECT_EQ(FormatEmissionsTimestamp(0.0), "1970-01-01T00:00:00");
  EXPECT_EQ(FormatEmissionsTimestamp(951868800.0), "2000-03-01T00:00:00");
  EXPECT_EQ(FormatEmissionsTimestamp(1709251199.0), "2024-02-29T23:59:59");
  EXPECT_EQ(FormatEmissionsTimestamp(-1.0), "1969-12-31T23:59:59");
  EmissionsRow row;
  row.duration_s = -1.0;
  EXPECT_THROW(FormatEmissionsCsv(row), InternalError);
  row.duration_s = 1.0;
  row.gpu_energy_j = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(FormatEmissionsCsv(row), InternalError);
}

}  // namespace
}  // namespace greenrl::report
