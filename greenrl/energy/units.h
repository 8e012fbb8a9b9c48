// units.h: the energy unit conversions every module shares (SI: 1 W = 1 J/s, so 1 Wh = 3600 J
// and 1 kWh = 3.6e6 J; BIPM, The International System of Units, 9th edition, 2019, table 8,
// which lists the hour as 3600 s). Torch-free; header only.
#pragma once

namespace greenrl::energy {

// Joules in one watt-hour (energy_j / kJoulesPerWh = energy_wh): 3600 s x 1 W.
inline constexpr double kJoulesPerWh = 3600.0;

// Joules in one kilowatt-hour (energy_j / kJoulesPerKwh = energy_kwh), the unit of CodeCarbon's
// `energy_consumed` and of grid carbon intensities (g CO2e per kWh): 3.6e6.
inline constexpr double kJoulesPerKwh = 1000.0 * kJoulesPerWh;

}  // namespace greenrl::energy
