// SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include "driver/driver.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return nhlo::RunMain(std::vector<std::string>(argv + 1, argv + argc), std::cin, std::cout, std::cerr);
}
