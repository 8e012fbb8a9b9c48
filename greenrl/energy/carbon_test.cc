#include "greenrl/energy/carbon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

using ::testing::HasSubstr;

constexpr double kJoulesPerKwh = 3.6e6;

TEST(CarbonTest, FormulaWithOverrides) {
  CarbonOptions options;
  options.intensity_g_per_kwh = 400.0;
  options.pue = 1.5;
  // 2 kWh x 1.5 x 400 g/kWh / 1000 = 1.2 kg.
  const CarbonResult result = ComputeCarbon(2.0 * kJoulesPerKwh, options);
  EXPECT_EQ(result.energy_kwh, 2.0);
  EXPECT_EQ(result.pue, 1.5);
  EXPECT_EQ(result.intensity_g_per_kwh, 400.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 1.2);
  EXPECT_EQ(result.region, "world");
  EXPECT_EQ(result.intensity_source, "override (carbon.intensity_g_per_kwh)");
  EXPECT_FALSE(result.intensity_is_default);
}

TEST(CarbonTest, RegionFromTable) {
  CarbonOptions options;
  options.region = "FR";
  // 10 kWh x 1.0 x 56.0 g/kWh / 1000 = 0.56 kg.
  const CarbonResult result = ComputeCarbon(10.0 * kJoulesPerKwh, options);
  EXPECT_EQ(result.region, "FR");
  EXPECT_EQ(result.intensity_g_per_kwh, 56.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 0.56);
  EXPECT_THAT(result.intensity_source, HasSubstr("Our World in Data"));
  EXPECT_THAT(result.intensity_source, HasSubstr("France, 2023"));
  EXPECT_FALSE(result.intensity_is_default);

  // Names and lower case work; a 2022 entry says so.
  options.region = "indonesia";
  const CarbonResult indonesia = ComputeCarbon(kJoulesPerKwh, options);
  EXPECT_EQ(indonesia.region, "ID");
  EXPECT_EQ(indonesia.intensity_g_per_kwh, 675.9);
  EXPECT_THAT(indonesia.intensity_source, HasSubstr("Indonesia, 2022"));
  EXPECT_EQ(FindRegion("uk")->code, std::string("GB"));
  EXPECT_EQ(FindRegion("uk")->alpha3, std::string("GBR"));
  EXPECT_EQ(FindRegion("fr")->alpha3, std::string("FRA"));
  EXPECT_EQ(FindRegion("de")->alpha3, std::string("DEU"));
  EXPECT_EQ(FindRegion("FRA")->code, std::string("FR"));  // CodeCarbon's country_iso_code
  EXPECT_EQ(FindRegion("deu")->code, std::string("DE"));
  for (const RegionIntensity& row : RegionIntensities()) {
    EXPECT_EQ(std::string(row.alpha3).size(), 3u) << row.code;
    EXPECT_EQ(row.alpha3[0], row.code[0]) << row.code;  // true for all 26 rows of the table
  }
  EXPECT_EQ(FindRegion("United States")->intensity_g_per_kwh, 369.5);
  EXPECT_EQ(FindRegion("de")->intensity_g_per_kwh, 381.0);
  EXPECT_EQ(RegionIntensities().size(), 26u);
}

TEST(CarbonTest, CanonicalRegionIsWhatTheFiguresRecord) {
  EXPECT_EQ(CanonicalRegion(""), "world");
  EXPECT_EQ(CanonicalRegion("World"), "world");
  EXPECT_EQ(CanonicalRegion("FRA"), "FR");
  EXPECT_EQ(CanonicalRegion("france"), "FR");
  EXPECT_EQ(CanonicalRegion("fr"), "FR");
  EXPECT_EQ(CanonicalRegion("uk"), "GB");
  EXPECT_EQ(CanonicalRegion("Atlantis"), "Atlantis");  // unknown: unchanged (validation refuses it)
  CarbonOptions options;
  options.region = "deu";
  EXPECT_EQ(ComputeCarbon(kJoulesPerKwh, options).region, CanonicalRegion("deu"));
}

TEST(CarbonTest, WorldDefault) {
  const CarbonResult result = ComputeCarbon(kJoulesPerKwh, CarbonOptions{});
  EXPECT_EQ(result.intensity_g_per_kwh, 481.0);
  EXPECT_EQ(result.pue, 1.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 0.481);
  EXPECT_TRUE(result.intensity_is_default);
  EXPECT_EQ(result.region, "world");
  EXPECT_EQ(result.intensity_source, "Ember world average, 2023");
}

TEST(CarbonTest, ExplicitWorldIsTheWorldAverageAsAChoice) {
  CarbonOptions options;
  options.region = "WORLD";
  EXPECT_NO_THROW(ValidateCarbonOptions(options));
  const CarbonResult result = ComputeCarbon(kJoulesPerKwh, options);
  EXPECT_EQ(result.intensity_g_per_kwh, 481.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 0.481);
  EXPECT_FALSE(result.intensity_is_default);
  EXPECT_EQ(result.region, "world");
  EXPECT_EQ(result.intensity_source, "Ember world average, 2023");
}

TEST(CarbonTest, OverrideWinsOverRegion) {
  CarbonOptions options;
  options.region = "de";
  options.intensity_g_per_kwh = 0.0;
  const CarbonResult result = ComputeCarbon(kJoulesPerKwh, options);
  EXPECT_EQ(result.region, "DE");
  EXPECT_EQ(result.kg_co2e, 0.0);
}

// Expects ComputeCarbon(options) to throw a ConfigError naming `field`; returns its message.
std::string ExpectConfigError(const CarbonOptions& options, const std::string& field) {
  try {
    ComputeCarbon(1.0, options);
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), field);
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError for " << field;
  return "";
}

TEST(CarbonTest, ErrorsNameTheirFields) {
  CarbonOptions region;
  region.region = "Atlantis";
  const std::string message = ExpectConfigError(region, "carbon.region");
  EXPECT_THAT(message, HasSubstr("got 'Atlantis'"));
  EXPECT_THAT(message, HasSubstr("one of: AU, BR, CA"));

  for (double bad : {-1.0, 2000.5, 400000.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    CarbonOptions intensity;
    intensity.intensity_g_per_kwh = bad;
    EXPECT_THAT(ExpectConfigError(intensity, "carbon.intensity_g_per_kwh"),
                HasSubstr("g CO2e per kWh from 0 to 2000"));
  }
  CarbonOptions highest;
  highest.intensity_g_per_kwh = kMaxIntensityGPerKwh;
  EXPECT_NO_THROW(ValidateCarbonOptions(highest));
  for (double bad : {0.99, 0.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    CarbonOptions pue;
    pue.pue = bad;
    ExpectConfigError(pue, "carbon.pue");
  }
  EXPECT_THROW(ComputeCarbon(-1.0, CarbonOptions{}), InternalError);
}

// ---- Time series ----

// 2026-11-29T17:00:00Z in Unix seconds (date -u -d 2026-11-29T17:00:00Z +%s).
constexpr double k1700 = 1795971600.0;

TEST(IntensitySeriesTest, Timestamps) {
  EXPECT_EQ(ParseTimestampUnixS("2026-11-29T17:00:00Z"), k1700);
  EXPECT_EQ(ParseTimestampUnixS("2026-11-29 17:00:00+00:00"), k1700);
  EXPECT_EQ(ParseTimestampUnixS("2026-11-29T17:30:00.25Z"), k1700 + 1800.25);
  EXPECT_EQ(ParseTimestampUnixS(" 1795971600 "), k1700);
  EXPECT_EQ(ParseTimestampUnixS("1795971600.5"), k1700 + 0.5);
  EXPECT_EQ(ParseTimestampUnixS("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(ParseTimestampUnixS("2000-03-01T00:00:00Z"), 951868800.0);
  EXPECT_EQ(ParseTimestampUnixS("2024-02-29T23:59:59Z"), 1709251199.0);  // leap day
  // Unix seconds up to the end of year 9999; above, most likely milliseconds, refused.
  EXPECT_EQ(ParseTimestampUnixS("253402300799"), 253402300799.0);
  EXPECT_EQ(ParseTimestampUnixS("9999-12-31T23:59:59Z"), 253402300799.0);
  EXPECT_FALSE(ParseTimestampUnixS("253402300800").has_value());
  EXPECT_FALSE(ParseTimestampUnixS("1795971600000").has_value());
  for (const char* bad : {"", "2026-11-29T17:00:00", "2026-11-29T17:00:00+01:00",
                          "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-29T24:00:00Z",
                          "2026-11-29T17:00:60Z", "2026-11-29", "1.2.3", "-5", "1e9", "noon"}) {
    EXPECT_FALSE(ParseTimestampUnixS(bad).has_value()) << bad;
  }
}

TEST(IntensitySeriesTest, ParsesCsvAndLooksUpSteps) {
  const IntensitySeries series = IntensitySeries::ParseCsv(
      "# hourly, from the grid operator\r\n"
      "Timestamp, g_per_kwh\r\n"
      "2026-11-29T17:00:00Z,100\r\n"
      "\r\n"
      "1795973400,300.5\r\n"  // 17:30
      "2026-11-29T18:00:00Z , 0\n",
      "test.csv");
  ASSERT_EQ(series.points().size(), 3u);
  EXPECT_EQ(series.points()[1].unix_s, k1700 + 1800);
  EXPECT_EQ(series.points()[1].intensity_g_per_kwh, 300.5);
  EXPECT_EQ(series.source(), "test.csv");
  // Step lookup: a value holds from its timestamp until the next; the first also before it, the
  // last after it.
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700 - 1e6), 100.0);
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700), 100.0);
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700 + 1799.5), 100.0);
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700 + 1800), 300.5);
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700 + 3600), 0.0);
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700 + 1e6), 0.0);
}

// Expects ParseCsv(text) to throw a ConfigError; returns its message.
std::string CsvError(const std::string& text) {
  try {
    IntensitySeries::ParseCsv(text, "grid.csv");
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return "";
}

TEST(IntensitySeriesTest, CsvErrorsNameFileAndLine) {
  EXPECT_EQ(CsvError("timestamp,g_per_kwh\n2026-11-29T17:00:00Z,100\n2026-11-29T17:00:00,90\n"),
            "intensity series grid.csv, line 3: bad timestamp '2026-11-29T17:00:00'; expected "
            "Unix seconds (1795971600; at most 253402300799, the end of year 9999: a larger value "
            "is likely milliseconds) or ISO 8601 UTC (2026-11-29T17:00:00Z, or +00:00)");
  EXPECT_THAT(CsvError("1795971600000,100\n"), HasSubstr("line 1: bad timestamp '1795971600000'"));
  EXPECT_EQ(CsvError("1795971600,abc\n"),
            "intensity series grid.csv, line 1: bad intensity 'abc'; expected g CO2e per kWh from "
            "0 to 2000 (the table's highest national average, India's, is 713.4; a larger value is "
            "likely another unit, such as g per MWh)");
  EXPECT_THAT(CsvError("1795971600,-1\n"), HasSubstr("line 1: bad intensity '-1'"));
  EXPECT_THAT(CsvError("1795971600,400000\n"), HasSubstr("line 1: bad intensity '400000'"));
  EXPECT_NO_THROW(IntensitySeries::ParseCsv("1795971600,2000\n", "grid.csv"));
  EXPECT_THAT(CsvError("1795971600,1,2\n"), HasSubstr("line 1: '1795971600,1,2' has 3 fields"));
  EXPECT_THAT(CsvError("1795971600,1\n1795971600,2\n"),
              HasSubstr("line 2: timestamp '1795971600' does not come after"));
  EXPECT_THAT(CsvError("1795971600,1\ntimestamp,g_per_kwh\n"), HasSubstr("line 2: bad timestamp"));
  // A first row of words is another header: the one the file takes is named.
  EXPECT_EQ(CsvError("time,intensity\n1795971600,1\n"),
            "intensity series grid.csv, line 1: 'time,intensity' reads as a header; the header, "
            "which may be left out, is timestamp,g_per_kwh");
  EXPECT_THAT(CsvError("yesterday,100\n"), HasSubstr("line 1: bad timestamp 'yesterday'"));
  EXPECT_EQ(CsvError("timestamp,g_per_kwh\n# nothing\n"),
            "intensity series grid.csv: no data rows; expected lines of timestamp,g_per_kwh");
  try {
    IntensitySeries::LoadCsv("/nonexistent/grid.csv");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(),
                HasSubstr("intensity series /nonexistent/grid.csv: cannot read the file"));
  }
  try {
    IntensitySeries::LoadCsv(::testing::TempDir());
    ADD_FAILURE() << "no error for a directory";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()), "intensity series " + ::testing::TempDir() +
                                             ": cannot read the file (it is a directory)");
  }
  EXPECT_THROW(IntensitySeries({}, "empty"), ConfigError);
  EXPECT_THROW(IntensitySeries({{2.0, 1.0}, {1.0, 1.0}}, "backwards"), ConfigError);
  EXPECT_THROW(IntensitySeries({{2.0, 2001.0}}, "too high"), ConfigError);
}

TEST(IntensitySeriesTest, LoadsFile) {
  const std::string path = ::testing::TempDir() + "/intensity_series.csv";
  std::ofstream(path) << "timestamp,g_per_kwh\n2026-11-29T17:00:00Z,250\n";
  const IntensitySeries series = IntensitySeries::LoadCsv(path);
  EXPECT_EQ(series.source(), path);
  EXPECT_EQ(series.IntensityAtGPerKwh(k1700), 250.0);
}

// Series: 100 g/kWh from 17:00, 300 from 17:30, 50 from 18:00 (UTC).
IntensitySeries ThreeSteps() {
  return IntensitySeries({{k1700, 100.0}, {k1700 + 1800, 300.0}, {k1700 + 3600, 50.0}}, "steps");
}

TEST(CarbonSeriesTest, IntervalSpanningAChangeIsSplitByTime) {
  // 1 kWh over 17:00-18:00: 0.5 kWh at 100 + 0.5 kWh at 300 = 200 g; x PUE 1.5 = 300 g.
  const CarbonResult one =
      ComputeCarbonSeries({{k1700, k1700 + 3600, kJoulesPerKwh}}, ThreeSteps(), 1.5);
  EXPECT_EQ(one.energy_kwh, 1.0);
  EXPECT_EQ(one.pue, 1.5);
  EXPECT_EQ(one.intensity_g_per_kwh, 200.0);
  EXPECT_EQ(one.kg_co2e, 0.3);
  EXPECT_EQ(one.region, "series");
  EXPECT_EQ(one.intensity_source, "time series steps (3 points, energy-weighted mean)");
  EXPECT_FALSE(one.intensity_is_default);

  // 2 kWh over 17:15-18:15 (15 min at 100, 30 at 300, 15 at 50): 0.5 x 100 + 1 x 300 +
  // 0.5 x 50 = 375 g at PUE 1 = 0.375 kg; mean intensity 375 / 2 = 187.5.
  const CarbonResult spanning =
      ComputeCarbonSeries({{k1700 + 900, k1700 + 4500, 2.0 * kJoulesPerKwh}}, ThreeSteps(), 1.0);
  EXPECT_EQ(spanning.energy_kwh, 2.0);
  EXPECT_EQ(spanning.kg_co2e, 0.375);
  EXPECT_EQ(spanning.intensity_g_per_kwh, 187.5);
}

TEST(CarbonSeriesTest, SeveralIntervalsEdgesAndOutsideTheSeries) {
  // Interval A: 0.5 kWh, 16:00-17:00, before the series: its first value (100) -> 50 g.
  // Interval B: 0.25 kWh, 17:30-17:30 (zero length) at 17:30 -> 300 -> 75 g.
  // Interval C: 1 kWh, 18:00-20:00, the last value holds on: 50 -> 50 g. Past 18:30 (one step
  // of the last two points' 30 min after the last timestamp) the value is stale: 1.5 h of the
  // 2 h, 0.75 kWh = 2,700,000 J, which the source notes.
  // Total 1.75 kWh, 175 g, PUE 2 -> 350 g = 0.35 kg; mean intensity 175 / 1.75 = 100.
  const CarbonResult result =
      ComputeCarbonSeries({{k1700 + 3600, k1700 + 3 * 3600, kJoulesPerKwh},
                           {k1700 - 3600, k1700, 0.5 * kJoulesPerKwh},
                           {k1700 + 1800, k1700 + 1800, 0.25 * kJoulesPerKwh}},
                          ThreeSteps(), 2.0);
  EXPECT_EQ(result.energy_kwh, 1.75);
  EXPECT_EQ(result.kg_co2e, 0.35);
  EXPECT_EQ(result.intensity_g_per_kwh, 100.0);
  EXPECT_EQ(result.intensity_source,
            "time series steps (3 points, energy-weighted mean); 1800000.00 J before its first "
            "timestamp, at its first value; 2700000.00 J more than one step (1800 s) after its "
            "last timestamp, at its last value (the series may be out of date)");

  // No energy: 0 kg, the intensity in force at the first interval's start.
  const CarbonResult none =
      ComputeCarbonSeries({{k1700 + 1800, k1700 + 1900, 0.0}}, ThreeSteps(), 1.0);
  EXPECT_EQ(none.kg_co2e, 0.0);
  EXPECT_EQ(none.intensity_g_per_kwh, 300.0);

  // A one-point series is a constant: same as ComputeCarbon with that intensity.
  const IntensitySeries constant({{k1700, 56.0}}, "constant");
  const CarbonResult flat =
      ComputeCarbonSeries({{k1700 - 100, k1700 + 100, 10.0 * kJoulesPerKwh}}, constant, 1.0);
  EXPECT_DOUBLE_EQ(flat.kg_co2e, 0.56);
  EXPECT_EQ(flat.intensity_g_per_kwh, 56.0);
}

// SeriesCarbon fed one interval at a time gives ComputeCarbonSeries's figures at every step, and
// one rebuilt from its state (a resume checkpoint's) goes on as the original would.
TEST(CarbonSeriesTest, RunningSumsAndResumeFromState) {
  const IntensitySeries series = ThreeSteps();
  const std::vector<EnergyInterval> intervals = {
      {k1700 - 600, k1700 + 600, 0.5 * kJoulesPerKwh},     // 10 min before the series
      {k1700 + 600, k1700 + 2400, kJoulesPerKwh},          // across 17:30
      {k1700 + 2400, k1700 + 2400, 0.25 * kJoulesPerKwh},  // an instant at 300
      {k1700 + 3000, k1700 + 6000, 3.0 * kJoulesPerKwh}};  // 18:30-18:40 stale (1/5 of it)
  SeriesCarbon running(series, 1.5);
  std::vector<EnergyInterval> so_far;
  for (const EnergyInterval& interval : intervals) {
    running.Add(interval);
    so_far.push_back(interval);
    const CarbonResult all = ComputeCarbonSeries(so_far, series, 1.5);
    EXPECT_EQ(running.Result().kg_co2e, all.kg_co2e);
    EXPECT_EQ(running.Result().intensity_source, all.intensity_source);
  }
  // By hand, g before the PUE: 0.5 kWh x 100 = 50; 1 kWh: 20 min at 100, 10 at 300 -> 66.67 +
  // 100; 0.25 x 300 = 75; 3 kWh over 50 min: 10 min at 300 (0.6 kWh, 180 g), 40 min at 50
  // (2.4 kWh, 120 g). Sum 591.67 g x PUE 1.5 = 887.5 g.
  EXPECT_NEAR(running.Result().kg_co2e, (50.0 + 200.0 / 3.0 + 100.0 + 75.0 + 300.0) * 1.5 / 1000.0,
              1e-15);
  EXPECT_EQ(running.state().before_series_j, 0.25 * kJoulesPerKwh);
  EXPECT_EQ(running.state().after_series_j, 0.6 * kJoulesPerKwh);  // 18:30-18:40

  SeriesCarbon first(series, 1.5);
  first.Add(intervals[0]);
  first.Add(intervals[1]);
  SeriesCarbon resumed(series, 1.5, first.state());
  resumed.Add(intervals[2]);
  resumed.Add(intervals[3]);
  EXPECT_EQ(resumed.Result().kg_co2e, running.Result().kg_co2e);
  EXPECT_EQ(resumed.Result().intensity_source, running.Result().intensity_source);
  EXPECT_EQ(resumed.state().first_unix_s, k1700 - 600);
}

TEST(CarbonSeriesTest, Errors) {
  for (double bad : {0.5, std::numeric_limits<double>::quiet_NaN()}) {
    try {
      ComputeCarbonSeries({}, ThreeSteps(), bad);
      ADD_FAILURE() << "no error for pue " << bad;
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "carbon.pue");
    }
  }
  EXPECT_THROW(ComputeCarbonSeries({{k1700 + 10, k1700, 1.0}}, ThreeSteps(), 1.0), InternalError);
  EXPECT_THROW(ComputeCarbonSeries({{k1700, k1700 + 10, -1.0}}, ThreeSteps(), 1.0), InternalError);
}

}  // namespace
}  // namespace greenrl::energy
