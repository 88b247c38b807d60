// io::write_dense: a Gram matrix as .npy (read back byte by byte: NumPy format 1.0 header, then the
// doubles) and as .csv (read back to the same doubles), and refusal of any other name before a
// file is created; io::write_file.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "io_test_support.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera {
namespace {

using testing::TempDir;

Dense<double> sample(int64_t rows, int64_t cols) {  // values whose text form is easy to get wrong
  Dense<double> m(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m(i, j) = (i - j) / 3.0 + (i == j ? 1e-300 : 0.0) + double(j) * 1e17;
  if (rows > 0 && cols > 1) m(0, 1) = std::numeric_limits<double>::denorm_min();
  return m;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(IoDense, NpyHeaderAndDataReadBack) {
  TempDir dir;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 3}, {1, 7}, {0, 0}, {40, 5}}) {
    const auto m = sample(rows, cols);
    const std::string path = dir.file("gram.npy");
    io::write_dense(path, m);
    const std::string bytes = slurp(path);
    ASSERT_GE(bytes.size(), 10u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t header = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
    EXPECT_EQ((10 + header) % 64, 0u) << "the data must start 64-byte aligned";
    const std::string dict = bytes.substr(10, header);
    EXPECT_EQ(dict.back(), '\n');
    EXPECT_NE(dict.find("'descr': '<f8'"), std::string::npos) << dict;
    EXPECT_NE(dict.find("'fortran_order': False"), std::string::npos) << dict;
    EXPECT_NE(dict.find("'shape': (" + std::to_string(rows) + ", " + std::to_string(cols) + ")"), std::string::npos)
        << dict;
    ASSERT_EQ(bytes.size(), 10 + header + m.data.size() * sizeof(double));
    std::vector<double> back(m.data.size());
    if (!back.empty()) std::memcpy(back.data(), bytes.data() + 10 + header, back.size() * sizeof(double));
    EXPECT_EQ(back, m.data);
    EXPECT_TRUE(dir.no_temp_files());
  }
}

TEST(IoDense, CsvReadsBackToTheSameDoubles) {
  TempDir dir;
  const auto m = sample(6, 4);
  const std::string path = dir.file("gram.csv");
  io::write_dense(path, m);
  std::istringstream text(slurp(path));
  std::string line;
  int64_t i = 0;
  while (std::getline(text, line)) {
    std::istringstream row(line);
    std::string cell;
    int64_t j = 0;
    while (std::getline(row, cell, ',')) {
      ASSERT_LT(j, m.cols) << line;
      EXPECT_EQ(std::strtod(cell.c_str(), nullptr), m(i, j)) << "row " << i << " column " << j << ": " << cell;
      ++j;
    }
    EXPECT_EQ(j, m.cols) << line;
    ++i;
  }
  EXPECT_EQ(i, m.rows);
  EXPECT_TRUE(dir.no_temp_files());
}

TEST(IoDense, OtherNamesAreRefusedBeforeAnyFileExists) {
  TempDir dir;
  for (const char* name : {"gram.txt", "gram", "gram.npy.gz", "gram.npz"}) {
    const std::string path = dir.file(name);
    EXPECT_THROW(io::check_dense_path(path), Error) << name;
    try {
      io::write_dense(path, sample(2, 2));
      ADD_FAILURE() << name << " was written";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("written as .npy (float64) or .csv[.gz]"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path)) << name;
    EXPECT_TRUE(dir.no_temp_files()) << name;
  }
  EXPECT_NO_THROW(io::check_dense_path(dir.file("gram.csv.gz")));
}

TEST(IoDense, FilesAreWrittenWholeOrNotAtAll) {
  TempDir dir;
  const std::string path = dir.file("perm.txt");
  testing::write_text(path, "an older file\n");
  io::write_file(path, "2\n0\n1\n");
  EXPECT_EQ(slurp(path), "2\n0\n1\n");
  EXPECT_TRUE(dir.no_temp_files());
  EXPECT_THROW(io::write_file(dir.file("no/such/dir/perm.txt"), "x"), Error);
  EXPECT_EQ(slurp(path), "2\n0\n1\n");
}

}  // namespace
}  // namespace tessera
