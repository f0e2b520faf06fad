// SPDX-License-Identifier: Apache-2.0
// The data movement of the collectives once the devices of a group have met: each device
// builds its own result from the members' operands (docs/multi-device-semantics.md section 4).
// The reduction itself runs in the interpreter, which can call the reducer computation.
#include <algorithm>
#include <cstring>

#include "interp/kernels.h"

namespace nhlo {
namespace {

std::string DimsText(const BufferRecord& b) {
  std::string out = std::string(PrimitiveTypeName(b.type)) + "[";
  for (size_t i = 0; i < b.dims.size(); ++i) out += (i ? "," : "") + std::to_string(b.dims[i]);
  return out + "]";
}

// Elements before dimension `dim` (outer) and bytes of one index of `dim` (inner).
void Strides(const BufferRecord& b, int64_t dim, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = HostByteSize(b.type);
  for (size_t i = 0; i < b.dims.size(); ++i) {
    if (static_cast<int64_t>(i) < dim) outer *= b.dims[i];
    if (static_cast<int64_t>(i) > dim) inner *= b.dims[i];
  }
}

// Copies indices [from, from + count) of dimension `dim` of `src` to [to, to + count) of `dst`;
// the other dimensions are equal (checked by the caller).
void CopyAlongDim(const Buf& src, int64_t from, const Buf& dst, int64_t to, int64_t dim, int64_t count) {
  int64_t outer, inner;
  Strides(*src.rec, dim, outer, inner);
  const int64_t src_extent = src.rec->dims[static_cast<size_t>(dim)];
  const int64_t dst_extent = dst.rec->dims[static_cast<size_t>(dim)];
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst.data + (o * dst_extent + to) * inner, src.data + (o * src_extent + from) * inner,
                static_cast<size_t>(count * inner));
}

}  // namespace

Status CheckCollectiveShapes(Opcode op, const std::vector<const BufferRecord*>& in,
                             const std::vector<const BufferRecord*>& out, const AttrRecord* dimensions,
                             size_t group_size) {
  const std::string name(OpcodeName(op));
  const int64_t n = static_cast<int64_t>(group_size);
  const bool tuple_all_to_all = (op == Opcode::kAllToAll) && !dimensions;
  if (tuple_all_to_all ? in.size() != group_size : false)
    return Status::Error("'all-to-all' without dimensions takes one operand per device of its group (" +
                         std::to_string(group_size) + "), not " + std::to_string(in.size()));
  if (in.size() != out.size())
    return Status::Error("'" + name + "' has " + std::to_string(in.size()) + " operands but " +
                         std::to_string(out.size()) + " results");
  int64_t dim = -1;  // -1: the op splits or joins no dimension
  const CollectiveKind kind = OpcodeCollective(op);
  const bool has_dim = kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
                       (kind == CollectiveKind::kAllToAll && dimensions);
  if (has_dim) {
    if (!dimensions || dimensions->ints().size() != 1) return Status::Error("'" + name + "' needs one dimension");
    dim = dimensions->ints()[0];
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const BufferRecord& a = *in[i];
    const BufferRecord& r = *out[i];
    if (!IsArrayType(a.type) || a.type != r.type || a.dims.size() != r.dims.size())
      return Status::Error("'" + name + "' operand " + DimsText(a) + " and result " + DimsText(r) + " do not match");
    if (tuple_all_to_all && (a.dims != in[0]->dims || a.type != in[0]->type))
      return Status::Error("'all-to-all' without dimensions takes operands of one shape");
    // torch-xla on Neuron orders collectives with a scalar token passed as one more operand of a
    // variadic all-gather or reduce-scatter; it comes out as it went in (docs/custom-calls.md).
    const bool token = has_dim && op != Opcode::kAllToAll && a.dims.empty() && in.size() > 1;
    if (token) {
      if (!r.dims.empty())
        return Status::Error("'" + name + "' gives its scalar operand " + std::to_string(i) + " as " + DimsText(r));
      continue;
    }
    if (has_dim && (dim < 0 || dim >= static_cast<int64_t>(a.dims.size())))
      return Status::Error("'" + name + "' dimension " + std::to_string(dim) + " is out of range for " + DimsText(a));
    for (size_t d = 0; d < a.dims.size(); ++d) {
      int64_t want = a.dims[d];
      if (static_cast<int64_t>(d) == dim) {
        if (kind == CollectiveKind::kAllGather) {
          if (MulOverflows(a.dims[d], n, &want)) want = -1;
        } else if (kind == CollectiveKind::kReduceScatter) {
          if (a.dims[d] % n != 0)
            return Status::Error("'reduce-scatter' dimension " + std::to_string(dim) + " of " + DimsText(a) +
                                 " does not split into " + std::to_string(n) + " equal blocks");
          want = a.dims[d] / n;
        } else if (a.dims[d] % n != 0) {
          return Status::Error("'all-to-all' dimension " + std::to_string(dim) + " of " + DimsText(a) +
                               " does not split into " + std::to_string(n) + " equal blocks");
        }
      }
      if (r.dims[d] != want)
        return Status::Error("'" + name + "' over a group of " + std::to_string(n) + " device" + (n == 1 ? "" : "s") +
                             " turns " + DimsText(a) + " into " +
                             (want < 0 ? std::string("an overflowing shape") : "another shape") + " than " +
                             DimsText(r) + (n == 1 ? " (a group of more devices? nhlo-run --devices sets them)" : ""));
    }
  }
  return OkStatus();
}

Status CollectiveGather(const MemberLeaves& members, int64_t dim, size_t rank, const std::vector<Buf>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].rec->dims.empty()) {  // a Neuron token (CheckCollectiveShapes): the device's own value
      const Buf& x = (*members[rank])[i];
      if (x.rec->size > 0) std::memcpy(out[i].data, x.data, x.rec->size);
      continue;
    }
    int64_t at = 0;
    for (const std::vector<Buf>* m : members) {
      const Buf& x = (*m)[i];
      int64_t extent = x.rec->dims[static_cast<size_t>(dim)];
      CopyAlongDim(x, 0, out[i], at, dim, extent);
      at += extent;
    }
  }
  return OkStatus();
}

Status CollectiveScatterBlock(const Buf& reduced, int64_t dim, size_t rank, const Buf& out) {
  if (out.rec->dims.empty()) {  // a Neuron token: the group's reduction of the scalars
    if (out.rec->size > 0) std::memcpy(out.data, reduced.data, out.rec->size);
    return OkStatus();
  }
  int64_t extent = out.rec->dims[static_cast<size_t>(dim)];
  CopyAlongDim(reduced, static_cast<int64_t>(rank) * extent, out, 0, dim, extent);
  return OkStatus();
}

Status CollectiveAllToAll(const MemberLeaves& members, const AttrRecord* dimensions, size_t rank,
                          const std::vector<Buf>& out) {
  const size_t n = members.size();
  if (!dimensions) {  // tuple form: result j is operand `rank` of member j
    for (size_t j = 0; j < n; ++j) {
      const Buf& x = (*members[j])[rank];
      if (x.rec->size > 0) std::memcpy(out[j].data, x.data, x.rec->size);
    }
    return OkStatus();
  }
  const int64_t dim = dimensions->ints()[0];
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t block = out[i].rec->dims[static_cast<size_t>(dim)] / static_cast<int64_t>(n);
    for (size_t j = 0; j < n; ++j)
      CopyAlongDim((*members[j])[i], static_cast<int64_t>(rank) * block, out[i], static_cast<int64_t>(j) * block, dim,
                   block);
  }
  return OkStatus();
}

namespace {

int64_t MetadataAt(const Buf& b, int64_t i) {
  if (b.type() == PrimitiveType::kS64) {
    int64_t v;
    std::memcpy(&v, b.data + 8 * i, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, b.data + 4 * i, 4);
  return v;
}

}  // namespace

Status CheckRaggedAllToAllShapes(const std::vector<const BufferRecord*>& in, const BufferRecord& out,
                                 size_t group_size) {
  if (in.size() != 6)
    return Status::Error(
        "'ragged-all-to-all' takes input, output, input_offsets, send_sizes, output_offsets and "
        "recv_sizes, not " +
        std::to_string(in.size()) + " operands");
  const BufferRecord& input = *in[0];
  const BufferRecord& output = *in[1];
  if (!IsArrayType(input.type) || input.type != output.type || output.type != out.type || output.dims != out.dims ||
      input.dims.empty() || input.dims.size() != output.dims.size() ||
      !std::equal(input.dims.begin() + 1, input.dims.end(), output.dims.begin() + 1))
    return Status::Error(
        "'ragged-all-to-all' needs an input and an output of one element type and the same "
        "dimensions after the first, and a result of the output's shape: got " +
        DimsText(input) + ", " + DimsText(output) + " -> " + DimsText(out));
  for (size_t i = 2; i < 6; ++i) {
    const BufferRecord& m = *in[i];
    if ((m.type != PrimitiveType::kS32 && m.type != PrimitiveType::kS64) || m.type != in[2]->type ||
        m.dims != in[2]->dims || m.dims.empty() || m.dims.size() > 2)
      return Status::Error(
          "'ragged-all-to-all' offsets and sizes must be four s32 or s64 arrays of one shape, rank "
          "1 or 2: operand " +
          std::to_string(i) + " is " + DimsText(m));
  }
  if (in[2]->ElementCount() % static_cast<int64_t>(group_size) != 0)
    return Status::Error("'ragged-all-to-all' has " + std::to_string(in[2]->ElementCount()) +
                         " offsets, not a multiple of its group of " + std::to_string(group_size) + " devices");
  return OkStatus();
}

Status CollectiveRaggedAllToAll(const MemberLeaves& members, size_t rank, const Buf& out) {
  const std::vector<Buf>& mine = *members[rank];
  if (out.rec->size > 0) std::memcpy(out.data, mine[1].data, out.rec->size);
  const int64_t n = static_cast<int64_t>(members.size());
  const int64_t per_peer = mine[2].count() / n;
  const int64_t out_rows = out.rec->dims[0];
  const int64_t row_bytes = out_rows == 0 ? 0 : static_cast<int64_t>(out.rec->size) / out_rows;
  const int64_t k = static_cast<int64_t>(rank);
  for (int64_t j = 0; j < n; ++j) {
    const std::vector<Buf>& sender = *members[static_cast<size_t>(j)];
    const int64_t in_rows = sender[0].rec->dims[0];
    for (int64_t i = 0; i < per_peer; ++i) {
      const int64_t e = k * per_peer + i;  // sender j's entry for receiver k
      const int64_t from = MetadataAt(sender[2], e), size = MetadataAt(sender[3], e), to = MetadataAt(sender[4], e);
      const int64_t expected = MetadataAt(mine[5], j * per_peer + i);
      if (size != expected)
        return Status::Error("'ragged-all-to-all': rank " + std::to_string(j) + " sends " + std::to_string(size) +
                             " rows to rank " + std::to_string(k) + ", whose recv_sizes expect " +
                             std::to_string(expected));
      if (size < 0 || from < 0 || to < 0 || from > in_rows - size || to > out_rows - size)
        return Status::Error("'ragged-all-to-all': rank " + std::to_string(j) + " sends rows [" + std::to_string(from) +
                             ", +" + std::to_string(size) + ") of " + std::to_string(in_rows) + " to rows [" +
                             std::to_string(to) + ", +" + std::to_string(size) + ") of rank " + std::to_string(k) +
                             "'s " + std::to_string(out_rows) + ": out of range");
      if (size > 0)
        std::memcpy(out.data + to * row_bytes, sender[0].data + from * row_bytes,
                    static_cast<size_t>(size * row_bytes));
    }
  }
  return OkStatus();
}

void CollectiveTake(const std::vector<Buf>* from, const std::vector<Buf>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].rec->size == 0) continue;
    if (from)
      std::memcpy(out[i].data, (*from)[i].data, out[i].rec->size);
    else
      std::memset(out[i].data, 0, out[i].rec->size);
  }
}

}  // namespace nhlo
