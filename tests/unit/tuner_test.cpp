// Tuner: the JSON cache (round trip, atomic replacement, corrupted files ignored with a warning),
// width buckets, and choose()'s order requested > tuned > cache > heuristic.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/testing.hpp"
#include "tessera/tune/choose.hpp"
#include "tessera/tune/tuner.hpp"

using namespace tessera;
using namespace tessera::tune;
namespace fs = std::filesystem;

namespace {
// A fresh directory per test under the system temp dir.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tessera_tuner_" + std::to_string(::tessera::testing::seed()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};
Key key(const std::string& graph, int64_t width) { return {"cpu: test", "spmm", "float32/int32", graph, width_bucket(width)}; }
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST(Tuner, WidthBucketsAreNextPowersOfTwo) {
  EXPECT_EQ(width_bucket(1), 1);
  EXPECT_EQ(width_bucket(3), 4);
  EXPECT_EQ(width_bucket(64), 64);
  EXPECT_EQ(width_bucket(100), 128);
  EXPECT_EQ(width_bucket(0), 0);
  EXPECT_NE(key("g", 33).str(), key("g", 65).str());
  EXPECT_EQ(key("g", 33).str(), key("g", 64).str());
}

TEST(Tuner, CacheRoundTripsThroughTheFile) {
  TempDir dir;
  const std::string path = (dir.path / "sub" / "tune.json").string();
  {
    Cache c(path);
    Choice none;
    EXPECT_FALSE(c.lookup(key("a", 64), none));
    c.store(key("a", 64), {"cpu.rows", "tuned", 1.25});
    c.store(key("b", 256), {"reference", "tuned", 9.5});
  }
  Cache again(path);
  Choice got;
  ASSERT_TRUE(again.lookup(key("a", 64), got));
  EXPECT_EQ(got.variant, "cpu.rows");
  EXPECT_DOUBLE_EQ(got.ms, 1.25);
  ASSERT_TRUE(again.lookup(key("b", 200), got));
  EXPECT_EQ(got.variant, "reference");
  // Written atomically: a parseable file and no temporary left behind.
  EXPECT_FALSE(nlohmann::json::parse(slurp(path), nullptr, false).is_discarded());
  for (const auto& e : fs::directory_iterator(dir.path / "sub"))
    EXPECT_EQ(e.path().filename(), "tune.json") << "leftover " << e.path();
  again.clear();
  EXPECT_FALSE(fs::exists(path));
}

TEST(Tuner, StoreMergesEntriesWrittenByAnotherProcess) {
  TempDir dir;
  const std::string path = (dir.path / "tune.json").string();
  Cache first(path), second(path);
  Choice c;
  EXPECT_FALSE(first.lookup(key("x", 8), c));  // loads (empty) before the other writer
  second.store(key("y", 8), {"cpu.rows", "tuned", 2});
  first.store(key("x", 8), {"reference", "tuned", 3});
  Cache reader(path);
  EXPECT_TRUE(reader.lookup(key("x", 8), c));
  EXPECT_TRUE(reader.lookup(key("y", 8), c));
}

// Decision: a corrupted cache is ignored with a warning (never an error: it is only a cache),
// kept as <path>.corrupt, and replaced by a valid file on the next store.
TEST(Tuner, CorruptedCacheIsIgnoredWithWarningAndReplaced) {
  TempDir dir;
  const fs::path path = dir.path / "tune.json";
  for (const char* junk : {"{\"version\": 1, \"entries\": {\"k\": 5}", "not json at all",
                           "{\"version\": 7, \"entries\": {}}", "{\"entries\": {\"k\": {\"variant\": 3}}, \"version\": 1}"}) {
    { std::ofstream(path) << junk; }
    Cache c(path.string());
    Choice got;
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(c.lookup(key("a", 64), got)) << junk;
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("ignoring corrupted tuner cache"), std::string::npos) << err;
    EXPECT_EQ(slurp(path.string() + ".corrupt"), junk);
    c.store(key("a", 64), {"cpu.rows", "tuned", 1});
    Cache again(path.string());
    ASSERT_TRUE(again.lookup(key("a", 64), got)) << junk;
    EXPECT_EQ(got.variant, "cpu.rows");
  }
}

namespace {
// A toy family: variants that sleep for different times, one restricted to even arguments.
Registry<int> toy_registry() {
  Registry<int> reg("toyfam");
  auto sleeper = [](int ms) {
    return [ms](const int&, const Exec&) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  };
  reg.add({"slow", Backend::cpu, nullptr, sleeper(6), ""});
  reg.add({"fast", Backend::cpu, nullptr, sleeper(1), ""});
  reg.add({"even_only", Backend::cpu, [](const int& a) { return a % 2 == 0; }, sleeper(3), ""});
  reg.add({"gpu_only", Backend::cuda, nullptr, sleeper(0), ""});
  reg.set_heuristic([](const int& a, const Device&) { return a % 2 == 0 ? std::string("even_only") : std::string("slow"); });
  return reg;
}
}  // namespace

TEST(Tuner, ChooseOrderRequestedTunedCacheHeuristic) {
  TempDir dir;
  Cache cache((dir.path / "tune.json").string());
  const Registry<int> reg = toy_registry();
  const Exec cpu = Exec::cpu();
  const Key k = key("toy", 16);
  // Heuristic (nothing cached); an ineligible heuristic answer falls back to the first eligible.
  EXPECT_EQ(choose(reg, k, 2, cpu, "", cache).variant, "even_only");
  EXPECT_EQ(choose(reg, k, 3, cpu, "", cache).variant, "slow");
  EXPECT_EQ(choose(reg, k, 3, cpu, "", cache).source, "heuristic");
  // Requested: argument, then the environment; unknown and ineligible names throw.
  EXPECT_EQ(choose(reg, k, 3, cpu, "fast", cache).source, "requested");
  EXPECT_THROW(choose(reg, k, 3, cpu, "even_only", cache), Error);
  EXPECT_THROW(choose(reg, k, 3, cpu, "gpu_only", cache), Error);
  EXPECT_THROW(choose(reg, k, 3, cpu, "missing", cache), Error);
  ::setenv("TESSERA_VARIANT_TOYFAM", "fast", 1);
  const Choice env = choose(reg, k, 3, cpu, "", cache);
  ::unsetenv("TESSERA_VARIANT_TOYFAM");
  EXPECT_EQ(env.variant, "fast");
  EXPECT_EQ(env.source, "requested");
  // Tuning times the eligible variants and stores the winner...
  set_tuning(true);
  const Choice tuned = choose(reg, k, 3, cpu, "", cache);
  set_tuning(false);
  EXPECT_EQ(tuned.variant, "fast");
  EXPECT_EQ(tuned.source, "tuned");
  EXPECT_GT(tuned.ms, 0.5);
  // ... which later calls (and other processes) read back from the cache.
  EXPECT_EQ(choose(reg, k, 3, cpu, "", cache).source, "cache");
  Cache reread((dir.path / "tune.json").string());
  const Choice from_file = choose(reg, k, 3, cpu, "", reread);
  EXPECT_EQ(from_file.variant, "fast");
  EXPECT_EQ(from_file.source, "cache");
  // The choice log holds one entry per family and key.
  int entries = 0;
  for (const auto& [name, c] : recorded_choices()) entries += name == "toyfam " + k.str();
  EXPECT_EQ(entries, 1);
}

TEST(Tuner, TimeMsReportsTheMedian) {
  const double ms = time_ms(Exec::cpu(), [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, 1, 3);
  EXPECT_GE(ms, 1.9);
  EXPECT_LT(ms, 200);
}
