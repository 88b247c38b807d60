// Molecules from SMILES through RDKit (optional: TESSERA_WITH_RDKIT), and the CSV / .smi files
// that carry them. The file side (CSV quoting, columns, error positions) needs no RDKit; only
// parse_batch does.
#include "tessera/io/smiles.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>

#include "io/text_input.hpp"
#include "tessera/core/error.hpp"

#ifdef TESSERA_WITH_RDKIT
#include <GraphMol/MolOps.h>
#include <GraphMol/RWMol.h>
#include <GraphMol/SmilesParse/SmilesParse.h>
#include <RDGeneral/RDLog.h>
#endif

namespace tessera::io {
namespace {

constexpr const char* kNoRdkit =
    "tessera was built without RDKit, so it cannot read SMILES; install librdkit-dev and rebuild "
    "(CMake detects it)";

// A SMILES echoed in a message: long inputs are cut, as hostile files' fields can be huge.
std::string shown_smiles(const std::string& s) {
  constexpr size_t kMax = 80;
  return "'" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...(" + std::to_string(s.size()) + " bytes)") + "'";
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

#ifdef TESSERA_WITH_RDKIT
// RDKit reports parse errors on its global error log (stderr, or nowhere before InitLogs), not in
// the exception. One mutex serializes parsing so the log can be pointed at a buffer per call and
// the message attributed to the right input; parsing costs tens of microseconds per molecule.
std::mutex& rdkit_mutex() {
  static std::mutex m;
  return m;
}

class LogCapture {
 public:
  LogCapture() {
    if (!rdErrorLog || !rdWarningLog) RDLog::InitLogs();
    for (int k = 0; k < 2; ++k) {
      auto& log = k ? rdWarningLog : rdErrorLog;
      saved_[k] = log->dp_dest;
      enabled_[k] = log->df_enabled;
      log->dp_dest = k ? &discard_ : &errors_;
      log->df_enabled = true;
    }
  }
  ~LogCapture() {
    for (int k = 0; k < 2; ++k) {
      auto& log = k ? rdWarningLog : rdErrorLog;
      log->dp_dest = saved_[k];
      log->df_enabled = enabled_[k];
    }
  }
  // The error lines without RDKit's "[hh:mm:ss] " prefix, joined by "; ".
  std::string errors() const {
    std::istringstream in(errors_.str());
    std::string line, out;
    while (std::getline(in, line)) {
      if (line.size() > 11 && line[0] == '[' && line[9] == ']') line = line.substr(11);
      line = trim(line);
      if (line.empty()) continue;
      if (line.size() > 200) line = line.substr(0, 200) + "...";  // RDKit echoes the whole input
      out += (out.empty() ? "" : "; ") + line;
    }
    return out;
  }

 private:
  std::ostringstream errors_, discard_;
  std::ostream* saved_[2] = {nullptr, nullptr};
  bool enabled_[2] = {true, true};
};

smiles_label::Bond bond_code(RDKit::Bond::BondType t) {
  using BT = RDKit::Bond::BondType;
  switch (t) {
    case BT::SINGLE: return smiles_label::single;
    case BT::DOUBLE: return smiles_label::double_;
    case BT::TRIPLE: return smiles_label::triple;
    case BT::AROMATIC: return smiles_label::aromatic;
    case BT::QUADRUPLE: return smiles_label::quadruple;
    case BT::DATIVE:
    case BT::DATIVEONE:
    case BT::DATIVEL:
    case BT::DATIVER: return smiles_label::dative;
    default: return smiles_label::other;
  }
}

LabeledGraph to_graph(RDKit::ROMol& mol) {
  LabeledGraph g;
  const int64_t n = int64_t(mol.getNumAtoms());
  if (!mol.getRingInfo()->isInitialized()) RDKit::MolOps::findSSSR(mol);
  g.node_labels.resize(size_t(n));
  g.node_attrs = Dense<float>(n, 4);
  for (const RDKit::Atom* a : mol.atoms()) {
    const int64_t i = int64_t(a->getIdx());
    g.node_labels[size_t(i)] = smiles_label::atom(a->getAtomicNum(), a->getFormalCharge(), a->getIsAromatic());
    g.node_attrs(i, 0) = float(a->getFormalCharge());
    g.node_attrs(i, 1) = float(a->getTotalNumHs());
    g.node_attrs(i, 2) = a->getIsAromatic() ? 1.0f : 0.0f;
    g.node_attrs(i, 3) = mol.getRingInfo()->numAtomRings(a->getIdx()) > 0 ? 1.0f : 0.0f;
  }
  // Each atom's (neighbour, label) list, sorted: the CSR rows of the symmetric adjacency.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> nbr(static_cast<size_t>(n));
  for (const RDKit::Bond* b : mol.bonds()) {
    const auto u = int32_t(b->getBeginAtomIdx()), v = int32_t(b->getEndAtomIdx());
    const int32_t label = smiles_label::bond(bond_code(b->getBondType()), b->getIsConjugated());
    nbr[size_t(u)].emplace_back(v, label);
    nbr[size_t(v)].emplace_back(u, label);
  }
  g.adj.rows = g.adj.cols = n;
  g.adj.rowptr.assign(size_t(n) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    auto& row = nbr[size_t(i)];
    std::sort(row.begin(), row.end());
    for (const auto& [j, label] : row) {
      g.adj.col.push_back(j);
      g.edge_labels.push_back(label);
    }
    g.adj.rowptr[size_t(i) + 1] = int32_t(g.adj.col.size());
  }
  g.adj.touch();
  return g;
}
#endif

#ifdef TESSERA_WITH_RDKIT
// Parses one SMILES; false with `error` set when RDKit rejects it. `log` (may be null) holds
// what RDKit logged during the call. Never throws.
bool parse_unlocked(const std::string& smiles, LabeledGraph& out, std::string& error, const LogCapture* log) {
  if (trim(smiles).empty()) {
    error = "empty SMILES";
    return false;
  }
  std::unique_ptr<RDKit::RWMol> mol;
  std::string thrown;
  try {
    RDKit::SmilesParserParams params;  // sanitize, remove hydrogens: MolFromSmiles's defaults
    mol.reset(RDKit::SmilesToMol(smiles, params));
    if (mol && mol->getNumAtoms() == 0) {
      error = "no atoms";
      return false;
    }
    if (mol) {
      out = to_graph(*mol);
      return true;
    }
  } catch (const std::exception& e) {  // sanitization (valence, kekulization) and invariants
    thrown = e.what();
  } catch (...) {
    thrown = "unknown RDKit exception";
  }
  if (thrown.size() > 300) thrown = thrown.substr(0, 300) + "...";
  const std::string logged = log ? log->errors() : "";
  // Sanitization failures are both thrown and logged: say each thing once.
  const bool logged_new = !logged.empty() && logged.find(trim(thrown)) == std::string::npos;
  error = "RDKit: " + (thrown.empty() ? (logged.empty() ? std::string("parse failed") : logged)
                                      : thrown + (logged_new ? " (" + logged + ")" : ""));
  return false;
}

// RDKit's error and warning logs switched off for a batch (restored after).
class LogsOff {
 public:
  LogsOff() {
    for (int k = 0; k < 2; ++k)
      if (auto& log = k ? rdWarningLog : rdErrorLog) {
        enabled_[k] = log->df_enabled;
        log->df_enabled = false;
      }
  }
  ~LogsOff() {
    for (int k = 0; k < 2; ++k)
      if (auto& log = k ? rdWarningLog : rdErrorLog) log->df_enabled = enabled_[k];
  }

 private:
  bool enabled_[2] = {true, true};
};
#endif

// Parses every SMILES; error[i] is empty when smiles[i] parsed into graphs[i]. Throws only without
// RDKit. RDKit's parser is reentrant, so the batch runs in parallel with its logs off; the few
// failures are parsed again one at a time with the log captured, for RDKit's message.
void parse_batch(const std::vector<std::string>& smiles, std::vector<LabeledGraph>& graphs,
                 std::vector<std::string>& error) {
#ifdef TESSERA_WITH_RDKIT
  const int64_t n = int64_t(smiles.size());
  graphs.assign(smiles.size(), LabeledGraph{});
  error.assign(smiles.size(), std::string());
  std::lock_guard<std::mutex> lock(rdkit_mutex());
  {
    LogsOff off;
#pragma omp parallel for schedule(dynamic, 8) if (n > 16)
    for (int64_t i = 0; i < n; ++i) {
      try {  // nothing may leave an OpenMP region
        if (!parse_unlocked(smiles[size_t(i)], graphs[size_t(i)], error[size_t(i)], nullptr) &&
            error[size_t(i)].empty())
          error[size_t(i)] = "parse failed";
      } catch (...) {
        error[size_t(i)] = "out of memory";
      }
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (!error[size_t(i)].empty()) {
      LogCapture log;
      error[size_t(i)].clear();
      parse_unlocked(smiles[size_t(i)], graphs[size_t(i)], error[size_t(i)], &log);
    }
#else
  (void)smiles;
  (void)graphs;
  (void)error;
  fail(kNoRdkit);
#endif
}

// RFC 4180 fields of one line ("" inside quotes is a quote). False on an unterminated quote.
bool split_csv(std::string_view line, std::vector<std::string>& out) {
  out.clear();
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  if (quoted) return false;
  if (any || !out.empty()) out.push_back(std::move(field));
  return true;
}

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

bool have_rdkit() {
#ifdef TESSERA_WITH_RDKIT
  return true;
#else
  return false;
#endif
}

bool is_smiles_file(const std::string& path) {
  const std::string ext = lower(detail::graph_extension(path));
  return ext == ".csv" || ext == ".smi" || ext == ".smiles";
}

LabeledGraph read_smiles(const std::string& smiles) {
  std::vector<LabeledGraph> g;
  std::vector<std::string> error;
  parse_batch({smiles}, g, error);
  if (!error[0].empty()) fail("invalid SMILES ", shown_smiles(smiles), ": ", error[0]);
  return std::move(g[0]);
}

GraphCollection read_smiles(const std::vector<std::string>& smiles) {
  GraphCollection out;
  out.name = "smiles";
  std::vector<std::string> error;
  parse_batch(smiles, out.graphs, error);
  for (size_t i = 0; i < smiles.size(); ++i)
    if (!error[i].empty()) fail("invalid SMILES at index ", i, " ", shown_smiles(smiles[i]), ": ", error[i]);
  return out;
}

SmilesFile read_smiles_file(const std::string& path, const SmilesFileOptions& opt) {
  if (!have_rdkit()) fail(path, ": ", kNoRdkit);
  const std::string ext = lower(detail::graph_extension(path));
  const bool csv = ext == ".csv";
  if (!csv && ext != ".smi" && ext != ".smiles")
    fail(path, ": not a SMILES file (expected .csv, .smi or .smiles, optionally .gz)");
  SmilesFile out;
  {
    std::string stem = std::filesystem::path(path).filename().string();
    if (detail::ends_with(stem, ".gz")) stem.resize(stem.size() - 3);
    out.collection.name = std::filesystem::path(stem).stem().string();
  }
  detail::LineReader in(path);
  std::string_view line;
  std::vector<std::string> fields;
  size_t column = 0;
  std::string column_name = "smiles";
  bool header_seen = false;
  int64_t row = 0;
  // Rows are read first and parsed in batches (in parallel); errors keep their file line.
  std::vector<std::string> smiles_of_row;
  std::vector<int64_t> line_of_row;
  auto parse_rows = [&] {
    std::vector<LabeledGraph> graphs;
    std::vector<std::string> error;
    parse_batch(smiles_of_row, graphs, error);
    const int64_t first_row = row - int64_t(smiles_of_row.size());
    for (size_t k = 0; k < graphs.size(); ++k) {
      if (error[k].empty()) {
        out.collection.graphs.push_back(std::move(graphs[k]));
        out.rows.push_back(first_row + int64_t(k));
        out.smiles.push_back(std::move(smiles_of_row[k]));
        continue;
      }
      std::ostringstream msg;
      msg << in.path() << ":" << line_of_row[k] << ": row " << first_row + int64_t(k) << ": invalid SMILES "
          << shown_smiles(smiles_of_row[k]) << ": " << error[k];
      if (!opt.skip_invalid) fail(msg.str());
      out.skipped.push_back(msg.str());
    }
    smiles_of_row.clear();
    line_of_row.clear();
  };
  while (in.next(line)) {
    if (opt.limit > 0 && int64_t(out.collection.graphs.size()) >= opt.limit) break;
    if (blank(line)) continue;
    std::string smiles;
    if (csv) {
      if (!split_csv(line, fields)) in.fail_here("unterminated quoted field");
      if (!header_seen) {
        header_seen = true;
        // Exact name first, else the single case-insensitive match.
        const std::string want = opt.column.empty() ? "smiles" : opt.column;
        std::vector<size_t> exact, loose;
        for (size_t k = 0; k < fields.size(); ++k) {
          const std::string f = trim(fields[k]);
          if (f == want) exact.push_back(k);
          if (lower(f) == lower(want)) loose.push_back(k);
        }
        const auto& hit = !exact.empty() ? exact : loose;
        if (hit.size() != 1) {
          std::string names;
          for (const auto& f : fields) names += (names.empty() ? "" : ", ") + trim(f);
          if (names.size() > 300) names = names.substr(0, 300) + ", ...";
          in.fail_here(hit.empty() ? "no column named '" : "several columns named '", want,
                       "' in the header (columns: ", names, "); name the SMILES column");
        }
        column = hit[0];
        column_name = trim(fields[column]);
        continue;
      }
      if (fields.size() <= column)
        in.fail_here("row ", row, " has ", fields.size(), " fields; the SMILES column '", column_name, "' is field ",
                     column + 1);
      smiles = trim(fields[column]);
    } else {
      const std::string t = trim(line);
      if (t[0] == '#') continue;
      smiles = t.substr(0, t.find_first_of(" \t"));  // then an optional name
      if (!header_seen) {
        header_seen = true;
        if (lower(smiles) == "smiles") continue;
      }
    }
    smiles_of_row.push_back(std::move(smiles));
    line_of_row.push_back(in.line_number());
    ++row;
    // Batches of 4096 rows keep errors in file order and memory bounded; with a limit, a batch
    // ends once it could complete the count (more batches follow when rows were skipped).
    const int64_t wanted = opt.limit > 0 ? opt.limit - int64_t(out.collection.graphs.size()) : 4096;
    if (int64_t(smiles_of_row.size()) >= std::min<int64_t>(wanted, 4096)) parse_rows();
  }
  parse_rows();
  if (csv && !header_seen) fail(path, ": empty file (no header line)");
  if (out.collection.graphs.empty())
    fail(path, ": no molecules", out.skipped.empty() ? "" : " (every row was invalid; first: " + out.skipped[0] + ")");
  return out;
}

}  // namespace tessera::io
