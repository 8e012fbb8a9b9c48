// carbon.h: converts energy to emissions, kg CO2e = kWh x PUE x intensity_g_per_kwh / 1000 (the
// formula of CodeCarbon, carbontracker and Green Algorithms; ../shared/REFERENCES.md), with a
// per-region grid carbon-intensity table and overrides for intensity and PUE.
//
// Intensity table: Our World in Data, "Carbon intensity of electricity generation" (g CO2e per
// kWh; data from Ember and the Energy Institute), year 2023 unless an entry says 2022 (Indonesia,
// Saudi Arabia). Values as listed in ../shared/REFERENCES.md.
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

// Default power usage effectiveness: 1.0 (facility energy = IT energy), CodeCarbon's default, so
// the figure covers exactly the energy the meters measured. Data centres are higher (Uptime
// Institute survey averages about 1.55-1.59 for 2020-2023; carbontracker fixes 1.58): set
// carbon.pue for them.
inline constexpr double kDefaultPue = 1.0;

// One row of the intensity table.
struct RegionIntensity {
  const char* code;            // ISO 3166-1 alpha-2, e.g. "FR"
  const char* name;            // English country name, e.g. "France"
  double intensity_g_per_kwh;  // g CO2e per kWh of electricity generated
  int year;                    // data year (2023, or 2022 where 2023 is missing)
};

// Returns: the table, sorted by code. Dataset: Our World in Data, "Carbon intensity of electricity
// generation" (Ember, Energy Institute).
const std::vector<RegionIntensity>& RegionIntensities();

// Finds a region by ISO code or English name, case-insensitive ("fr", "France"; "UK" is accepted
// for GB). Returns: the row, or null when unknown.
const RegionIntensity* FindRegion(const std::string& region);

// The `carbon.*` config fields.
struct CarbonOptions {
  // carbon.region: ISO 3166-1 alpha-2 code or country name from RegionIntensities();
  // empty = the world average kWorldIntensityGPerKwh.
  std::string region;
  // carbon.intensity_g_per_kwh: overrides the table (g CO2e per kWh, finite, >= 0).
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
  bool intensity_is_default = false;  // true when the world average was used (no region, no
                                      // override)
};

// Checks the options; call before training starts.
// Errors: greenrl::ConfigError naming "carbon.region" (unknown region; lists the accepted codes),
//   "carbon.intensity_g_per_kwh" (negative or not finite) or "carbon.pue" (< 1 or not finite).
void ValidateCarbonOptions(const CarbonOptions& options);

// Args: energy_j: energy, J (finite, >= 0); options: region / overrides.
// Returns: kg CO2e = kWh x PUE x intensity / 1000. An intensity override wins over the region's
//   table value (the region, if given, is still validated and reported).
// Errors: as ValidateCarbonOptions; GREENRL_CHECK on a negative or non-finite energy_j.
CarbonResult ComputeCarbon(double energy_j, const CarbonOptions& options);

}  // namespace greenrl::energy
