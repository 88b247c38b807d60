#pragma once
// Running the tessera binary from tests: it is found next to the test binary's build tree
// (build/apps/cli/tessera) or at $TESSERA_CLI; tests skip when it has not been built.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace tessera::testing {

inline std::filesystem::path cli_binary() {
  if (const char* e = std::getenv("TESSERA_CLI")) return e;
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "apps" / "cli" / "tessera";
}

struct CliResult {
  int code = -1;
  std::string out;  // stdout + stderr
};

// Runs `tessera ARGS` through the shell and returns its exit code and combined output.
inline CliResult run_cli(const std::string& args) {
  const std::string cmd = cli_binary().string() + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace tessera::testing

// Skips the current test when the tessera binary has not been built.
#define TESSERA_REQUIRE_CLI()                                                                       \
  do {                                                                                              \
    if (!std::filesystem::exists(::tessera::testing::cli_binary()))                                 \
      GTEST_SKIP() << "tessera binary not built at " << ::tessera::testing::cli_binary()            \
                   << " (build target tessera)";                                                   \
  } while (0)
