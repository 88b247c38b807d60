#include <gtest/gtest.h>

#include <cstdio>

#include "support/testing.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::printf("tessera tests: seed base %llu (set TESSERA_TEST_SEED to reproduce)\n",
              static_cast<unsigned long long>(tessera::testing::seed_base()));
  return RUN_ALL_TESTS();
}
