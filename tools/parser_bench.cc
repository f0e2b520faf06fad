// SPDX-License-Identifier: Apache-2.0
// nhlo-parser-bench: generates HLO modules of 10k, 100k and 1M instructions with a realistic
// mix (fusion computations, a while loop, dots, convolutions, big constants, long metadata),
// then measures parse+verify and print throughput in MB/s and the peak resident memory. Each
// size runs in a child process so its peak RSS is its own. A benchmark, not a test: it prints
// figures and asserts nothing.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "parser/parser.h"

namespace {

// Deterministic text generator (no randomness from the environment).
struct Gen {
  uint64_t state = 0x243f6a8885a308d3ULL;
  uint64_t Next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

std::string Metadata(Gen& g, int64_t i) {
  return ", metadata={op_type=\"" + std::string(i % 3 ? "dot_general" : "add") + "\" op_name=\"jit(train_step)/jit(main)/transformer/layer_" +
         std::to_string(i % 48) + "/attention/dot_general[dimension_numbers=(((2,), (1,)), ((0,), (0,)))]\" source_file=\"/home/user/model/layers.py\" source_line=" +
         std::to_string(100 + g.Next() % 900) + "}";
}

// About `target` instructions in the entry computation plus a few small computations.
std::string Generate(int64_t target) {
  Gen g;
  std::string s;
  s.reserve(static_cast<size_t>(target) * 200);
  s += "HloModule bench_" + std::to_string(target) + ", entry_computation_layout={(f32[64,256]{1,0}, f32[256,256]{1,0})->f32[64,256]{1,0}}\n\n";
  s += "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n\n";
  s += "%fused_computation (p0: f32[64,256], p1: f32[64,256]) -> f32[64,256] {\n  %p0 = f32[64,256]{1,0} parameter(0)\n  %p1 = f32[64,256]{1,0} parameter(1)\n"
       "  %m = f32[64,256]{1,0} multiply(%p0, %p1)\n  ROOT %t = f32[64,256]{1,0} tanh(%m)\n}\n\n";
  s += "%cond (c: (s32[], f32[64,256])) -> pred[] {\n  %c = (s32[], f32[64,256]{1,0}) parameter(0)\n  %i = s32[] get-tuple-element(%c), index=0\n"
       "  %n = s32[] constant(10)\n  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n\n";
  s += "%body (b: (s32[], f32[64,256])) -> (s32[], f32[64,256]) {\n  %b = (s32[], f32[64,256]{1,0}) parameter(0)\n  %i = s32[] get-tuple-element(%b), index=0\n"
       "  %x = f32[64,256]{1,0} get-tuple-element(%b), index=1\n  %one = s32[] constant(1)\n  %j = s32[] add(%i, %one)\n  %y = f32[64,256]{1,0} exponential(%x)\n"
       "  ROOT %r = (s32[], f32[64,256]{1,0}) tuple(%j, %y)\n}\n\n";
  s += "ENTRY %main (x: f32[64,256], w: f32[256,256]) -> f32[64,256] {\n  %x = f32[64,256]{1,0} parameter(0)\n  %w = f32[256,256]{1,0} parameter(1)\n";
  s += "  %img = f32[8,32,32,16]{3,2,1,0} parameter(2)\n  %ker = f32[3,3,16,16]{3,2,1,0} parameter(3)\n";
  std::string prev = "x";
  for (int64_t i = 0; i < target; ++i) {
    std::string name = "v" + std::to_string(i);
    switch (g.Next() % 16) {
      case 0: case 1:
        s += "  %" + name + " = f32[64,256]{1,0} dot(%" + prev + ", %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}" + Metadata(g, i) + "\n";
        break;
      case 2:
        s += "  %" + name + " = f32[64,256]{1,0} fusion(%" + prev + ", %x), kind=kLoop, calls=%fused_computation" + Metadata(g, i) + "\n";
        break;
      case 3: {
        s += "  %" + name + ".c = f32[8,32,32,16]{3,2,1,0} convolution(%img, %ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f" + Metadata(g, i) + "\n";
        s += "  %" + name + " = f32[64,256]{1,0} add(%" + prev + ", %x)\n";
        ++i;
        break;
      }
      case 4: {
        // A big constant: 256 floats.
        s += "  %" + name + ".k = f32[256]{0} constant({";
        for (int k = 0; k < 256; ++k) s += (k ? ", " : "") + std::to_string(static_cast<int>(g.Next() % 2000) - 1000) + "." + std::to_string(g.Next() % 100);
        s += "})\n  %" + name + ".b = f32[64,256]{1,0} broadcast(%" + name + ".k), dimensions={1}\n";
        s += "  %" + name + " = f32[64,256]{1,0} multiply(%" + prev + ", %" + name + ".b)" + Metadata(g, i) + "\n";
        i += 2;
        break;
      }
      case 5: {
        s += "  %" + name + ".z = s32[] constant(0)\n  %" + name + ".t = (s32[], f32[64,256]{1,0}) tuple(%" + name + ".z, %" + prev + ")\n";
        s += "  %" + name + ".w = (s32[], f32[64,256]{1,0}) while(%" + name + ".t), condition=%cond, body=%body\n";
        s += "  %" + name + " = f32[64,256]{1,0} get-tuple-element(%" + name + ".w), index=1\n";
        i += 3;
        break;
      }
      case 6:
        s += "  %" + name + ".i = f32[] constant(0)\n";
        s += "  %" + name + ".r = f32[64]{0} reduce(%" + prev + ", %" + name + ".i), dimensions={1}, to_apply=%add\n";
        s += "  %" + name + " = f32[64,256]{1,0} broadcast(%" + name + ".r), dimensions={0}\n";
        i += 2;
        break;
      default:
        s += "  %" + name + " = f32[64,256]{1,0} " + (g.Next() % 2 ? "add" : "maximum") + "(%" + prev + ", %x)" + Metadata(g, i) + "\n";
        break;
    }
    prev = name;
  }
  s += "  ROOT %out = f32[64,256]{1,0} copy(%" + prev + ")\n}\n";
  return s;
}

long PeakRssKb() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void RunOne(int64_t target) {
  std::string text = Generate(target);
  double mb = text.size() / 1e6;
  long base_kb = PeakRssKb();
  auto t0 = std::chrono::steady_clock::now();
  auto module = nhlo::ParseModule("bench.hlo", std::move(text));
  if (!module.ok()) {
    std::fprintf(stderr, "%s", module.status().ToString().c_str());
    std::exit(1);
  }
  auto t_parsed = std::chrono::steady_clock::now();
  nhlo::Status verified = nhlo::VerifyModule(**module);
  auto t1 = std::chrono::steady_clock::now();
  if (!verified.ok()) {
    std::fprintf(stderr, "%s", verified.ToString().c_str());
    std::exit(1);
  }
  long parsed_kb = PeakRssKb();
  std::string printed = nhlo::PrintModule(**module);
  auto t2 = std::chrono::steady_clock::now();
  double parse_s = std::chrono::duration<double>(t1 - t0).count();
  double print_s = std::chrono::duration<double>(t2 - t1).count();
  size_t instructions = 0;
  for (const auto& c : (*module)->computations) instructions += c->instructions.size();
  double verify_share = std::chrono::duration<double>(t1 - t_parsed).count() / parse_s;
  std::printf("%9zu instructions  %8.1f MB   parse+verify %7.1f MB/s (%6.3f s, %2.0f%% verify)   print %7.1f MB/s (%6.3f s)   peak RSS %7.1f MB = %.2fx the text (%.2fx beyond the text)\n",
              instructions, mb, mb / parse_s, parse_s, 100 * verify_share, printed.size() / 1e6 / print_s, print_s, parsed_kb / 1024.0,
              parsed_kb / 1024.0 / (mb / 1.048576), (parsed_kb - base_kb) / 1024.0 / (mb / 1.048576));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  }
  std::printf("nhlo parser benchmark (one core, each size in its own process)\n");
  std::fflush(stdout);
  for (int64_t n : sizes) {
    pid_t pid = fork();
    if (pid == 0) {
      RunOne(n);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
