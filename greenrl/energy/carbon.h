// carbon.h: converts energy to emissions, kg CO2e = kWh x PUE x intensity_g_per_kwh / 1000 (the
// formula of CodeCarbon, carbontracker and Green Algorithms; ../shared/REFERENCES.md), with a
// per-region grid carbon-intensity table and overrides for intensity and PUE.
//
// Intensity table: Our World in Data, "Carbon intensity of electricity generation" (g CO2e per
// kWh; data from Ember and the Energy Institute), year 2023 unless an entry says 2022 (Indonesia,
// Saudi Arabia). Values as listed in ../shared/REFERENCES.md.
//
// Time series: IntensitySeries (a CSV of timestamp,g_per_kwh, e.g. exported from Electricity Maps
// or a grid operator) and ComputeCarbonSeries, which integrates energy x intensity over the run
// instead of applying one annual figure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace greenrl::energy {

// World-average grid intensity used when no region is given, g CO2e per kWh: Ember's world
// average for 2023 (481; ../shared/REFERENCES.md). Chosen over CodeCarbon's default (475, IEA
// Global Energy & CO2 Status Report 2019) and Ember 2022 (436) because it is the same year and the
// same underlying data (Ember) as the per-region table.
inline constexpr double kWorldIntensityGPerKwh = 481.0;
// Human-readable source of kWorldIntensityGPerKwh, written to energy.json / emissions.csv.
inline constexpr const char* kWorldIntensitySource = "Ember world average, 2023";

// Largest grid intensity accepted, g CO2e per kWh (carbon.intensity_g_per_kwh, a series'
// values): about 2.8 times the table's highest national average (India, 713.4 in 2023;
// ../shared/REFERENCES.md), so a value above it is taken for a unit mistake (g per MWh, or a
// series in other units) and refused.
inline constexpr double kMaxIntensityGPerKwh = 2000.0;

// Default power usage effectiveness: 1.0 (facility energy = IT energy), CodeCarbon's default, so
// the figure covers exactly the energy the meters measured. Data centres are higher (Uptime
// Institute survey averages about 1.55-1.59 for 2020-2023; carbontracker fixes 1.58): set
// carbon.pue for them.
inline constexpr double kDefaultPue = 1.0;

// One row of the intensity table.
struct RegionIntensity {
  const char* code;            // ISO 3166-1 alpha-2, e.g. "FR"
  const char* alpha3;          // ISO 3166-1 alpha-3, e.g. "FRA" (CodeCarbon's country_iso_code)
  const char* name;            // English country name, e.g. "France"
  double intensity_g_per_kwh;  // g CO2e per kWh of electricity generated
  int year;                    // data year (2023, or 2022 where 2023 is missing)
};

// Returns: the table, sorted by code. Dataset: Our World in Data, "Carbon intensity of electricity
// generation" (Ember, Energy Institute).
const std::vector<RegionIntensity>& RegionIntensities();

// Finds a region by ISO 3166-1 alpha-2 or alpha-3 code (CodeCarbon's country_iso_code) or
// English name, case-insensitive ("fr", "FRA", "France"; "UK" is accepted for GB). Returns: the
// row, or null when unknown.
const RegionIntensity* FindRegion(const std::string& region);

// A region as the carbon figures read and record it (energy.json's carbon.region): "world" for
// the default (empty) and for "world" in any case, the table's alpha-2 code for any code or name
// of a country in it (FindRegion: "FRA", "France" and "fr" are "FR"), and `region` unchanged when
// it is unknown (ValidateCarbonOptions refuses it). Raises nothing.
std::string CanonicalRegion(const std::string& region);

// The `carbon.*` config fields.
struct CarbonOptions {
  // carbon.region: ISO 3166-1 alpha-2 or alpha-3 code or country name from RegionIntensities(), or
  // "world" (any case): the world average kWorldIntensityGPerKwh, chosen explicitly; empty: the
  // same average as the default (CarbonResult::intensity_is_default).
  std::string region;
  // carbon.intensity_g_per_kwh: overrides the table (g CO2e per kWh, from 0 to
  // kMaxIntensityGPerKwh).
  std::optional<double> intensity_g_per_kwh;
  // carbon.pue: power usage effectiveness (finite, >= 1); see kDefaultPue.
  double pue = kDefaultPue;
};

// Emissions of some energy and the figures behind them.
struct CarbonResult {
  double energy_kwh = 0.0;            // energy in, kWh (energy_j / 3.6e6)
  double pue = 1.0;                   // PUE applied
  double intensity_g_per_kwh = 0.0;   // grid intensity applied, g CO2e per kWh
  double kg_co2e = 0.0;               // energy_kwh x pue x intensity_g_per_kwh / 1000
  std::string region;                 // ISO code of the region, or "world" when none was given
  std::string intensity_source;       // dataset and year, or the override's config key
  bool intensity_is_default = false;  // true when the world average was used because nothing
                                      // was given (empty region, no override); false for an
                                      // explicit "world"
};

// Checks the options; call before training starts.
// Errors: greenrl::ConfigError naming "carbon.region" (unknown region; lists the accepted codes),
//   "carbon.intensity_g_per_kwh" (negative, above kMaxIntensityGPerKwh or not finite) or
//   "carbon.pue" (< 1 or not finite).
void ValidateCarbonOptions(const CarbonOptions& options);

// Args: energy_j: energy, J (finite, >= 0); options: region / overrides.
// Returns: kg CO2e = kWh x PUE x intensity / 1000. An intensity override wins over the region's
//   table value (the region, if given, is still validated and reported).
// Errors: as ValidateCarbonOptions; GREENRL_CHECK on a negative or non-finite energy_j.
CarbonResult ComputeCarbon(double energy_j, const CarbonOptions& options);

// ---- Carbon intensity time series ----

// Parses a timestamp as IntensitySeries accepts it:
// - Unix seconds: digits with an optional fraction ("1795971600", "1795971600.5");
// - ISO 8601 in UTC: "YYYY-MM-DDTHH:MM:SS" with an optional fraction of a second (".250") and a
//   required zone "Z" or "+00:00" ("2026-11-29T17:00:00Z"); a space may replace the 'T'. Other
//   offsets and zone-less times are refused, so no local time is ever taken for UTC. Leap seconds
//   (":60") are refused.
// Returns: Unix seconds (UTC), or nullopt when `text` is neither form or names no real date.
std::optional<double> ParseTimestampUnixS(const std::string& text);

// One step of an intensity series.
struct IntensityPoint {
  double unix_s = 0.0;               // when this value starts to apply, Unix seconds (UTC)
  double intensity_g_per_kwh = 0.0;  // g CO2e per kWh from unix_s until the next point
};

// Grid carbon intensity over time, piecewise constant (a step function): point i's value applies
// on [points[i].unix_s, points[i + 1].unix_s); the last point's value applies from its timestamp
// on, and the first point's value also applies before its timestamp (so a series that starts late
// still covers the run; ComputeCarbonSeries says how much energy that concerned). This is how
// hourly grid data is published: each row is the average over the hour starting at its timestamp.
// Immutable after construction; safe to share across threads.
class IntensitySeries {
 public:
  // Args: points: at least one, timestamps finite and strictly increasing, intensities from 0 to
  //   kMaxIntensityGPerKwh; source: where the data came from (a path, a dataset name), for reports
  //   and errors.
  // Errors: greenrl::ConfigError naming `source` and the offending point's index.
  IntensitySeries(std::vector<IntensityPoint> points, std::string source);

  // Reads a CSV file. Format: one `timestamp,g_per_kwh` row per line (timestamps as
  //   ParseTimestampUnixS accepts, strictly increasing; intensity a decimal from 0 to
  //   kMaxIntensityGPerKwh, g CO2e per kWh); an optional header line `timestamp,g_per_kwh`
  //   (case-insensitive) before the first row; blank lines and lines starting with '#' ignored;
  //   spaces around fields and CRLF line ends accepted.
  // Errors: greenrl::ConfigError naming the file (and the line, 1-based, for bad content): file
  //   unreadable, no data row, wrong number of fields, bad timestamp or intensity, timestamps not
  //   increasing.
  static IntensitySeries LoadCsv(const std::string& path);

  // As LoadCsv, from the file's text; `source` names it in errors (the path, for LoadCsv).
  static IntensitySeries ParseCsv(const std::string& text, const std::string& source);

  // Returns: the intensity in force at `unix_s`, g CO2e per kWh (step lookup, see above).
  double IntensityAtGPerKwh(double unix_s) const;

  // Returns: the points, in time order.
  const std::vector<IntensityPoint>& points() const { return points_; }
  // Returns: the source given at construction (the path, for LoadCsv).
  const std::string& source() const { return source_; }

 private:
  std::vector<IntensityPoint> points_;
  std::string source_;
};

// Energy used over one span of wall-clock time (e.g. one iteration, or one sampler period).
struct EnergyInterval {
  double start_unix_s = 0.0;  // Unix seconds (UTC)
  double end_unix_s = 0.0;    // Unix seconds (UTC), >= start_unix_s
  double energy_j = 0.0;      // energy used in [start_unix_s, end_unix_s], J (finite, >= 0)
};

// The running sums of a SeriesCarbon: what a resume checkpoint carries so that a resumed run
// prices its earlier segments' energy at the times it was used.
struct SeriesCarbonState {
  double energy_j = 0.0;         // energy added so far, J
  double kwh_x_g_per_kwh = 0.0;  // sum over pieces of kWh x intensity, g CO2e before the PUE
  double before_series_j = 0.0;  // of energy_j, J used before the series' first timestamp
  // Of energy_j, J used after the series' last step (one step of its last two points' spacing
  // past its last timestamp): priced at its last value, which may be stale.
  double after_series_j = 0.0;
  double first_unix_s = 0.0;  // start of the first interval added, Unix s (0 before any)
  bool any = false;           // whether any interval was added
};

// Integrates energy x intensity as a run goes, one interval at a time (each interval's energy
// spread evenly over its time span, split where the series' value changes), so that a figure is
// available at any moment and across resumed segments. ComputeCarbonSeries is one of these fed
// every interval at once.
class SeriesCarbon {
 public:
  // Args: series: outlives this object; pue: as carbon.pue (>= 1); state: the sums so far (a
  //   resume checkpoint's), empty for a new run.
  // Errors: greenrl::ConfigError naming "carbon.pue" (< 1 or not finite).
  SeriesCarbon(const IntensitySeries& series, double pue, SeriesCarbonState state = {});

  // Adds `interval`'s energy. Errors: GREENRL_CHECK on non-finite times, end < start, or a
  // negative or non-finite energy_j.
  void Add(const EnergyInterval& interval);

  // Returns: the sums so far, for a checkpoint.
  const SeriesCarbonState& state() const { return state_; }

  // Returns: as ComputeCarbonSeries for the intervals added so far (the state's, for a resumed
  //   run), the notes on energy before the series' first timestamp or after its last step
  //   included.
  CarbonResult Result() const;

 private:
  const IntensitySeries* series_;
  double pue_;
  SeriesCarbonState state_;
};

// Integrates energy x intensity over a run: each interval's energy is assumed spread evenly over
// its time span, so an interval that spans an intensity change is split in proportion to the time
// on either side; a zero-length interval takes the intensity at its instant. Intervals may be in
// any order and need not be contiguous.
// Args: intervals: the run's energy over time; series: intensities; pue: as carbon.pue (>= 1).
// Returns: energy_kwh (total), pue, kg_co2e = sum over pieces of kWh x pue x intensity / 1000,
//   intensity_g_per_kwh = the energy-weighted mean intensity (the series' value at the first
//   interval's start when there is no energy), region "series", intensity_source naming the
//   series' source (and, when some energy falls before the series' first timestamp or more than
//   one step after its last, how much), intensity_is_default false.
// Errors: greenrl::ConfigError naming "carbon.pue" (< 1 or not finite); GREENRL_CHECK on an
//   interval with non-finite times, end < start, or a negative or non-finite energy_j.
CarbonResult ComputeCarbonSeries(const std::vector<EnergyInterval>& intervals,
                                 const IntensitySeries& series, double pue);

}  // namespace greenrl::energy
