// SPDX-License-Identifier: Apache-2.0
// Simulated devices: group resolution against docs/multi-device-semantics.md's worked examples,
// the 2x4 SPMD module against the same computation written for one device, and runs whose
// devices diverge (a deadlock, a failing device) ending in an error rather than a hang.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "interp/devices.h"
#include "interp/interp.h"
#include "ir/verifier.h"
#include "load_program.h"
#include "parser/parser.h"
#include "support/parallel.h"

using namespace nhlo;

namespace {

BundleProgram Load(const std::string& text) { return testing::LoadProgram(text, "devices"); }

std::string ReadFile(const char* path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

ReplicaGroupsRecord Explicit(std::vector<std::vector<int64_t>> groups) {
  ReplicaGroupsRecord r;
  for (const auto& g : groups) {
    r.group_sizes.push_back(static_cast<int64_t>(g.size()));
    r.ids.insert(r.ids.end(), g.begin(), g.end());
  }
  return r;
}

std::vector<uint32_t> GroupOf(Opcode op, const ReplicaGroupsRecord* groups, bool channel, std::optional<bool> global,
                              DeviceGrid grid, uint32_t device) {
  AttrRecord ugdi;
  ugdi.set_b() = global.value_or(false);
  auto g = ResolveCollectiveGroup(op, groups, channel, global ? &ugdi : nullptr, nullptr, grid, device);
  REQUIRE(g.ok());
  REQUIRE(g->devices[g->rank] == device);
  return g->devices;
}

Value F32(std::vector<int64_t> dims, const std::vector<float>& values) {
  Value v;
  v.type = PrimitiveType::kF32;
  v.dims = std::move(dims);
  v.bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  return v;
}

}  // namespace

TEST_CASE("group modes and participants follow XLA's table (docs/multi-device-semantics.md 2-3)") {
  const DeviceGrid grid{2, 4};  // device = replica * 4 + partition
  ReplicaGroupsRecord pair = Explicit({{0, 1}});
  // cross-replica: the same partition in both replicas
  CHECK(GroupOf(Opcode::kAllReduce, &pair, false, std::nullopt, grid, 6) == std::vector<uint32_t>{2, 6});
  // empty groups: every replica (cross-replica) or every partition (cross-partition)
  ReplicaGroupsRecord none;
  CHECK(GroupOf(Opcode::kAllGather, &none, false, std::nullopt, grid, 5) == std::vector<uint32_t>{1, 5});
  CHECK(GroupOf(Opcode::kAllToAll, &none, true, std::nullopt, grid, 5) == std::vector<uint32_t>{4, 5, 6, 7});
  // cross-replica-and-partition: replica-major over every partition
  CHECK(GroupOf(Opcode::kAllGather, &pair, true, false, grid, 3) == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  // flattened ids, as listed
  ReplicaGroupsRecord flat = Explicit({{3, 2, 1, 0}, {7, 6, 5, 4}});
  CHECK(GroupOf(Opcode::kReduceScatter, &flat, true, true, grid, 5) == std::vector<uint32_t>{7, 6, 5, 4});
  // iota [4,4]<=[4,2,2]T(1,0,2) (the tile-assignment example) on 16 flattened ids
  ReplicaGroupsRecord iota;
  iota.iota = true;
  iota.num_groups = 4;
  iota.group_size = 4;
  iota.reshape_dims = {4, 2, 2};
  iota.transpose = {1, 0, 2};
  CHECK(GroupOf(Opcode::kAllReduce, &iota, true, true, DeviceGrid{1, 16}, 9) == std::vector<uint32_t>{8, 9, 12, 13});
  iota = {};
  iota.iota = true;
  iota.num_groups = 4;
  iota.group_size = 2;
  iota.reshape_dims = {2, 4};
  iota.transpose = {1, 0};
  CHECK(GroupOf(Opcode::kAllReduce, &iota, true, true, DeviceGrid{1, 8}, 6) == std::vector<uint32_t>{2, 6});

  // collective-permute: the source of each target, nothing for the others
  std::vector<int64_t> pairs = {0, 1, 1, 2, 2, 3};
  auto p2 = ResolveCollectiveGroup(Opcode::kCollectivePermute, nullptr, true, nullptr, &pairs, grid, 6);
  REQUIRE(p2.ok());
  CHECK(p2->devices == std::vector<uint32_t>{4, 5, 6, 7});
  CHECK(p2->source == 1);
  auto p0 = ResolveCollectiveGroup(Opcode::kCollectivePermute, nullptr, true, nullptr, &pairs, grid, 4);
  REQUIRE(p0.ok());
  CHECK(p0->source == -1);
  // collective-broadcast: a device in no group receives zeros
  ReplicaGroupsRecord some = Explicit({{2, 1}});
  auto b0 = ResolveCollectiveGroup(Opcode::kCollectiveBroadcast, &some, true, nullptr, nullptr, grid, 0);
  REQUIRE(b0.ok());
  CHECK(b0->source == -1);
  auto b1 = ResolveCollectiveGroup(Opcode::kCollectiveBroadcast, &some, true, nullptr, nullptr, grid, 1);
  REQUIRE(b1.ok());
  CHECK(b1->devices == std::vector<uint32_t>{2, 1});
  CHECK(b1->rank == 1);

  // what XLA rejects
  AttrRecord yes;
  yes.set_b() = true;
  CHECK(!ResolveCollectiveGroup(Opcode::kAllReduce, &pair, false, &yes, nullptr, grid, 0).ok());  // ugdi, no channel
  CHECK(!ResolveCollectiveGroup(Opcode::kAllReduce, &none, true, &yes, nullptr, grid, 0).ok());   // flattened, empty
  ReplicaGroupsRecord beyond = Explicit({{0, 2}});
  CHECK(!ResolveCollectiveGroup(Opcode::kAllReduce, &beyond, false, nullptr, nullptr, grid, 0).ok());  // 2 replicas
  ReplicaGroupsRecord twice = Explicit({{0, 1}, {1}});
  CHECK(!ResolveCollectiveGroup(Opcode::kAllReduce, &twice, false, nullptr, nullptr, grid, 0).ok());
  ReplicaGroupsRecord missing = Explicit({{0}});
  auto lost = ResolveCollectiveGroup(Opcode::kAllReduce, &missing, false, nullptr, nullptr, grid, 4);
  REQUIRE(!lost.ok());
  CHECK(lost.status().message() == "the device's replica (1) is in none of the replica_groups");
  std::vector<int64_t> double_target = {0, 1, 2, 1};
  CHECK(!ResolveCollectiveGroup(Opcode::kCollectivePermute, nullptr, true, nullptr, &double_target, grid, 0).ok());
}

TEST_CASE("the 2x4 SPMD module gives, per device, what the single-device module gives for that device") {
  BundleProgram multi = Load(ReadFile("testdata/exec/spmd_2x4.hlo"));
  BundleProgram single = Load(ReadFile("testdata/exec/spmd_2x4_single.hlo"));
  REQUIRE(ProgramDevices(multi).count() == 8);
  for (unsigned seed : {1u, 2u, 3u}) {
    // Integer values, so every sum is exact in any order: the two modules reduce differently.
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> value(-1000, 1000);
    std::vector<float> all(64);
    for (float& x : all) x = static_cast<float>(value(rng));
    std::vector<std::vector<Value>> args;
    for (int d = 0; d < 8; ++d)
      args.push_back({F32({4, 2}, std::vector<float>(all.begin() + 8 * d, all.begin() + 8 * d + 8))});
    auto per_device = ExecuteOnDevices(multi, ProgramDevices(multi), args);
    REQUIRE(per_device.ok());
    auto stacked = Execute(single, {F32({8, 4, 2}, all)});
    REQUIRE(stacked.ok());
    REQUIRE(per_device->size() == 8);
    REQUIRE(stacked->tuple.size() == 9);
    for (size_t d = 0; d < 8; ++d) {
      const Value& mine = (*per_device)[d];
      REQUIRE(mine.tuple.size() == 9);
      for (size_t k = 0; k < 9; ++k) {
        const std::string& whole = stacked->tuple[k].bytes;
        size_t part = whole.size() / 8;
        CAPTURE(d);
        CAPTURE(k);
        CHECK(mine.tuple[k].bytes == whole.substr(d * part, part));
      }
    }
    // The same bits again, whatever the threads do.
    SetParallelThreads(2);
    auto again = ExecuteOnDevices(multi, ProgramDevices(multi), args);
    SetParallelThreads(1);
    REQUIRE(again.ok());
    for (size_t d = 0; d < 8; ++d)
      for (size_t k = 0; k < 9; ++k) CHECK((*again)[d].tuple[k].bytes == (*per_device)[d].tuple[k].bytes);
  }
}

TEST_CASE("collectives inside loops meet once per iteration; a reducer computation folds in rank order") {
  BundleProgram p = Load(R"(HloModule loop, num_partitions=4
sub {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT d = f32[] subtract(x, y)
}
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[2] all-reduce(v), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=sub
  ROOT t = (s32[], f32[2]) tuple(j, w)
}
ENTRY e {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[2]) tuple(zero, x)
  r = (s32[], f32[2]) while(s), condition=cond, body=body
  ROOT v = f32[2] get-tuple-element(r), index=1
})");
  std::vector<std::vector<Value>> args;
  for (int d = 0; d < 4; ++d) args.push_back({F32({2}, {static_cast<float>(d + 1), static_cast<float>(10 * (d + 1))})});
  auto r = ExecuteOnDevices(p, ProgramDevices(p), args);
  REQUIRE(r.ok());
  // ((a - b) - c) - d per iteration: 1-2-3-4 = -8, then -8 - -8 - -8 - -8 = 16, then 16-16-16-16 = -32.
  std::vector<float> want = {-32, -320};
  for (const Value& v : *r) CHECK(v.bytes == F32({2}, want).bytes);
}

TEST_CASE("devices that cannot meet end in an error that names the collective, not a hang") {
  // Partition 0 takes the branch with the all-reduce, the others do not.
  BundleProgram p = Load(R"(HloModule diverge, num_partitions=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
with {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
}
without {
  ROOT x = f32[2] parameter(0)
}
ENTRY e {
  x = f32[2] parameter(0)
  id = u32[] partition-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT r = f32[2] conditional(first, x, x), true_computation=with, false_computation=without
})");
  std::vector<std::vector<Value>> args(2, {F32({2}, {1, 2})});
  auto r = ExecuteOnDevices(p, ProgramDevices(p), args);
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("device 0 (replica 0, partition 0): the devices cannot go on") == 0);
  CHECK(r.status().message().find("'r' (run 1) has 1 of 2 devices (device 0)") != std::string::npos);

  // A device that fails stops the others; the failing one is reported.
  BundleProgram q = Load(R"(HloModule fail, num_partitions=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  x = f32[2] parameter(0)
  i = s32[2] parameter(1)
  g = f32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT r = f32[2] all-reduce(g), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
})");
  Value indices;
  indices.type = PrimitiveType::kS32;
  indices.dims = {2};
  indices.bytes.assign(8, '\0');
  // Device 1's second argument has the wrong shape: it fails at once, device 0 waits at the
  // all-reduce until it hears of it.
  auto failed =
      ExecuteOnDevices(q, ProgramDevices(q), {{F32({2}, {1, 2}), indices}, {F32({2}, {1, 2}), F32({2}, {0, 0})}});
  REQUIRE(!failed.ok());
  CHECK(failed.status().message().find(
            "device 1 (replica 0, partition 1): argument 2 has shape f32[2], expected s32[2]") == 0);
  auto fine = ExecuteOnDevices(q, ProgramDevices(q), {{F32({2}, {1, 2}), indices}, {F32({2}, {3, 5}), indices}});
  REQUIRE(fine.ok());
  CHECK((*fine)[1].bytes == F32({2}, {4, 4}).bytes);
}
