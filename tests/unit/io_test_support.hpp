#pragma once
// Helpers for the loader tests: a private temporary directory, file writers (plain and gzip),
// an "expect tessera::Error mentioning these parts" check, and exact CSR comparison.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>

#include "support/testing.hpp"
#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::testing {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("tessera_io_") + std::to_string(::getpid()) + "_" +
                       (info ? std::string(info->test_suite_name()) + "_" + info->name() : "x");
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }
  // True when no writer left a "<name>.tmp.<pid>" file behind.
  bool no_temp_files() const {
    for (const auto& e : std::filesystem::directory_iterator(path_))
      if (e.path().filename().string().find(".tmp.") != std::string::npos) return false;
    return true;
  }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  f << content;
  ASSERT_TRUE(f.good()) << path;
}

inline void write_gz(const std::string& path, const std::string& content) {
  gzFile g = gzopen(path.c_str(), "wb6");
  ASSERT_NE(g, nullptr) << path;
  if (!content.empty()) {
    ASSERT_EQ(gzwrite(g, content.data(), unsigned(content.size())), int(content.size()));
  }
  ASSERT_EQ(gzclose(g), Z_OK);
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs fn, which must throw tessera::Error whose message contains every part.
inline void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
  } catch (const tessera::Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected tessera::Error, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected tessera::Error, nothing was thrown";
}

template <class I>
void expect_same_csr(const Csr<I>& a, const Csr<I>& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.rowptr, b.rowptr);
  EXPECT_EQ(a.col, b.col);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t k = 0; k < a.values.size(); ++k) ASSERT_EQ(a.values[k], b.values[k]) << "entry " << k;
}

// A random graph with the nasty cases (empty rows, a huge row, sizes off the tile grid).
inline Csr<int64_t> random_graph(uint64_t seed, bool weighted, int64_t n = 0) {
  std::mt19937_64 rng(seed);
  NastyOptions o;
  o.rows = o.cols = n > 0 ? n : 1 + int64_t(rng() % 700);
  o.avg_degree = 1 + double(rng() % 9);
  o.huge_row_degree = o.rows > 2 ? int64_t(rng() % 400) : 0;
  o.weighted = weighted;
  return build_csr(nasty_coo<int64_t>(o, seed), BuildOptions{});
}

}  // namespace tessera::testing
