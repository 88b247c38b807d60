// write_dense (a float64 matrix as .npy or .csv) through AtomicOutput (temporary file, renamed on
// success, removed on failure).
#include <string>

#include "io/atomic_output.hpp"
#include "io/text_input.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

namespace {
bool is_npy(const std::string& path) { return detail::ends_with(path, ".npy"); }
bool is_csv(const std::string& path) { return detail::ends_with(path, ".csv") || detail::ends_with(path, ".csv.gz"); }

// NumPy format 1.0: magic, version, a little-endian u16 header length, then a Python dict literal
// padded with spaces to a multiple of 64 bytes and ended by '\n'.
void put_npy_header(detail::AtomicOutput& out, int64_t rows, int64_t cols) {
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                     std::to_string(cols) + "), }";
  const size_t preamble = 10;  // magic (6) + version (2) + header length (2)
  dict.append((64 - (preamble + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  const unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(dict.size() & 0xff),
                                  static_cast<unsigned char>(dict.size() >> 8)};
  out.write(head, sizeof head);
  out.put(dict);
}
}  // namespace

void check_dense_path(const std::string& path) {
  TESSERA_CHECK(is_npy(path) || is_csv(path), path, ": a dense matrix is written as .npy (float64) or .csv[.gz]");
}

void write_dense(const std::string& path, const Dense<double>& m) {
  check_dense_path(path);  // before the temporary file exists
  detail::AtomicOutput out(path);
  if (is_npy(path)) {
    put_npy_header(out, m.rows, m.cols);
    out.write(m.data.data(), m.data.size() * sizeof(double));
  } else {
    for (int64_t i = 0; i < m.rows; ++i) {
      for (int64_t j = 0; j < m.cols; ++j) {
        if (j) out.put(',');
        out.put_float(m(i, j));
      }
      out.put('\n');
    }
  }
  out.commit();
}

}  // namespace tessera::io
