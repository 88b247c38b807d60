// The tessera binary: exit codes (0 ok, 1 error, 2 usage), inspect output for generator specs and
// files, and generate -> inspect round trips. The binary is found next to the test binary's
// build tree (build/apps/cli/tessera); the tests skip when it has not been built.
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "support/cli_run.hpp"
#include "support/testing.hpp"

namespace tessera {
namespace {
namespace fs = std::filesystem;

using testing::CliResult;
using testing::run_cli;

// `tessera ARGS` exits 2 (usage) and its output holds `message`.
void expect_usage_error(const std::string& args, const std::string& message) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
}

TEST(CliCommands, HelpAndUsageErrors) {
  TESSERA_REQUIRE_CLI();
  for (const char* cmd : {"inspect --help", "generate --help"}) {
    const CliResult r = run_cli(cmd);
    EXPECT_EQ(r.code, 0) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("Generator specs"), std::string::npos) << r.out;
  }
  EXPECT_EQ(run_cli("inspect").code, 2);                            // missing GRAPH
  EXPECT_EQ(run_cli("inspect grid --no-such-flag").code, 2);
  EXPECT_EQ(run_cli("generate grid").code, 2);                      // missing -o
  EXPECT_EQ(run_cli("generate grid -o x.txt --format nope").code, 2);
  EXPECT_EQ(run_cli("no-such-command").code, 2);
  expect_usage_error("tune grid --width 0", "--width: must be positive, got 0");  // a message that reads
  expect_usage_error("tune grid --dtype f8", "--dtype: unknown dtype 'f8'");
  // Checked before the dataset is read and the Gram matrix computed (this dataset does not exist).
  expect_usage_error("kernel /nonexistent -o gram.txt", "gram.txt: a dense matrix is written as .npy");
  expect_usage_error("generate grid -o /nonexistent/dir/g.mtx", "--output: directory /nonexistent/dir does not exist");
  expect_usage_error("reorder grid -o g.unknown", "--out: g.unknown: cannot write graph file type '.unknown'");
  expect_usage_error("tune grid --json-out /nonexistent/t.json", "--json-out: directory /nonexistent does not exist");
}

TEST(CliCommands, TrainRejectsBadArgumentsBeforeLoading) {
  TESSERA_REQUIRE_CLI();
  if (run_cli("train --help").code != 0) GTEST_SKIP() << "this build has no train command (no LibTorch)";
  expect_usage_error("train --model gat --data sbm", "--model: gat not in {gatv2,gcn,sage,transformer}");
  EXPECT_EQ(run_cli("train --model gat --data sbm").out.find("loading"), std::string::npos);
  expect_usage_error("train --hidden 0", "--hidden: must be positive, got 0");
  expect_usage_error("train --epochs -1", "--epochs: must not be negative, got -1");
}

TEST(CliCommands, TrainSummaryNamesTheLayers) {
  // The summary's "model:" line gives the family and widths; "layers:" what they became (heads per
  // layer, the aggregation), as the layers print themselves.
  TESSERA_REQUIRE_CLI();
  if (run_cli("train --help").code != 0) GTEST_SKIP() << "this build has no train command (no LibTorch)";
  const auto gat = run_cli("train --model gatv2 --heads 2 --hidden 8 --epochs 1 --quiet --data sbm:nodes=200");
  ASSERT_EQ(gat.code, 0) << gat.out;
  EXPECT_NE(gat.out.find("\nlayers: GATv2Conv("), std::string::npos) << gat.out;
  EXPECT_NE(gat.out.find(", 4, heads=2) -> GATv2Conv(8, "), std::string::npos) << gat.out;
  const auto sage = run_cli("train --model sage --aggr max --epochs 1 --quiet --data sbm:nodes=200");
  ASSERT_EQ(sage.code, 0) << sage.out;
  EXPECT_NE(sage.out.find("aggr=max) -> SAGEConv("), std::string::npos) << sage.out;
}

TEST(CliCommands, InspectGeneratorSpec) {
  TESSERA_REQUIRE_CLI();
  const CliResult r = run_cli("inspect grid:rows=3,cols=4 --tiles");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("nodes:        12"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("edges:        34"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("generated in"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiles 16x8"), std::string::npos) << r.out;
  const CliResult j = run_cli("inspect rmat:scale=8,degree=4 --json --symmetrize");
  ASSERT_EQ(j.code, 0) << j.out;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["graph"]["nodes"], 256);
  EXPECT_EQ(doc["graph"]["symmetric"], true);
  EXPECT_TRUE(doc.contains("load_seconds"));
  const CliResult sbm = run_cli("inspect sbm");
  ASSERT_EQ(sbm.code, 0) << sbm.out;
  EXPECT_NE(sbm.out.find("split:        train 200, val 400, test 1400"), std::string::npos) << sbm.out;
}

TEST(CliCommands, ErrorsExitOne) {
  TESSERA_REQUIRE_CLI();
  const CliResult r = run_cli("inspect rmat:scale=8,bogus=1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("tessera: error: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown key 'bogus'"), std::string::npos) << r.out;
  const CliResult missing = run_cli("inspect /nonexistent/graph.txt");
  EXPECT_EQ(missing.code, 1) << missing.out;
  EXPECT_NE(missing.out.find("neither a file"), std::string::npos) << missing.out;
  // A graph file type generate cannot write is refused before the graph is generated.
  const CliResult type = run_cli("generate rmat:scale=8 -o g.unknown");
  EXPECT_EQ(type.code, 1) << type.out;
  EXPECT_NE(type.out.find("cannot write graph file type '.unknown'"), std::string::npos) << type.out;
  EXPECT_EQ(type.out.find("generating"), std::string::npos) << type.out;
}

TEST(CliCommands, GenerateThenInspectRoundTrip) {
  TESSERA_REQUIRE_CLI();
  const fs::path dir = fs::temp_directory_path() / ("tessera_cli_" + std::to_string(getpid()));
  fs::create_directories(dir);
  for (const char* ext : {".txt", ".mtx", ".tsr"}) {
    const std::string file = (dir / (std::string("g") + ext)).string();
    const CliResult g = run_cli("generate ws:nodes=500,k=4,p=0.1,seed=7 -o " + file);
    ASSERT_EQ(g.code, 0) << g.out;
    EXPECT_NE(g.out.find("wrote " + file), std::string::npos) << g.out;
    const CliResult i = run_cli("inspect --json " + file);
    ASSERT_EQ(i.code, 0) << i.out;
    const auto doc = nlohmann::json::parse(i.out);
    const CliResult ref = run_cli("inspect --json ws:nodes=500,k=4,p=0.1,seed=7");
    const auto want = nlohmann::json::parse(ref.out);
    EXPECT_EQ(doc["graph"]["edges"], want["graph"]["edges"]) << ext;
    EXPECT_EQ(doc["graph"]["degree"]["max"], want["graph"]["degree"]["max"]) << ext;
    EXPECT_EQ(doc["graph"]["symmetric"], true) << ext;
  }
  fs::remove_all(dir);
}

TEST(CliCommands, InspectCora) {
  TESSERA_REQUIRE_CLI();
  TESSERA_REQUIRE_SHARED("cora");
  const CliResult r = run_cli("inspect " + testing::shared_data("cora"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("nodes:        2708"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("edges:        10556"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1433 features, 7 classes"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tessera
