// `tessera kernel` on SMILES files: the Gram matrix of a small CSV, column choice, invalid rows
// (error naming file and line, or --skip-invalid), and the error of builds without RDKit.
// Skips when the binary has not been built (as cli_commands_test does).
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "support/cli_run.hpp"
#include "support/testing.hpp"
#include "tessera/io/smiles.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {
namespace fs = std::filesystem;

using testing::CliResult;
using testing::run_cli;

TEST(CliSmiles, KernelOnASmilesCsv) {
  TESSERA_REQUIRE_CLI();
  testing::TempDir dir;
  testing::write_text(dir.file("m.csv"), "id,mol\n1,CCO\n2,c1ccccc1\n3,CC(=O)[O-].[Na+]\n4,C1CC\n");
  const std::string out = dir.file("k.csv");
  const std::string base = "kernel " + dir.file("m.csv") + " -o " + out + " --json";
  if (!io::have_rdkit()) {
    const CliResult r = run_cli(base + " --smiles-column mol");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("without RDKit"), std::string::npos) << r.out;
    GTEST_SKIP() << "tessera was built without RDKit (install librdkit-dev and rebuild)";
  }
  // No column named smiles: the error lists the columns.
  CliResult r = run_cli(base);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("no column named 'smiles'"), std::string::npos) << r.out;
  // Row 4 is invalid: file and line, unless skipped.
  r = run_cli(base + " --smiles-column mol");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("m.csv:5"), std::string::npos) << r.out;
  r = run_cli(base + " --smiles-column mol --skip-invalid --normalize");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["graphs"], 3);
  EXPECT_EQ(j["skipped_molecules"], 1);
  EXPECT_EQ(j["pairs"], 6);
  EXPECT_EQ(j["failed"], 0);
  // Normalized Gram: ones on the diagonal, symmetric.
  const std::string text = testing::read_bytes(out);
  std::vector<double> v;
  for (size_t p = 0; p < text.size();) {
    size_t q = text.find_first_of(",\n", p);
    if (q == std::string::npos) q = text.size();
    if (q > p) v.push_back(std::stod(text.substr(p, q - p)));
    p = q + 1;
  }
  ASSERT_EQ(v.size(), 9u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(v[size_t(4 * i)], 1.0, 1e-12);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(v[size_t(3 * i + k)], v[size_t(3 * k + i)]);
  }
  // SMILES options on a TU directory are a mistake, said so.
  r = run_cli("kernel " + dir.str() + " --smiles-column mol -o " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("apply to SMILES files"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tessera
