// Molecules from SMILES (RDKit): hand-checked molecules, invalid input, CSV/.smi files, the
// RDKit-derived TU graphs of ../shared/data/moleculenet as a cross-check, and a kernel smoke test.
// Skipped with a message when tessera was built without RDKit (then only the error is checked).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "io/loaders.hpp"
#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/io/smiles.hpp"
#include "tessera/kernels/marginalized.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {

using testing::TempDir;
using testing::expect_error;
using testing::write_gz;
using testing::write_text;
namespace L = io::smiles_label;

#define TESSERA_REQUIRE_RDKIT()                                                                     \
  do {                                                                                              \
    if (!io::have_rdkit()) GTEST_SKIP() << "tessera was built without RDKit (install librdkit-dev and rebuild)"; \
  } while (0)

std::multiset<int32_t> labels_of(const std::vector<int32_t>& v) { return {v.begin(), v.end()}; }
std::multiset<int32_t> repeat(int count, int32_t label) {
  std::multiset<int32_t> m;
  for (int k = 0; k < count; ++k) m.insert(label);
  return m;
}

// Entry k's label equals the label of its mirror entry, no self loops, sorted rows.
void expect_symmetric(const LabeledGraph& g) {
  const auto& a = g.adj;
  ASSERT_EQ(a.rows, a.cols);
  ASSERT_EQ(g.edge_labels.size(), a.col.size());
  for (int64_t i = 0; i < a.rows; ++i)
    for (int32_t k = a.rowptr[size_t(i)]; k < a.rowptr[size_t(i) + 1]; ++k) {
      const int32_t j = a.col[size_t(k)];
      EXPECT_NE(j, i) << "self loop at " << i;
      if (k > a.rowptr[size_t(i)]) {
        EXPECT_LT(a.col[size_t(k) - 1], j) << "row " << i << " not sorted";
      }
      bool found = false;
      for (int32_t m = a.rowptr[size_t(j)]; m < a.rowptr[size_t(j) + 1]; ++m)
        if (a.col[size_t(m)] == i) {
          found = true;
          EXPECT_EQ(g.edge_labels[size_t(m)], g.edge_labels[size_t(k)]) << "edge " << i << "-" << j;
        }
      EXPECT_TRUE(found) << "entry " << i << "->" << j << " has no mirror";
    }
}

int components(const LabeledGraph& g) {
  std::vector<int64_t> parent(size_t(g.num_nodes()));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int64_t x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  };
  for (int64_t i = 0; i < g.num_nodes(); ++i)
    for (int32_t k = g.adj.rowptr[size_t(i)]; k < g.adj.rowptr[size_t(i) + 1]; ++k)
      parent[size_t(find(i))] = find(g.adj.col[size_t(k)]);
  int c = 0;
  for (int64_t i = 0; i < g.num_nodes(); ++i) c += find(i) == i;
  return c;
}

TEST(IoSmiles, WithoutRdkitEveryEntryPointSaysSo) {
  if (io::have_rdkit()) GTEST_SKIP() << "built with RDKit (the error path is for builds without it)";
  expect_error([] { io::read_smiles("CCO"); }, {"without RDKit", "librdkit-dev"});
  expect_error([] { io::read_smiles(std::vector<std::string>{"CCO"}); }, {"without RDKit", "librdkit-dev"});
  expect_error([] { io::read_smiles_file("x.csv"); }, {"x.csv", "without RDKit", "librdkit-dev"});
}

TEST(IoSmiles, BenzeneAromaticAndKekuleAreTheSameGraph) {
  TESSERA_REQUIRE_RDKIT();
  for (const char* s : {"c1ccccc1", "C1=CC=CC=C1"}) {
    SCOPED_TRACE(s);
    const LabeledGraph g = io::read_smiles(s);
    ASSERT_EQ(g.num_nodes(), 6);
    EXPECT_EQ(g.adj.nnz(), 12);
    EXPECT_TRUE(g.adj.values.empty());
    EXPECT_EQ(labels_of(g.node_labels), repeat(6, L::atom(6, 0, true)));
    EXPECT_EQ(labels_of(g.edge_labels), repeat(12, L::bond(L::aromatic, true)));
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(g.adj.rowptr[size_t(i) + 1] - g.adj.rowptr[size_t(i)], 2);
      EXPECT_EQ(g.node_attrs(i, 0), 0.0f);  // charge
      EXPECT_EQ(g.node_attrs(i, 1), 1.0f);  // one implicit H
      EXPECT_EQ(g.node_attrs(i, 2), 1.0f);  // aromatic
      EXPECT_EQ(g.node_attrs(i, 3), 1.0f);  // in a ring
    }
    expect_symmetric(g);
    EXPECT_EQ(components(g), 1);
  }
}

TEST(IoSmiles, EthanolHasImplicitHydrogens) {
  TESSERA_REQUIRE_RDKIT();
  // Explicit hydrogens are removed as by MolFromSmiles: both spellings give the heavy-atom graph.
  for (const char* s : {"CCO", "[H]OC([H])([H])C([H])([H])[H]"}) {
    SCOPED_TRACE(s);
    const LabeledGraph g = io::read_smiles(s);
    ASSERT_EQ(g.num_nodes(), 3);
    EXPECT_EQ(g.adj.nnz(), 4);
    EXPECT_EQ(labels_of(g.node_labels), (std::multiset<int32_t>{6, 6, 8}));
    EXPECT_EQ(labels_of(g.edge_labels), repeat(4, L::bond(L::single, false)));
    float h = 0;
    for (int64_t i = 0; i < 3; ++i) h += g.node_attrs(i, 1);
    EXPECT_EQ(h, 6.0f);
    expect_symmetric(g);
  }
  const LabeledGraph g = io::read_smiles("CCO");
  EXPECT_EQ(g.node_labels, (std::vector<int32_t>{6, 6, 8}));  // RDKit atom order = SMILES order
  EXPECT_EQ(g.adj.col, (std::vector<int32_t>{1, 0, 2, 1}));
}

TEST(IoSmiles, ChargedSpecies) {
  TESSERA_REQUIRE_RDKIT();
  const LabeledGraph nh4 = io::read_smiles("[NH4+]");
  ASSERT_EQ(nh4.num_nodes(), 1);
  EXPECT_EQ(nh4.adj.nnz(), 0);
  EXPECT_EQ(nh4.node_labels[0], 7 + L::kCharge);
  EXPECT_EQ(nh4.node_attrs(0, 0), 1.0f);
  EXPECT_EQ(nh4.node_attrs(0, 1), 4.0f);

  const LabeledGraph ac = io::read_smiles("CC(=O)[O-]");
  ASSERT_EQ(ac.num_nodes(), 4);
  EXPECT_EQ(ac.node_labels, (std::vector<int32_t>{6, 6, 8, 8 - L::kCharge}));
  EXPECT_EQ(ac.node_attrs(3, 0), -1.0f);
  // C-C plain single; the carboxylate's C=O and C-O- are one conjugated system.
  EXPECT_EQ(labels_of(ac.edge_labels),
            (std::multiset<int32_t>{L::bond(L::single, false), L::bond(L::single, false),
                                    L::bond(L::double_, true), L::bond(L::double_, true),
                                    L::bond(L::single, true), L::bond(L::single, true)}));
  expect_symmetric(ac);
  const LabeledGraph tma = io::read_smiles("C[N+](C)(C)C");
  EXPECT_EQ(tma.node_labels[1], 7 + L::kCharge);
  EXPECT_EQ(tma.adj.nnz(), 8);
}

TEST(IoSmiles, DisconnectedSmilesAreOneGraphWithComponents) {
  TESSERA_REQUIRE_RDKIT();
  const LabeledGraph nacl = io::read_smiles("[Na+].[Cl-]");
  ASSERT_EQ(nacl.num_nodes(), 2);
  EXPECT_EQ(nacl.adj.nnz(), 0);
  EXPECT_EQ(nacl.node_labels, (std::vector<int32_t>{11 + L::kCharge, 17 - L::kCharge}));
  EXPECT_EQ(components(nacl), 2);
  const LabeledGraph salt = io::read_smiles("CC(=O)[O-].[Na+].c1ccccc1");
  EXPECT_EQ(salt.num_nodes(), 11);
  EXPECT_EQ(salt.adj.nnz(), 2 * (3 + 6));
  EXPECT_EQ(components(salt), 3);
  expect_symmetric(salt);
}

TEST(IoSmiles, TripleAndConjugatedBondsHaveTheirOwnLabels) {
  TESSERA_REQUIRE_RDKIT();
  const LabeledGraph g = io::read_smiles("C#N");
  EXPECT_EQ(labels_of(g.edge_labels), repeat(2, L::bond(L::triple, false)));
  // Butadiene: C=C-C=C, every bond conjugated.
  const LabeledGraph b = io::read_smiles("C=CC=C");
  EXPECT_EQ(labels_of(b.edge_labels),
            (std::multiset<int32_t>{12, 12, 11, 11, 12, 12}));
  const LabeledGraph p = io::read_smiles("c1ccncc1");  // pyridine: aromatic N
  EXPECT_EQ(std::count(p.node_labels.begin(), p.node_labels.end(), L::atom(7, 0, true)), 1);
}

TEST(IoSmiles, InvalidSmilesAreErrorsNamingTheInput) {
  TESSERA_REQUIRE_RDKIT();
  // Syntax, unclosed ring, kekulization, valence, unknown element, empty: errors, never a crash.
  for (const char* s : {"C(C", "C1CC", "c1cccc1", "CN(C)(C)(C)C", "[Xy]", "", "   ", "C%", "))"}) {
    SCOPED_TRACE(s);
    expect_error([&] { io::read_smiles(s); }, {"invalid SMILES", std::string("'") + s + "'"});
  }
  // RDKit's own message comes along.
  expect_error([] { io::read_smiles("CN(C)(C)(C)C"); }, {"RDKit", "valence"});
  expect_error([] { io::read_smiles("C1CC"); }, {"RDKit"});
  expect_error([] { io::read_smiles(std::vector<std::string>{"CCO", "c1ccccc1", "C(C"}); },
               {"index 2", "'C(C'"});
  // A huge hostile string is cut in the message.
  const std::string big(100000, '(');
  try {
    io::read_smiles(big);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_LT(std::string(e.what()).size(), 2000u);
  }
  // The reader stays usable after errors.
  EXPECT_EQ(io::read_smiles("CCO").num_nodes(), 3);
}

TEST(IoSmiles, CsvFilesWithQuotesCrlfBlankLinesAndGzip) {
  TESSERA_REQUIRE_RDKIT();
  TempDir dir;
  const std::string csv =
      "Compound ID,\"name, long\",SMILES,y\r\n"
      "a,\"x, \"\"quoted\"\"\",CCO,1\r\n"
      "\r\n"
      "b,plain,c1ccccc1,0\r\n"
      "c,\"\",[NH4+],1\r\n";
  write_text(dir.file("m.csv"), csv);
  write_gz(dir.file("m.csv.gz"), csv);
  for (const char* f : {"m.csv", "m.csv.gz"}) {
    SCOPED_TRACE(f);
    const io::SmilesFile r = io::read_smiles_file(dir.file(f));  // "smiles" matches "SMILES"
    EXPECT_EQ(r.collection.name, "m");
    ASSERT_EQ(r.collection.graphs.size(), 3u);
    EXPECT_EQ(r.rows, (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(r.smiles, (std::vector<std::string>{"CCO", "c1ccccc1", "[NH4+]"}));
    EXPECT_EQ(r.collection.graphs[1].num_nodes(), 6);
  }
  expect_error([&] { io::read_smiles_file(dir.file("m.csv"), {"mol"}); },
               {"m.csv:1", "no column named 'mol'", "Compound ID", "SMILES"});
  // An invalid row: file, line and data row in the message; or skipped and listed.
  write_text(dir.file("bad.csv"), "smiles,y\nCCO,1\nC1CC,2\n\nc1ccccc1,3\n");
  expect_error([&] { io::read_smiles_file(dir.file("bad.csv")); }, {"bad.csv:3", "row 1", "'C1CC'", "RDKit"});
  io::SmilesFileOptions skip;
  skip.skip_invalid = true;
  const io::SmilesFile s = io::read_smiles_file(dir.file("bad.csv"), skip);
  EXPECT_EQ(s.rows, (std::vector<int64_t>{0, 2}));
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].find("bad.csv:3"), std::string::npos) << s.skipped[0];
  // A limit stops before the invalid row.
  io::SmilesFileOptions first;
  first.limit = 1;
  EXPECT_EQ(io::read_smiles_file(dir.file("bad.csv"), first).smiles, (std::vector<std::string>{"CCO"}));
  // Short rows, unterminated quotes, empty files, a file of invalid rows only.
  write_text(dir.file("short.csv"), "id,smiles\n1,CCO\n2\n");
  expect_error([&] { io::read_smiles_file(dir.file("short.csv")); }, {"short.csv:3", "1 fields", "'smiles'"});
  write_text(dir.file("quote.csv"), "smiles\n\"CCO\n");
  expect_error([&] { io::read_smiles_file(dir.file("quote.csv")); }, {"quote.csv:2", "unterminated"});
  write_text(dir.file("empty.csv"), "");
  expect_error([&] { io::read_smiles_file(dir.file("empty.csv")); }, {"empty.csv", "empty"});
  write_text(dir.file("header.csv"), "smiles\n");
  expect_error([&] { io::read_smiles_file(dir.file("header.csv")); }, {"header.csv", "no molecules"});
  write_text(dir.file("allbad.csv"), "smiles\nC(\n");
  expect_error([&] { io::read_smiles_file(dir.file("allbad.csv"), skip); }, {"allbad.csv", "every row was invalid"});
  write_text(dir.file("cut.csv.gz"), "not gzip but named so");
  expect_error([&] { io::read_smiles_file(dir.file("cut.csv.gz")); }, {"cut.csv.gz"});
  expect_error([&] { io::read_smiles_file(dir.file("m.txt")); }, {"m.txt", "not a SMILES file"});
  expect_error([&] { io::read_smiles_file(dir.file("missing.csv")); }, {"missing.csv"});
}

TEST(IoSmiles, LargeFilesParseInParallelBatchesAndKeepRowsInOrder) {
  TESSERA_REQUIRE_RDKIT();
  // 9000 rows across batch boundaries, a random mix of molecules and invalid rows (fresh seed):
  // graphs in row order, each the molecule of its row, errors naming the first bad row's line.
  const std::vector<std::string> pool = {"CCO", "c1ccccc1", "[NH4+]", "CC(=O)[O-].[Na+]", "C#N", "c1ccncc1"};
  std::vector<LabeledGraph> expect;
  for (const auto& s : pool) expect.push_back(io::read_smiles(s));
  std::mt19937_64 rng(testing::seed());
  std::string csv = "smiles\n";
  std::vector<int> kind;
  int64_t first_bad = -1;
  for (int r = 0; r < 9000; ++r) {
    const int k = int(rng() % 50);
    if (k == 0 && first_bad < 0) first_bad = r;
    kind.push_back(k == 0 ? -1 : k % int(pool.size()));
    csv += (k == 0 ? std::string("C1CC") : pool[size_t(kind.back())]) + "\n";
  }
  TempDir dir;
  write_gz(dir.file("big.csv.gz"), csv);
  io::SmilesFileOptions skip;
  skip.skip_invalid = true;
  const io::SmilesFile f = io::read_smiles_file(dir.file("big.csv.gz"), skip);
  ASSERT_EQ(f.rows.size() + f.skipped.size(), 9000u) << "seed " << testing::seed();
  for (size_t k = 0; k < f.rows.size(); ++k) {
    const int want = kind[size_t(f.rows[k])];
    ASSERT_GE(want, 0) << "row " << f.rows[k];
    ASSERT_EQ(f.collection.graphs[k].node_labels, expect[size_t(want)].node_labels) << "row " << f.rows[k];
    ASSERT_EQ(f.collection.graphs[k].adj.col, expect[size_t(want)].adj.col) << "row " << f.rows[k];
  }
  if (first_bad >= 0)
    expect_error([&] { io::read_smiles_file(dir.file("big.csv.gz")); },
                 {"big.csv.gz:" + std::to_string(first_bad + 2) + ":", "row " + std::to_string(first_bad) + ":"});
}

TEST(IoSmiles, SmiFiles) {
  TESSERA_REQUIRE_RDKIT();
  TempDir dir;
  write_text(dir.file("a.smi"), "SMILES Name\n# comment\nCCO ethanol\n\nc1ccccc1\tbenzene\n[Na+].[Cl-] salt\n");
  const io::SmilesFile r = io::read_smiles_file(dir.file("a.smi"));
  EXPECT_EQ(r.smiles, (std::vector<std::string>{"CCO", "c1ccccc1", "[Na+].[Cl-]"}));
  EXPECT_EQ(r.collection.graphs[2].num_nodes(), 2);
  write_text(dir.file("b.smi"), "CCO\nC1CC x\n");
  expect_error([&] { io::read_smiles_file(dir.file("b.smi")); }, {"b.smi:2", "row 1", "'C1CC'"});
}

// The RDKit-derived TU sets (../tools/smiles_to_tu.py, RDKit 2022.09): the same molecules read from
// the CSV must give the same graphs. ESOL is compared entry by entry; the others by counts.
struct MolSet {
  const char* tu_dir;
  const char* csv;
  const char* column;
  bool full;
};

void cross_check(const MolSet& m) {
  const std::string tu_dir = testing::shared_data(std::string("moleculenet/") + m.tu_dir);
  const GraphCollection tu = io::read_tu(tu_dir);
  io::SmilesFileOptions opt;
  opt.column = m.column;
  opt.skip_invalid = true;  // BBBP has rows RDKit rejects; the TU set skipped the same rows
  const io::SmilesFile mol = io::read_smiles_file(testing::shared_data(std::string("moleculenet/csv/") + m.csv), opt);
  ASSERT_EQ(mol.collection.graphs.size(), tu.graphs.size());
  const std::string rows_file = io::detail::tu_file(tu_dir, tu.name, "graph_source_rows");
  if (!rows_file.empty()) {
    const auto rows = io::detail::read_int_lines(rows_file, "row");
    EXPECT_EQ(mol.rows, rows);
  }
  int64_t bad = 0;
  for (size_t k = 0; k < tu.graphs.size() && bad < 5; ++k) {
    const LabeledGraph& a = mol.collection.graphs[k];
    const LabeledGraph& b = tu.graphs[k];
    const bool same_counts = a.num_nodes() == b.num_nodes() && a.adj.nnz() == b.adj.nnz();
    EXPECT_TRUE(same_counts) << m.tu_dir << " graph " << k << " (" << mol.smiles[k] << "): nodes " << a.num_nodes()
                             << " vs " << b.num_nodes() << ", entries " << a.adj.nnz() << " vs " << b.adj.nnz();
    bad += !same_counts;
    if (!m.full || !same_counts) continue;
    ASSERT_EQ(b.node_attrs.cols, 4);
    EXPECT_EQ(a.adj.rowptr, b.adj.rowptr) << "graph " << k;
    EXPECT_EQ(a.adj.col, b.adj.col) << "graph " << k;
    for (size_t e = 0; e < a.edge_labels.size() && e < b.edge_labels.size(); ++e)
      if (a.edge_labels[e] % L::kConjugated != b.edge_labels[e]) {
        ADD_FAILURE() << "graph " << k << " entry " << e << ": label " << a.edge_labels[e] << " vs TU "
                      << b.edge_labels[e];
        ++bad;
        break;
      }
    for (int64_t i = 0; i < a.num_nodes(); ++i) {
      const int32_t expect = L::atom(b.node_labels[size_t(i)], int(b.node_attrs(i, 0)), b.node_attrs(i, 2) != 0);
      EXPECT_EQ(a.node_labels[size_t(i)], expect) << "graph " << k << " node " << i;
      for (int c = 0; c < 4; ++c) EXPECT_EQ(a.node_attrs(i, c), b.node_attrs(i, c)) << "graph " << k << " node " << i;
    }
  }
}

TEST(IoSmiles, EsolMatchesTheRdkitDerivedTuGraphs) {
  TESSERA_REQUIRE_RDKIT();
  TESSERA_REQUIRE_SHARED("moleculenet/esol");
  TESSERA_REQUIRE_SHARED("moleculenet/csv/delaney-processed.csv");
  cross_check({"esol", "delaney-processed.csv", "smiles", true});
}

TEST(IoSmiles, OtherMoleculeNetSetsMatchTheirTuGraphs) {
  TESSERA_REQUIRE_RDKIT();
  TESSERA_REQUIRE_SHARED("moleculenet/csv");
  for (const MolSet& m : {MolSet{"freesolv", "SAMPL.csv", "smiles", false}, MolSet{"bace", "bace.csv.gz", "mol", false},
                          MolSet{"bbbp", "BBBP.csv", "smiles", false}}) {
    SCOPED_TRACE(m.tu_dir);
    if (!std::filesystem::exists(testing::shared_data(std::string("moleculenet/") + m.tu_dir))) continue;
    cross_check(m);
  }
}

TEST(IoSmiles, GramMatrixOfMoleculesIsSymmetricWithPositiveDiagonal) {
  TESSERA_REQUIRE_RDKIT();
  const GraphCollection c =
      io::read_smiles(std::vector<std::string>{"c1ccccc1", "C1=CC=CC=C1", "CCO", "CC(=O)[O-].[Na+]", "[NH4+]",
                                               "c1ccncc1", "CC(C)=CCCC(C)=CC(=O)"});
  kernels::Options o;
  o.node_kernel = kernels::BaseKernel::KroneckerDelta(0.5);
  o.edge_kernel = kernels::BaseKernel::KroneckerDelta(0.5);
  o.q = 0.05;
  const kernels::MarginalizedGraphKernel mgk(o);
  const kernels::GramResult r = mgk.gram(c.graphs);
  const int64_t n = int64_t(c.graphs.size());
  ASSERT_EQ(r.K.rows, n);
  EXPECT_TRUE(r.stats.failed.empty());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_GT(r.K(i, i), 0.0) << i;
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_TRUE(std::isfinite(r.K(i, j)));
      EXPECT_EQ(r.K(i, j), r.K(j, i)) << i << "," << j;
    }
  }
  // Aromatic and Kekulé benzene are one graph; ethanol is not benzene.
  EXPECT_NEAR(r.K(0, 1), r.K(0, 0), 1e-9 * r.K(0, 0));
  EXPECT_LT(r.K(0, 2), r.K(0, 0));
  // The CPU solver against the dense oracle on a labeled, charged, disconnected pair.
  const double oracle = kernels::reference_pair(c.graphs[3], c.graphs[5], o).value;
  EXPECT_NEAR(r.K(3, 5), oracle, 1e-9 * std::fabs(oracle));
}

}  // namespace
}  // namespace tessera
