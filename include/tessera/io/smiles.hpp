#pragma once
// Molecules from SMILES (through RDKit, an optional dependency) as the labeled graphs the
// marginalized graph kernel consumes: the same LabeledGraph layout as a TU chemical collection,
// so the same base kernels (KroneckerDelta on labels, SquareExponential on attributes) apply.
//
// Graph: heavy atoms are nodes in RDKit atom order, hydrogens implicit (RDKit's default SMILES
// parse and sanitization, as MolFromSmiles); every bond is two CSR entries (both directions),
// no self loops, unweighted (adj.values empty). Disconnected SMILES ("[Na+].[Cl-]") give one
// graph with several components.
//
// Node label (int32) = Z + 1000 * aromatic + 10000 * formal_charge, e.g. C 6, aromatic c 1006,
//   N+ 10007, [O-] -9992. A neutral non-aromatic atom's label is its atomic number, as in the
//   node_labels of the RDKit-derived TU sets in ../shared/data/moleculenet.
// Node attributes (n x 4, float): formal charge, total number of H, is aromatic, is in a ring
//   (the layout of those TU sets' node_attributes).
// Edge label (int32) = bond code + 10 * conjugated; codes 1 single, 2 double, 3 triple,
//   4 aromatic (its own order, not 1.5, so KroneckerDelta keeps it apart; RDKit marks aromatic
//   bonds conjugated, so they read 14), 5 quadruple, 6 dative, 7 any other RDKit bond type.
//   label % 10 is the TU sets' edge label.
//
// Built without RDKit every reader throws tessera::Error "tessera was built without RDKit ...".
// Invalid SMILES (syntax, valence) throw tessera::Error naming the input (and file:line, data
// row, for files) with RDKit's message; nothing crashes and nothing half-read is returned.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/dataset.hpp"

namespace tessera::io {

// True when this build can parse SMILES.
bool have_rdkit();

namespace smiles_label {
inline constexpr int32_t kAromatic = 1000;
inline constexpr int32_t kCharge = 10000;
inline constexpr int32_t kConjugated = 10;
enum Bond : int32_t { single = 1, double_ = 2, triple = 3, aromatic = 4, quadruple = 5, dative = 6, other = 7 };
inline int32_t atom(int atomic_number, int formal_charge, bool aromatic) {
  return int32_t(atomic_number) + (aromatic ? kAromatic : 0) + kCharge * int32_t(formal_charge);
}
inline int32_t bond(Bond code, bool conjugated) { return int32_t(code) + (conjugated ? kConjugated : 0); }
}  // namespace smiles_label

// One molecule. Errors name the SMILES (cut to 80 characters) and RDKit's message.
LabeledGraph read_smiles(const std::string& smiles);
// Several molecules; errors also name the list index.
GraphCollection read_smiles(const std::vector<std::string>& smiles);

struct SmilesFileOptions {
  // CSV: header name of the SMILES column (exact, else the one case-insensitive match);
  // "" = the column named "smiles" in any case. .smi files: unused (SMILES is the first field).
  std::string column;
  bool skip_invalid = false;      // drop rows RDKit rejects (listed in `skipped`) instead of failing
  int64_t limit = 0;              // > 0: stop after this many molecules (the rest is not read)
};

struct SmilesFile {
  GraphCollection collection;     // name = file name without extensions
  std::vector<int64_t> rows;      // 0-based data row of each graph (header not counted)
  std::vector<std::string> smiles;     // the input of each graph
  std::vector<std::string> skipped;    // "file:line: row R: message" per dropped row
};

// A CSV file with a header line (MoleculeNet: delaney-processed.csv `smiles`, bace.csv.gz `mol`;
// quoted fields, CRLF and blank lines allowed), or a .smi/.smiles file (one molecule per line,
// SMILES then an optional name, whitespace separated; '#' comments and blank lines skipped; a
// first line whose first field is "smiles" is a header). Both may be gzipped (.gz).
SmilesFile read_smiles_file(const std::string& path, const SmilesFileOptions& opt = {});

// True for paths read_smiles_file accepts by name: .csv, .smi, .smiles (optionally .gz).
bool is_smiles_file(const std::string& path);

}  // namespace tessera::io
