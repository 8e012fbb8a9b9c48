// carbon.cc: intensity table and the kg CO2e formula (see carbon.h).
#include "greenrl/energy/carbon.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <utility>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/energy/units.h"

namespace greenrl::energy {
namespace {

std::string ToUpper(const std::string& text) {
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

// carbon.region "world", in any case: the world average, chosen explicitly.
bool IsWorld(const std::string& region) { return ToUpper(region) == "WORLD"; }

std::string AcceptedRegions() {
  std::string accepted = "one of: ";
  bool first = true;
  for (const RegionIntensity& row : RegionIntensities()) {
    if (!first) accepted += ", ";
    accepted += row.code;
    first = false;
  }
  return accepted +
         " (ISO 3166-1 alpha-2 code, its alpha-3 code as emissions.csv's country_iso_code gives "
         "it, or English country name, case-insensitive), world (the world average), or empty "
         "(the world average as a default)";
}

std::string Trim(const std::string& text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parses exactly `count` digits at text[pos]; advances pos. Returns false when they are not there.
bool ReadDigits(const std::string& text, std::size_t& pos, int count, int& value) {
  value = 0;
  for (int i = 0; i < count; ++i, ++pos) {
    if (pos >= text.size() || !IsDigit(text[pos])) return false;
    value = value * 10 + (text[pos] - '0');
  }
  return true;
}

// Reads an optional ".ddd" fraction at text[pos]; advances pos. Returns false on a '.' without
// digits.
bool ReadFraction(const std::string& text, std::size_t& pos, double& fraction) {
  fraction = 0.0;
  if (pos >= text.size() || text[pos] != '.') return true;
  const std::size_t start = pos++;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  if (pos == start + 1) return false;
  fraction = std::strtod(text.substr(start, pos - start).c_str(), nullptr);
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-Compatible Low-Level
// Date Algorithms", days_from_civil).
std::int64_t DaysFromCivil(std::int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const std::int64_t year_of_era = year - era * 400;
  const std::int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const std::int64_t day_of_era =
      year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Parses a whole string as a finite decimal number (strtod syntax, nothing left over).
std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Splits a CSV line on commas (the series format has no quoting) and trims each field.
std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(Trim(line.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::string Lower(const std::string& text) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// Index of the point of a step series in force at unix_s: the last point at or before it, or 0
// before the first (IntensitySeries' lookup rule).
std::size_t StepIndex(const std::vector<IntensityPoint>& points, double unix_s) {
  const auto after =
      std::upper_bound(points.begin(), points.end(), unix_s,
                       [](double t, const IntensityPoint& point) { return t < point.unix_s; });
  return after == points.begin() ? 0 : static_cast<std::size_t>(after - points.begin()) - 1;
}

// The accepted intensities, for errors.
constexpr const char* kIntensityRange =
    "g CO2e per kWh from 0 to 2000 (the table's highest national average, India's, is 713.4; a "
    "larger value is likely another unit, such as g per MWh)";

constexpr const char* kTimestampForms =
    "Unix seconds (1795971600; at most 253402300799, the end of year 9999: a larger value is "
    "likely milliseconds) or ISO 8601 UTC (2026-11-29T17:00:00Z, or +00:00)";
// 9999-12-31T23:59:59Z in Unix seconds, the last instant ISO 8601's four-digit years name.
constexpr double kLastUnixS = 253402300799.0;

}  // namespace

const std::vector<RegionIntensity>& RegionIntensities() {
  // Our World in Data, "Carbon intensity of electricity generation", g CO2e/kWh (Ember, Energy
  // Institute); 2023 unless marked 2022. Copied from ../shared/REFERENCES.md. Alpha-3 codes:
  // ISO 3166-1.
  static const std::vector<RegionIntensity> table = {
      {"AU", "AUS", "Australia", 548.7, 2023},
      {"BR", "BRA", "Brazil", 98.3, 2023},
      {"CA", "CAN", "Canada", 170.0, 2023},
      {"CH", "CHE", "Switzerland", 34.8, 2023},
      {"CN", "CHN", "China", 582.3, 2023},
      {"DE", "DEU", "Germany", 381.0, 2023},
      {"ES", "ESP", "Spain", 174.1, 2023},
      {"FR", "FRA", "France", 56.0, 2023},
      {"GB", "GBR", "United Kingdom", 237.6, 2023},
      {"ID", "IDN", "Indonesia", 675.9, 2022},
      {"IE", "IRL", "Ireland", 290.8, 2023},
      {"IN", "IND", "India", 713.4, 2023},
      {"IT", "ITA", "Italy", 330.7, 2023},
      {"JP", "JPN", "Japan", 485.4, 2023},
      {"KR", "KOR", "South Korea", 430.6, 2023},
      {"MX", "MEX", "Mexico", 507.2, 2023},
      {"NL", "NLD", "Netherlands", 267.6, 2023},
      {"NO", "NOR", "Norway", 30.1, 2023},
      {"PL", "POL", "Poland", 661.9, 2023},
      {"RU", "RUS", "Russia", 441.0, 2023},
      {"SA", "SAU", "Saudi Arabia", 706.8, 2022},
      {"SE", "SWE", "Sweden", 40.7, 2023},
      {"SG", "SGP", "Singapore", 470.8, 2023},
      {"TW", "TWN", "Taiwan", 642.4, 2023},
      {"US", "USA", "United States", 369.5, 2023},
      {"ZA", "ZAF", "South Africa", 707.7, 2023},
  };
  return table;
}

const RegionIntensity* FindRegion(const std::string& region) {
  std::string wanted = ToUpper(region);
  if (wanted == "UK") wanted = "GB";
  for (const RegionIntensity& row : RegionIntensities()) {
    if (wanted == row.code || wanted == row.alpha3 || wanted == ToUpper(row.name)) return &row;
  }
  return nullptr;
}

std::string CanonicalRegion(const std::string& region) {
  if (region.empty() || IsWorld(region)) return "world";
  const RegionIntensity* row = FindRegion(region);
  return row != nullptr ? row->code : region;
}

void ValidateCarbonOptions(const CarbonOptions& options) {
  if (!options.region.empty() && !IsWorld(options.region) &&
      FindRegion(options.region) == nullptr) {
    throw ConfigError("carbon.region", options.region, AcceptedRegions());
  }
  if (options.intensity_g_per_kwh.has_value() &&
      (!std::isfinite(*options.intensity_g_per_kwh) || *options.intensity_g_per_kwh < 0.0 ||
       *options.intensity_g_per_kwh > kMaxIntensityGPerKwh)) {
    throw ConfigError("carbon.intensity_g_per_kwh", fmt::format("{}", *options.intensity_g_per_kwh),
                      std::string("a grid intensity, ") + kIntensityRange);
  }
  if (!std::isfinite(options.pue) || options.pue < 1.0) {
    throw ConfigError("carbon.pue", fmt::format("{}", options.pue),
                      "a finite power usage effectiveness >= 1 (default 1.0)");
  }
}

CarbonResult ComputeCarbon(double energy_j, const CarbonOptions& options) {
  ValidateCarbonOptions(options);
  GREENRL_CHECK(std::isfinite(energy_j) && energy_j >= 0.0,
                fmt::format("energy_j must be finite and >= 0, got {}", energy_j));
  CarbonResult result;
  result.energy_kwh = energy_j / kJoulesPerKwh;
  result.pue = options.pue;
  const bool world = options.region.empty() || IsWorld(options.region);
  const RegionIntensity* row = world ? nullptr : FindRegion(options.region);
  result.region = CanonicalRegion(options.region);
  if (options.intensity_g_per_kwh.has_value()) {
    result.intensity_g_per_kwh = *options.intensity_g_per_kwh;
    result.intensity_source = "override (carbon.intensity_g_per_kwh)";
  } else if (row != nullptr) {
    result.intensity_g_per_kwh = row->intensity_g_per_kwh;
    result.intensity_source = fmt::format(
        "Our World in Data, Carbon intensity of electricity generation (Ember, Energy "
        "Institute), {}, {}",
        row->name, row->year);
  } else {
    result.intensity_g_per_kwh = kWorldIntensityGPerKwh;
    result.intensity_source = kWorldIntensitySource;
    result.intensity_is_default = options.region.empty();
  }
  result.kg_co2e = result.energy_kwh * result.pue * result.intensity_g_per_kwh / 1000.0;
  return result;
}

std::optional<double> ParseTimestampUnixS(const std::string& raw) {
  const std::string text = Trim(raw);
  if (text.empty()) return std::nullopt;
  // Unix seconds: digits and an optional fraction.
  if (std::all_of(text.begin(), text.end(), [](char c) { return IsDigit(c) || c == '.'; })) {
    std::size_t pos = 0;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    double fraction = 0.0;
    if (pos == 0 || !ReadFraction(text, pos, fraction) || pos != text.size()) return std::nullopt;
    const std::optional<double> unix_s = ParseNumber(text);
    if (unix_s && *unix_s > kLastUnixS) return std::nullopt;  // milliseconds, most likely
    return unix_s;
  }
  // ISO 8601, UTC.
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  double fraction = 0.0;
  const auto expect = [&](char c) { return pos < text.size() && text[pos++] == c; };
  if (!ReadDigits(text, pos, 4, year) || !expect('-') || !ReadDigits(text, pos, 2, month) ||
      !expect('-') || !ReadDigits(text, pos, 2, day)) {
    return std::nullopt;
  }
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!ReadDigits(text, pos, 2, hour) || !expect(':') || !ReadDigits(text, pos, 2, minute) ||
      !expect(':') || !ReadDigits(text, pos, 2, second) || !ReadFraction(text, pos, fraction)) {
    return std::nullopt;
  }
  const std::string zone = text.substr(pos);
  if (zone != "Z" && zone != "+00:00") return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  const std::int64_t days = DaysFromCivil(year, month, day);
  return static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second) + fraction;
}

IntensitySeries::IntensitySeries(std::vector<IntensityPoint> points, std::string source)
    : points_(std::move(points)), source_(std::move(source)) {
  if (points_.empty()) {
    throw ConfigError(
        fmt::format("intensity series {}: no points; expected at least one "
                    "timestamp,g_per_kwh row",
                    source_));
  }
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const IntensityPoint& point = points_[i];
    if (!std::isfinite(point.unix_s)) {
      throw ConfigError(fmt::format("intensity series {}, point {}: timestamp {} is not finite",
                                    source_, i, point.unix_s));
    }
    if (!std::isfinite(point.intensity_g_per_kwh) || point.intensity_g_per_kwh < 0.0 ||
        point.intensity_g_per_kwh > kMaxIntensityGPerKwh) {
      throw ConfigError(
          fmt::format("intensity series {}, point {}: intensity {} g/kWh; expected {}", source_, i,
                      point.intensity_g_per_kwh, kIntensityRange));
    }
    if (i > 0 && point.unix_s <= points_[i - 1].unix_s) {
      throw ConfigError(fmt::format(
          "intensity series {}, point {}: timestamp {} does not come after the previous one ({}); "
          "timestamps must increase strictly",
          source_, i, point.unix_s, points_[i - 1].unix_s));
    }
  }
}

IntensitySeries IntensitySeries::LoadCsv(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {  // an ifstream would read it as empty
    throw ConfigError(
        fmt::format("intensity series {}: cannot read the file (it is a directory)", path));
  }
  std::string text;
  try {
    text = ReadFile(path);
  } catch (const std::runtime_error& error) {
    throw ConfigError(
        fmt::format("intensity series {}: cannot read the file ({})", path, error.what()));
  }
  return ParseCsv(text, path);
}

IntensitySeries IntensitySeries::ParseCsv(const std::string& text, const std::string& source) {
  std::vector<IntensityPoint> points;
  bool header_allowed = true;
  int line_number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t newline = text.find('\n', start);
    if (newline == std::string::npos) newline = text.size();
    const std::string line = Trim(text.substr(start, newline - start));  // Trim drops the '\r'
    start = newline + 1;
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    const auto fail = [&](const std::string& what) {
      return ConfigError(
          fmt::format("intensity series {}, line {}: {}", source, line_number, what));
    };
    const std::vector<std::string> fields = SplitFields(line);
    if (header_allowed && fields.size() == 2 && Lower(fields[0]) == "timestamp" &&
        Lower(fields[1]) == "g_per_kwh") {
      header_allowed = false;
      continue;
    }
    const bool first_row = header_allowed;
    header_allowed = false;
    if (fields.size() != 2) {
      throw fail(
          fmt::format("'{}' has {} fields; expected timestamp,g_per_kwh", line, fields.size()));
    }
    const std::optional<double> unix_s = ParseTimestampUnixS(fields[0]);
    if (!unix_s.has_value()) {
      // A first row of two words is another header ("time,intensity"): name the one it takes.
      if (first_row && !ParseNumber(fields[1]).has_value()) {
        throw fail(
            fmt::format("'{}' reads as a header; the header, which may be left out, is "
                        "timestamp,g_per_kwh",
                        line));
      }
      throw fail(fmt::format("bad timestamp '{}'; expected {}", fields[0], kTimestampForms));
    }
    const std::optional<double> intensity = ParseNumber(fields[1]);
    if (!intensity.has_value() || *intensity < 0.0 || *intensity > kMaxIntensityGPerKwh) {
      throw fail(fmt::format("bad intensity '{}'; expected {}", fields[1], kIntensityRange));
    }
    if (!points.empty() && *unix_s <= points.back().unix_s) {
      throw fail(
          fmt::format("timestamp '{}' does not come after the previous row's; timestamps "
                      "must increase strictly",
                      fields[0]));
    }
    points.push_back({*unix_s, *intensity});
  }
  if (points.empty()) {
    throw ConfigError(fmt::format(
        "intensity series {}: no data rows; expected lines of timestamp,g_per_kwh", source));
  }
  return IntensitySeries(std::move(points), source);
}

double IntensitySeries::IntensityAtGPerKwh(double unix_s) const {
  return points_[StepIndex(points_, unix_s)].intensity_g_per_kwh;
}

SeriesCarbon::SeriesCarbon(const IntensitySeries& series, double pue, SeriesCarbonState state)
    : series_(&series), pue_(pue), state_(state) {
  CarbonOptions pue_only;
  pue_only.pue = pue;
  ValidateCarbonOptions(pue_only);
}

void SeriesCarbon::Add(const EnergyInterval& interval) {
  GREENRL_CHECK(std::isfinite(interval.start_unix_s) && std::isfinite(interval.end_unix_s) &&
                    interval.end_unix_s >= interval.start_unix_s,
                fmt::format("bad interval [{}, {}]", interval.start_unix_s, interval.end_unix_s));
  GREENRL_CHECK(std::isfinite(interval.energy_j) && interval.energy_j >= 0.0,
                fmt::format("energy_j must be finite and >= 0, got {}", interval.energy_j));
  const std::vector<IntensityPoint>& points = series_->points();
  // Past one step of the last two points' spacing after the last timestamp, the last value is
  // stale (a series of one point is a constant, never stale).
  const double stale_after_s = points.size() > 1
                                   ? 2.0 * points.back().unix_s - points[points.size() - 2].unix_s
                                   : std::numeric_limits<double>::infinity();
  if (!state_.any) {
    state_.any = true;
    state_.first_unix_s = interval.start_unix_s;
  }
  state_.energy_j += interval.energy_j;
  const double duration_s = interval.end_unix_s - interval.start_unix_s;
  // The energy of [a, b) within the interval, spread evenly over its time span.
  const auto share_j = [&](double a, double b) {
    if (duration_s == 0.0)
      return a <= interval.start_unix_s && interval.start_unix_s < b ? interval.energy_j : 0.0;
    const double lo = std::max(a, interval.start_unix_s), hi = std::min(b, interval.end_unix_s);
    return hi > lo ? interval.energy_j * ((hi - lo) / duration_s) : 0.0;
  };
  const double inf = std::numeric_limits<double>::infinity();
  state_.before_series_j += share_j(-inf, points.front().unix_s);
  state_.after_series_j += share_j(stale_after_s, inf);
  if (duration_s == 0.0) {
    state_.kwh_x_g_per_kwh +=
        interval.energy_j / kJoulesPerKwh * series_->IntensityAtGPerKwh(interval.start_unix_s);
    return;
  }
  // Walk the steps of the series across [start, end).
  double piece_start_s = interval.start_unix_s;
  while (piece_start_s < interval.end_unix_s) {
    const std::size_t index = StepIndex(points, piece_start_s);
    // The value of `index` holds until the next point (the first point's also before it).
    double change_s = index + 1 < points.size() ? points[index + 1].unix_s : inf;
    if (piece_start_s < points.front().unix_s) change_s = std::min(change_s, points[0].unix_s);
    const double piece_end_s = std::min(change_s, interval.end_unix_s);
    const double piece_j = interval.energy_j * ((piece_end_s - piece_start_s) / duration_s);
    state_.kwh_x_g_per_kwh += piece_j / kJoulesPerKwh * points[index].intensity_g_per_kwh;
    piece_start_s = piece_end_s;
  }
}

CarbonResult SeriesCarbon::Result() const {
  const std::vector<IntensityPoint>& points = series_->points();
  CarbonResult result;
  result.energy_kwh = state_.energy_j / kJoulesPerKwh;
  result.pue = pue_;
  result.intensity_g_per_kwh =
      result.energy_kwh > 0.0
          ? state_.kwh_x_g_per_kwh / result.energy_kwh
          : series_->IntensityAtGPerKwh(state_.any ? state_.first_unix_s : points.front().unix_s);
  result.kg_co2e = state_.kwh_x_g_per_kwh * pue_ / 1000.0;
  result.region = "series";
  result.intensity_source = fmt::format("time series {} ({} points, energy-weighted mean)",
                                        series_->source(), points.size());
  if (state_.before_series_j > 0.0) {
    result.intensity_source += fmt::format(
        "; {:.2f} J before its first timestamp, at its first value", state_.before_series_j);
  }
  if (state_.after_series_j > 0.0) {
    result.intensity_source += fmt::format(
        "; {:.2f} J more than one step ({:g} s) after its last timestamp, at its last value (the "
        "series may be out of date)",
        state_.after_series_j, points.back().unix_s - points[points.size() - 2].unix_s);
  }
  result.intensity_is_default = false;
  return result;
}

CarbonResult ComputeCarbonSeries(const std::vector<EnergyInterval>& intervals,
                                 const IntensitySeries& series, double pue) {
  SeriesCarbon carbon(series, pue);
  for (const EnergyInterval& interval : intervals) carbon.Add(interval);
  return carbon.Result();
}

}  // namespace greenrl::energy
