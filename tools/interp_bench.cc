// SPDX-License-Identifier: Apache-2.0
// nhlo-interp-bench: the interpreter's speed on fixed kernels, argument generation and result
// printing, and on whole models of the corpus. One line per case: time and rate (G elements/s
// or GFLOP/s). A kernel's time is its bundle's own (ExecuteOptions::profile), best of --repeat
// runs (or of as many as numpy's line takes, if more) after one untimed run, so binding
// arguments and copying results out are not counted; a model's time is the whole
// `nhlo-run FILE --random-args=1 --print-values=none` (parse, passes, bundles, arguments, run)
// in a child process under --model-timeout. With --numpy, tools/interp-bench-numpy.py
// measures the same shapes with numpy in the same run and a ratio column compares them
// (numpy is a measuring stick only; nothing else needs it). The script stays running and runs
// a case when asked: a round of numpy's runs, a round of nhlo's, again both, each side's best
// taken, so a drift of this VM's speed (it moves within seconds) reaches both sides.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "child_run.h"
#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/driver.h"
#include "driver/print_values.h"
#include "driver/tensor_files.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "support/parallel.h"

#ifndef NHLO_SOURCE_ROOT
#define NHLO_SOURCE_ROOT "."
#endif

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// One kernel: a module whose root bundle `r` is the kernel, and the work it does per run.
struct KernelCase {
  std::string name;   // also the key the numpy script prints
  std::string shape;  // for the reader
  std::string hlo;
  double work;  // elements or floating-point operations
  bool flops;
  // Timed runs at least, whatever --repeat says: numpy's count for the case in
  // interp-bench-numpy.py (20 in cache, 10 for 4M and the chains), so both sides take the best of
  // as many runs. A short case is at the mercy of one interrupted run otherwise.
  int min_runs = 1;
};

const char* kAdd = "add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }\n";
const char* kLess =
    "lt { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT c = pred[] compare(x, y), direction=LT }\n";

std::string Module(const std::string& computations, const std::string& entry) {
  return "HloModule bench\n" + computations + "ENTRY e {\n" + entry + "}\n";
}

// A pre-LN transformer block (issue 32): LayerNorm, a QKV projection, 8-head softmax attention,
// an output projection, LayerNorm and a tanh-GELU MLP, with residual adds; `layers` of them on
// the same weights, S = 256, D = 512, MLP 2048. tools/interp-bench-numpy.py writes the same
// computation in numpy. Work is the dots' FLOPs.
std::string TransformerBlockHlo(int layers) {
  std::string h =
      "HloModule transformer\n"
      "add_f { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
      "max_f { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }\n"
      "ENTRY e {\n"
      "  x0 = f32[256,512] parameter(0)\n  wqkv = f32[512,1536] parameter(1)\n  wo = f32[512,512] parameter(2)\n"
      "  w1 = f32[512,2048] parameter(3)\n  w2 = f32[2048,512] parameter(4)\n  g1 = f32[512] parameter(5)\n"
      "  b1 = f32[512] parameter(6)\n  g2 = f32[512] parameter(7)\n  b2 = f32[512] parameter(8)\n"
      "  zero = f32[] constant(0)\n  ninf = f32[] constant(-inf)\n  invd = f32[] constant(0.001953125)\n"
      "  eps = f32[] constant(1e-05)\n  scale = f32[] constant(0.125)\n  half = f32[] constant(0.5)\n"
      "  one = f32[] constant(1)\n  c0 = f32[] constant(0.7978845608)\n  c1 = f32[] constant(0.044715)\n";
  auto line = [&h](const std::string& text) { h += "  " + text + "\n"; };
  const std::string sd = "f32[256,512]", sh = "f32[8,256,256]", sm = "f32[256,2048]";
  auto layer_norm = [&](const std::string& p, const std::string& x, const std::string& g, const std::string& b) {
    line(p + "sum = f32[256] reduce(" + x + ", zero), dimensions={1}, to_apply=add_f");
    line(p + "invd = f32[256] broadcast(invd), dimensions={}");
    line(p + "mean = f32[256] multiply(" + p + "sum, " + p + "invd)");
    line(p + "meanb = " + sd + " broadcast(" + p + "mean), dimensions={0}");
    line(p + "c = " + sd + " subtract(" + x + ", " + p + "meanb)");
    line(p + "sq = " + sd + " multiply(" + p + "c, " + p + "c)");
    line(p + "vsum = f32[256] reduce(" + p + "sq, zero), dimensions={1}, to_apply=add_f");
    line(p + "var = f32[256] multiply(" + p + "vsum, " + p + "invd)");
    line(p + "epsb = f32[256] broadcast(eps), dimensions={}");
    line(p + "ve = f32[256] add(" + p + "var, " + p + "epsb)");
    line(p + "r = f32[256] rsqrt(" + p + "ve)");
    line(p + "rb = " + sd + " broadcast(" + p + "r), dimensions={0}");
    line(p + "n = " + sd + " multiply(" + p + "c, " + p + "rb)");
    line(p + "gb = " + sd + " broadcast(" + g + "), dimensions={1}");
    line(p + "bb = " + sd + " broadcast(" + b + "), dimensions={1}");
    line(p + "ng = " + sd + " multiply(" + p + "n, " + p + "gb)");
    line(p + "out = " + sd + " add(" + p + "ng, " + p + "bb)");
    return p + "out";
  };
  auto dot2 = [&](const std::string& name, const std::string& type, const std::string& a, const std::string& b) {
    line(name + " = " + type + " dot(" + a + ", " + b + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  };
  std::string x = "x0";
  for (int l = 0; l < layers; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    std::string ln1 = layer_norm(p + "ln1_", x, "g1", "b1");
    dot2(p + "qkv", "f32[256,1536]", ln1, "wqkv");
    const char* parts[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      line(p + parts[i] + " = " + sd + " slice(" + p + "qkv), slice={[0:256], [" + std::to_string(512 * i) + ":" +
           std::to_string(512 * (i + 1)) + "]}");
      line(p + parts[i] + "3 = f32[256,8,64] reshape(" + p + parts[i] + ")");
    }
    line(p + "s = " + sh + " dot(" + p + "q3, " + p +
         "k3), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={2}");
    line(p + "scb = " + sh + " broadcast(scale), dimensions={}");
    line(p + "ss = " + sh + " multiply(" + p + "s, " + p + "scb)");
    line(p + "mx = f32[8,256] reduce(" + p + "ss, ninf), dimensions={2}, to_apply=max_f");
    line(p + "mxb = " + sh + " broadcast(" + p + "mx), dimensions={0,1}");
    line(p + "sh = " + sh + " subtract(" + p + "ss, " + p + "mxb)");
    line(p + "e = " + sh + " exponential(" + p + "sh)");
    line(p + "es = f32[8,256] reduce(" + p + "e, zero), dimensions={2}, to_apply=add_f");
    line(p + "esb = " + sh + " broadcast(" + p + "es), dimensions={0,1}");
    line(p + "p = " + sh + " divide(" + p + "e, " + p + "esb)");
    line(p + "a = f32[8,256,64] dot(" + p + "p, " + p +
         "v3), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}");
    line(p + "at = f32[256,8,64] transpose(" + p + "a), dimensions={1,0,2}");
    line(p + "a2 = " + sd + " reshape(" + p + "at)");
    dot2(p + "o", sd, p + "a2", "wo");
    line(p + "x1 = " + sd + " add(" + x + ", " + p + "o)");
    std::string ln2 = layer_norm(p + "ln2_", p + "x1", "g2", "b2");
    dot2(p + "h", sm, ln2, "w1");
    // 0.5 h (1 + tanh(c0 (h + c1 h^3)))
    for (auto [name, scalar] :
         {std::pair{"c1b", "c1"}, std::pair{"c0b", "c0"}, std::pair{"oneb", "one"}, std::pair{"halfb", "half"}})
      line(p + name + " = " + sm + " broadcast(" + scalar + "), dimensions={}");
    line(p + "h2 = " + sm + " multiply(" + p + "h, " + p + "h)");
    line(p + "h3 = " + sm + " multiply(" + p + "h2, " + p + "h)");
    line(p + "t1 = " + sm + " multiply(" + p + "h3, " + p + "c1b)");
    line(p + "t2 = " + sm + " add(" + p + "h, " + p + "t1)");
    line(p + "t3 = " + sm + " multiply(" + p + "t2, " + p + "c0b)");
    line(p + "t4 = " + sm + " tanh(" + p + "t3)");
    line(p + "t5 = " + sm + " add(" + p + "t4, " + p + "oneb)");
    line(p + "t6 = " + sm + " multiply(" + p + "h, " + p + "halfb)");
    line(p + "gelu = " + sm + " multiply(" + p + "t6, " + p + "t5)");
    dot2(p + "m", sd, p + "gelu", "w2");
    line((l + 1 == layers ? "ROOT " : "") + p + "x2 = " + sd + " add(" + p + "x1, " + p + "m)");
    x = p + "x2";
  }
  return h + "}\n";
}

std::vector<KernelCase> Kernels() {
  std::vector<KernelCase> cases;
  const int64_t n16m = int64_t(1) << 24, n1m = int64_t(1) << 20;
  const std::string v16m = std::to_string(n16m), v1m = std::to_string(n1m);
  for (const char* type : {"f32", "bf16"}) {
    for (const char* op : {"add", "multiply"}) {
      std::string t = std::string(type) + "[" + v16m + "]";
      cases.push_back({std::string(op) + " " + type, "16M",
                       Module("", "  a = " + t + " parameter(0)\n  b = " + t + " parameter(1)\n  ROOT r = " + t + " " +
                                      op + "(a, b)\n"),
                       double(n16m), false});
    }
    for (const char* op : {"exponential", "tanh"}) {
      std::string t = std::string(type) + "[" + v16m + "]";
      cases.push_back({std::string(op == std::string("exponential") ? "exp" : op) + " " + type, "16M",
                       Module("", "  a = " + t + " parameter(0)\n  ROOT r = " + t + " " + op + "(a)\n"), double(n16m),
                       false});
    }
  }
  // In cache (L1/L2 of one core, and 1M beyond it): where a whole program's elementwise ops run.
  for (auto [size, label] :
       {std::pair{int64_t(1) << 16, "64K"}, std::pair{int64_t(1) << 18, "256K"}, std::pair{int64_t(1) << 20, "1M"}})
    for (const char* op : {"add", "multiply"}) {
      std::string t = "f32[" + std::to_string(size) + "]";
      cases.push_back({std::string(op) + " f32 " + label, label,
                       Module("", "  a = " + t + " parameter(0)\n  b = " + t + " parameter(1)\n  ROOT r = " + t + " " +
                                      op + "(a, b)\n"),
                       double(size), false, 20});
    }
  // Chains of elementwise ops, the fused executor's case (issue 32): 64 ops cycling add,
  // multiply, subtract, maximum with a second operand over 256K f32 (in L2), and 32 adds over 4M
  // (in memory). Work is element-ops: 64 x 256K and 32 x 4M.
  for (auto [name, size, label, length, cycle] :
       {std::tuple{"chain64 f32 256K", int64_t(1) << 18, "256K x 64 ops", 64, 4},
        std::tuple{"chain32 add f32 4M", int64_t(1) << 22, "4M x 32 adds", 32, 1}}) {
    std::string t = "f32[" + std::to_string(size) + "]",
                body = "  x = " + t + " parameter(0)\n  y = " + t + " parameter(1)\n", prev = "x";
    const char* ops[] = {"add", "multiply", "subtract", "maximum"};
    for (int i = 0; i < length; ++i) {
      std::string v = i + 1 == length ? "r" : "v" + std::to_string(i);
      body += std::string(i + 1 == length ? "  ROOT " : "  ") + v + " = " + t + " " + ops[i % cycle] + "(" + prev +
              ", y)\n";
      prev = v;
    }
    cases.push_back({name, label, Module("", body), double(size) * length, false, 10});
  }
  for (const char* op : {"add", "multiply"}) {
    std::string t = "f32[" + std::to_string(int64_t(1) << 22) + "]";
    cases.push_back({std::string(op) + " f32 4M", "4M",
                     Module("", "  a = " + t + " parameter(0)\n  b = " + t + " parameter(1)\n  ROOT r = " + t + " " +
                                    op + "(a, b)\n"),
                     double(int64_t(1) << 22), false, 10});
  }
  {
    const double per_layer =
        2.0 * 256 * 512 * 1536 + 2 * 2.0 * 8 * 256 * 256 * 64 + 2.0 * 256 * 512 * 512 + 2 * 2.0 * 256 * 512 * 2048;
    cases.push_back({"transformer block f32", "4 layers S256 D512", TransformerBlockHlo(4), 4 * per_layer, true});
  }
  for (const char* type : {"f32", "bf16"}) {
    for (int n : {256, 512, 1024}) {
      std::string t = std::string(type) + "[" + std::to_string(n) + "," + std::to_string(n) + "]";
      cases.push_back({"dot " + std::string(type) + " " + std::to_string(n), std::to_string(n) + "^3",
                       Module("", "  a = " + t + " parameter(0)\n  b = " + t + " parameter(1)\n  ROOT r = " + t +
                                      " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
                       2.0 * n * n * n, true});
    }
  }
  cases.push_back({"conv2d f32", "3x3 8x56x56x64->64",
                   Module("",
                          "  a = f32[8,56,56,64] parameter(0)\n  k = f32[3,3,64,64] parameter(1)\n"
                          "  ROOT r = f32[8,56,56,64] convolution(a, k), window={size=3x3 pad=1_1x1_1}, "
                          "dim_labels=b01f_01io->b01f\n"),
                   2.0 * 8 * 56 * 56 * 64 * 64 * 9, true});
  // mobilenet_v2's forms (issue 32): depthwise, its input gradient (lhs_dilate), its weight
  // gradient (batch_group_count), and a grouped convolution. FLOPs count every tap, in bounds or
  // not, as a dense convolution of the same window would.
  cases.push_back({"conv dw f32", "3x3 32x144x56x56",
                   Module("",
                          "  a = f32[32,144,56,56] parameter(0)\n  k = f32[144,1,3,3] parameter(1)\n"
                          "  ROOT r = f32[32,144,56,56] convolution(a, k), window={size=3x3 pad=1_1x1_1}, "
                          "dim_labels=bf01_oi01->bf01, feature_group_count=144\n"),
                   2.0 * 32 * 144 * 56 * 56 * 9, true});
  cases.push_back(
      {"conv dw lhs_dil f32", "3x3 lhs_dilate 2x2 32x96",
       Module("",
              "  a = f32[32,96,56,56] parameter(0)\n  k = f32[3,3,96,1] parameter(1)\n"
              "  ROOT r = f32[32,96,112,112] convolution(a, k), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, "
              "dim_labels=bf01_01oi->bf01, feature_group_count=96\n"),
       2.0 * 32 * 96 * 112 * 112 * 9, true});
  cases.push_back({"conv dw wgrad f32", "56x56 window 32x144",
                   Module("",
                          "  a = f32[32,144,56,56] parameter(0)\n  g = f32[32,144,56,56] parameter(1)\n"
                          "  ROOT r = f32[3,3,1,144] convolution(a, g), window={size=56x56 pad=1_1x1_1}, "
                          "dim_labels=fb01_io01->01bf, batch_group_count=144\n"),
                   2.0 * 144 * 9 * 32 * 56 * 56, true});
  cases.push_back({"conv grouped f32", "3x3 8x56x56x64 4 groups",
                   Module("",
                          "  a = f32[8,56,56,64] parameter(0)\n  k = f32[3,3,16,64] parameter(1)\n"
                          "  ROOT r = f32[8,56,56,64] convolution(a, k), window={size=3x3 pad=1_1x1_1}, "
                          "dim_labels=b01f_01io->b01f, feature_group_count=4\n"),
                   2.0 * 8 * 56 * 56 * 64 * 16 * 9, true});
  // mobilenet_v2's batch norms (NCHW, feature dimension 1): per-feature sums in index order, then
  // an elementwise pass. Work is the operand's elements.
  const std::string bn_x = "f32[32,144,56,56]", bn_f = "f32[144]";
  cases.push_back({"batch-norm-training f32", "32x144x56x56",
                   Module("", "  x = " + bn_x + " parameter(0)\n  s = " + bn_f + " parameter(1)\n  o = " + bn_f +
                                  " parameter(2)\n  ROOT r = (" + bn_x + ", " + bn_f + ", " + bn_f +
                                  ") batch-norm-training(x, s, o), epsilon=1e-05, feature_index=1\n"),
                   32.0 * 144 * 56 * 56, false});
  cases.push_back({"batch-norm-grad f32", "32x144x56x56",
                   Module("", "  x = " + bn_x + " parameter(0)\n  s = " + bn_f + " parameter(1)\n  m = " + bn_f +
                                  " parameter(2)\n  v0 = " + bn_f + " parameter(3)\n  v = " + bn_f +
                                  " abs(v0)\n  g = " + bn_x + " parameter(4)\n  ROOT r = (" + bn_x + ", " + bn_f +
                                  ", " + bn_f + ") batch-norm-grad(x, s, m, v, g), epsilon=1e-05, feature_index=1\n"),
                   32.0 * 144 * 56 * 56, false});
  for (auto [name, dim, kept] :
       {std::tuple{"reduce rows f32", "1", "4096"}, std::tuple{"reduce cols f32", "0", "4096"}})
    cases.push_back({name, "4096x4096",
                     Module(kAdd,
                            "  m = f32[4096,4096] parameter(0)\n  z = f32[] constant(0)\n"
                            "  ROOT r = f32[" +
                                std::string(kept) + "] reduce(m, z), dimensions={" + dim + "}, to_apply=add\n"),
                     4096.0 * 4096, false});
  cases.push_back(
      {"transpose f32", "4096x4096",
       Module("", "  m = f32[4096,4096] parameter(0)\n  ROOT r = f32[4096,4096] transpose(m), dimensions={1,0}\n"),
       4096.0 * 4096, false});
  cases.push_back({"sort f32", "1M",
                   Module(kLess, "  v = f32[" + v1m + "] parameter(0)\n  ROOT r = f32[" + v1m +
                                     "] sort(v), dimensions={0}, to_apply=lt\n"),
                   double(n1m), false});
  cases.push_back(
      {"gather f32", "1M",
       Module("", "  x = f32[" + v1m + "] parameter(0)\n  i = s32[" + v1m + ",1] parameter(1)\n  ROOT r = f32[" + v1m +
                      "] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, "
                      "index_vector_dim=1, slice_sizes={1}\n"),
       double(n1m), false});
  cases.push_back(
      {"scatter-add f32", "1M",
       Module(kAdd, "  x = f32[" + v1m + "] parameter(0)\n  i = s32[" + v1m + ",1] parameter(1)\n  u = f32[" + v1m +
                        "] parameter(2)\n  ROOT r = f32[" + v1m +
                        "] scatter(x, i, u), "
                        "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                        "index_vector_dim=1, to_apply=add\n"),
       double(n1m), false});
  return cases;
}

struct Row {
  std::string name, shape;
  double seconds = 0, rate = 0;
  const char* unit = "";
  std::string note;
};

// `numpy`: the script's rate for the row, nullopt without --numpy, NaN when it has none.
void PrintRow(const Row& row, std::optional<double> numpy) {
  char line[256];
  std::snprintf(line, sizeof(line), "%-22s %-20s %10.2f ms %9.4g %-8s", row.name.c_str(), row.shape.c_str(),
                row.seconds * 1e3, row.rate, row.unit);
  std::cout << line;
  if (numpy && !std::isnan(*numpy) && row.rate > 0) {
    std::snprintf(line, sizeof(line), "  numpy %9.4g  %6.3gx", *numpy, row.rate / *numpy);
    std::cout << line;
  } else if (numpy) {
    std::cout << "  numpy         -         ";
  }
  if (!row.note.empty()) std::cout << "  " << row.note;
  std::cout << std::endl;
}

// A compiled and loaded kernel module with its arguments (seed 1, as nhlo-run --random-args=1).
struct Prepared {
  nhlo::BundleProgram program;
  std::vector<nhlo::Value> args;
};

nhlo::Result<Prepared> Prepare(const KernelCase& k) {
  nhlo::PipelineOptions options;
  options.passes = std::vector<std::string>{};  // the kernel as written: no pass rewrites it
  std::ostringstream log;
  NHLO_ASSIGN_OR_RETURN(auto module, nhlo::CompileText(k.name, k.hlo, options, log));
  std::vector<nhlo::Value> args;
  std::vector<nhlo::Instruction*> params = module->entry->Parameters();
  for (size_t i = 0; i < params.size(); ++i) args.push_back(nhlo::RandomValue(params[i]->shape, 1000003 + i));
  NHLO_ASSIGN_OR_RETURN(std::string bytes, nhlo::EmitBundleFile(*module, nhlo::CodegenOptions{}));
  NHLO_ASSIGN_OR_RETURN(nhlo::BundleProgram program, nhlo::ReadBundleFile(std::move(bytes), k.name));
  return Prepared{std::move(program), std::move(args)};
}

// A case's time is the sum of its bundles' own times (a chain's every op, or its fused group),
// best of `repeat` runs (at least the case's min_runs) in each of `rounds` rounds, each round
// after one untimed run, as numpy's figure is taken after one untimed call: the first run of a
// loaded program faults its arena in, and the untimed run pays for what the previous round left
// in the cache (a numpy round leaves its output's dirty lines there to be written back; runs of
// one side after the other's would pay for them). `before_round` is called before each round.
nhlo::Result<Row> RunKernel(const KernelCase& k, int repeat, bool fusion, int rounds,
                            const std::function<void()>& before_round) {
  NHLO_ASSIGN_OR_RETURN(Prepared p, Prepare(k));
  // Loaded once and run `repeat` times, as a program that is called repeatedly runs: the arena,
  // the plans and the arguments (read in place, as numpy's arrays are) are the same every run.
  NHLO_ASSIGN_OR_RETURN(std::unique_ptr<nhlo::Executable> executable, nhlo::Executable::Load(p.program));
  double best = 1e30;
  const int runs = std::max(repeat, k.min_runs);
  for (int round = 0; round < rounds; ++round) {
    before_round();
    for (int r = -1; r < runs; ++r) {
      nhlo::ExecutionProfile profile;
      nhlo::ExecuteOptions options;
      options.profile = &profile;
      options.fusion = fusion;
      executable->set_options(options);
      NHLO_TRY(executable->RunInPlace(p.args));  // the result stays in place, as numpy's out= leaves it
      double seconds = 0;
      for (const nhlo::BundleProfile& b : profile.bundles)
        if (b.computation == "e") seconds += b.seconds;
      if (r >= 0) best = std::min(best, seconds);
    }
  }
  Row row{k.name, k.shape, best, k.work / best / 1e9, k.flops ? "GFLOP/s" : "Gelem/s", ""};
  return row;
}

template <typename F>
double BestOf(int repeat, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    f();
    best = std::min(best, Seconds(start));
  }
  return best;
}

// Argument generation, printing and .npy writing of a 16M-element array: the rows `wanted` takes
// (the others are not timed, so a --filter run of one kernel is not spent mostly here). Each row
// is two rounds of `repeat` runs, its best kept, `before_round(name)` called before each (numpy's
// round, as the kernels alternate).
template <typename Wanted>
std::vector<Row> RunIo(int repeat, const Wanted& wanted, const std::function<void(const std::string&)>& before_round) {
  std::vector<Row> rows;
  const double n = double(int64_t(1) << 24);
  for (const char* type : {"f32", "bf16"}) {
    const std::string suffix = std::string(" ") + type;
    if (!wanted("random-args" + suffix) && !wanted("print summary" + suffix) && !wanted("write npy" + suffix) &&
        !wanted("print all" + suffix))
      continue;
    std::string text = "HloModule m\nENTRY e {\n  ROOT p = " + std::string(type) + "[16777216] parameter(0)\n}\n";
    std::ostringstream log;
    auto module = nhlo::CompileText("io", text, nhlo::PipelineOptions{}, log);
    if (!module.ok()) continue;
    const nhlo::Shape& shape = (*module)->entry->Parameters()[0]->shape;
    nhlo::Value value = nhlo::RandomValue(shape, 1);
    auto time = [&](const std::string& name, const char* size, double elements, const char* note, auto&& f) {
      if (!wanted(name + suffix)) return;
      double seconds = 1e30;
      for (int round = 0; round < 2; ++round) {
        before_round(name + suffix);
        seconds = std::min(seconds, BestOf(repeat, f));
      }
      rows.push_back({name + suffix, size, seconds, elements / seconds / 1e9, "Gelem/s", note});
    };
    std::string printed;
    time("random-args", "16M", n, "", [&] { value = nhlo::RandomValue(shape, 1); });
    time("print summary", "16M", n, "", [&] { printed = nhlo::FormatResult(value, nhlo::PrintValues::kAuto); });
    time("write npy", "16M", n, "", [&] { (void)nhlo::WriteNpy(value); });
    nhlo::Value small = value;
    small.dims = {int64_t(1) << 20};
    small.bytes.resize(small.bytes.size() / 16);
    time("print all", "1M", double(1 << 20), "(every value as literal text)",
         [&] { printed = nhlo::FormatResult(small, nhlo::PrintValues::kAll); });
  }
  return rows;
}

// Runs one corpus file as nhlo-run does, in a child process, and returns its wall time; a
// negative time is a timeout, NaN a failure (with `why`).
double RunModel(const std::string& path, int threads, int timeout, std::string& why) {
  nhlo_tools::ChildOutcome outcome;
  bool started = nhlo_tools::RunInChild(
      static_cast<unsigned>(timeout), 0,
      [&] {
        std::istringstream in;
        std::ostringstream out, err;
        int code = nhlo::RunMain(
            {path, "--random-args=1", "--print-values=none", "--quiet", "--threads=" + std::to_string(threads)}, in,
            out, err);
        return code == 0 ? std::string("O") : "F" + err.str().substr(0, err.str().find('\n'));
      },
      outcome);
  if (!started) {
    why = std::string("fork: ") + std::strerror(errno);
    return std::nan("");
  }
  using End = nhlo_tools::ChildOutcome::End;
  if (outcome.end == End::kTimedOut) return -outcome.seconds;
  if (outcome.end == End::kReported && outcome.report == "O") return outcome.seconds;
  why = outcome.end == End::kCrashed    ? "crashed: " + outcome.crash
        : outcome.end == End::kReported ? outcome.report.substr(1)
                                        : "exited without a report";
  return std::nan("");
}

// The numpy script in its --serve mode: a case name and a run count written to its stdin, a line
// `name<TAB>rate` (or `name<TAB>-`) read back. When the script cannot start or dies (no python3,
// no numpy, a case that raises), Ask gives NaN from then on, the warning printed once; SIGPIPE is
// ignored so that writing to a dead script is an error to handle, not the end of the benchmark.
class NumpyServer {
 public:
  explicit NumpyServer(const std::string& python) {
    const std::string command = "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 exec " + python +
                                " " NHLO_SOURCE_ROOT "/tools/interp-bench-numpy.py --serve";
    std::cout << "numpy measured beside each case (" << command << ")" << std::endl;
    std::signal(SIGPIPE, SIG_IGN);
    // Close-on-exec: the model runs' children never hold the script's pipes.
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return;
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return;
    }
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      // Copies numbered 3 and up first: a pipe end that is already 0 or 1 (the benchmark started
      // with stdin or stdout closed) must not be closed by the dup2 onto the other.
      const int in = fcntl(to_child[0], F_DUPFD, 3), out = fcntl(from_child[1], F_DUPFD, 3);
      if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0) _exit(127);
      close(in);
      close(out);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    to_ = pid_ > 0 ? fdopen(to_child[1], "w") : nullptr;
    from_ = pid_ > 0 ? fdopen(from_child[0], "r") : nullptr;
    if (!to_) close(to_child[1]);
    if (!from_) close(from_child[0]);
    if (!to_ || !from_) Stop();
  }
  ~NumpyServer() { Stop(); }
  NumpyServer(const NumpyServer&) = delete;
  NumpyServer& operator=(const NumpyServer&) = delete;

  /// numpy's rate for the case, the best of `runs` timed runs after an untimed one.
  double Ask(const std::string& name, int runs) {
    if (to_ && from_ && std::fprintf(to_, "%s\t%d\n", name.c_str(), runs) > 0 && std::fflush(to_) == 0) {
      char line[512];
      if (std::fgets(line, sizeof(line), from_)) {
        const std::string answer(line);
        const size_t tab = answer.find('\t');
        if (tab != std::string::npos && answer.compare(0, tab, name) == 0) {
          if (answer.compare(tab + 1, 1, "-") == 0) return std::nan("");
          return std::atof(answer.c_str() + tab + 1);
        }
      }
    }
    if (!warned_) std::cerr << "nhlo-interp-bench: warning: the numpy script failed; no numpy figures\n";
    warned_ = true;
    Stop();
    return std::nan("");
  }

  /// Ends the script (its stdin closes: it exits) and waits for it.
  void Stop() {
    if (to_) std::fclose(to_);
    if (from_) std::fclose(from_);
    to_ = from_ = nullptr;
    while (pid_ > 0 && waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  bool warned_ = false;
};

// The better of two rates, NaN only when both are.
double Faster(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nhlo-interp-bench: interpreter kernels, argument generation, printing and corpus models, timed"};
  int threads = 1, repeat = 3, timeout = 120;
  std::string filter, models = "cpu-benchmarks", corpus = NHLO_SOURCE_ROOT "/../shared/corpus", numpy_python;
  bool with_numpy = false;
  app.add_option("--threads", threads, "worker threads (default 1, as the issue's figures; 0: every core)");
  app.add_option("--repeat", repeat, "runs per kernel; the best is shown (default 3)")->check(CLI::Range(1, 1000));
  app.add_option("--filter", filter, "only cases whose name contains this text");
  std::string print_hlo;
  app.add_option("--print-hlo", print_hlo,
                 "print the HLO of the kernel case with this name (e.g. 'transformer block f32') and exit: to run "
                 "it with nhlo-run --profile or another tool");
  std::string fusion = "on";
  app.add_option("--fusion", fusion, "on (default) or off: the kernels' runs as nhlo-run --fusion runs them")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--models", models,
                 "corpus models to run: cpu-benchmarks (default: XLA's CPU benchmark modules), all, none, or a "
                 "comma-separated list of substrings of file names");
  app.add_option("--corpus", corpus, "folder of .hlo files for --models (default ../shared/corpus beside the source)");
  app.add_option("--model-timeout", timeout, "seconds before a model run is stopped (default 120)");
  app.add_flag("--numpy", with_numpy, "also measure numpy on the same shapes (tools/interp-bench-numpy.py)");
  app.add_option("--python", numpy_python,
                 "the Python with numpy for --numpy (default /usr/bin/python3 if it exists, "
                 "else python3)");
  CLI11_PARSE(app, argc, argv);
  if (!print_hlo.empty()) {
    for (const KernelCase& k : Kernels())
      if (k.name == print_hlo) {
        std::cout << k.hlo;
        return 0;
      }
    std::cerr << "nhlo-interp-bench: error: no kernel case is named '" << print_hlo << "'\n";
    return 1;
  }
  nhlo::SetParallelThreads(threads);
  if (numpy_python.empty()) numpy_python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::optional<NumpyServer> numpy;
  if (with_numpy) numpy.emplace(numpy_python);
  std::cout << "threads " << nhlo::ParallelThreads() << ", best of " << repeat << "\n";
  auto wanted = [&](const std::string& name) { return filter.empty() || name.find(filter) != std::string::npos; };
  for (const KernelCase& k : Kernels()) {
    if (!wanted(k.name)) continue;
    // Rounds of numpy's runs and nhlo's in turn (numpy, nhlo, numpy, nhlo), as many runs in
    // each, each side's best: the machine's speed drifts within seconds, and both sides see it.
    const int runs = std::max(repeat, k.min_runs);
    std::optional<double> theirs;
    if (numpy) theirs = std::nan("");
    nhlo::Result<Row> row = RunKernel(k, repeat, fusion == "on", numpy ? 2 : 1, [&] {
      if (numpy) theirs = Faster(*theirs, numpy->Ask(k.name, runs));
    });
    if (!row.ok()) {
      std::cout << k.name << ": " << row.status().ToString();
      continue;
    }
    PrintRow(*row, theirs);
  }
  // The I/O rows: numpy's rounds and nhlo's in turn, as for the kernels.
  std::map<std::string, double> io_numpy;
  auto io_round = [&](const std::string& name) {
    if (!numpy) return;
    double& rate = io_numpy.try_emplace(name, std::nan("")).first->second;
    rate = Faster(rate, numpy->Ask(name, repeat));
  };
  for (const Row& row : RunIo(repeat, wanted, io_round))
    PrintRow(row, numpy ? std::optional<double>(io_numpy[row.name]) : std::nullopt);
  numpy.reset();  // its arrays (about 600 MB) are not held through the model runs
  if (models == "none") return 0;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(corpus, ec)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".hlo") continue;
    bool take =
        models == "all" || (models == "cpu-benchmarks" && name.find("cpu__benchmarks__hlo__") != std::string::npos);
    if (models != "all" && models != "cpu-benchmarks") {
      std::stringstream list(models);
      for (std::string item; std::getline(list, item, ',');)
        if (!item.empty() && name.find(item) != std::string::npos) take = true;
    }
    if (take && wanted(name)) files.push_back(entry.path().string());
  }
  if (ec) {
    std::cout << "no corpus at " << corpus << " (--corpus=DIR): models skipped\n";
    return 0;
  }
  std::sort(files.begin(), files.end());
  // Each model runs in a forked child, which inherits only the forking thread: with workers
  // alive, the child's own pool resize would wait for threads it does not have. The parent
  // needs none of them from here on.
  nhlo::SetParallelThreads(1);
  for (const std::string& path : files) {
    std::string why;
    double t = RunModel(path, threads, timeout, why);
    std::string name = std::filesystem::path(path).stem().string();
    if (size_t cut = name.rfind("__"); cut != std::string::npos) name = name.substr(cut + 2);
    char line[512];
    if (std::isnan(t))
      std::snprintf(line, sizeof(line), "model %-52s    failed: %s", name.c_str(), why.c_str());
    else if (t < 0)
      std::snprintf(line, sizeof(line), "model %-52s %9.2f s  timed out", name.c_str(), -t);
    else
      std::snprintf(line, sizeof(line), "model %-52s %9.2f s", name.c_str(), t);
    std::cout << line << std::endl;
  }
  return 0;
}
