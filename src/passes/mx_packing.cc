// SPDX-License-Identifier: Apache-2.0
#include "passes/mx_packing.h"

#include "ir/builder.h"

namespace nhlo {
namespace {

std::vector<int64_t> DimsOf(const Instruction* i) { return {i->shape.dims.begin(), i->shape.dims.end()}; }

}  // namespace

Instruction* PackLanes(Module& module, Computation* comp, Instruction* value, int64_t dim) {
  int64_t rank = static_cast<int64_t>(value->shape.rank());
  bool minor = dim == rank - 1;
  std::vector<int64_t> to_minor;  // the packed dimension moved to the end
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) to_minor.push_back(d);
  to_minor.push_back(dim);
  Instruction* v = minor ? value : MakeTranspose(module, comp, value, to_minor);
  std::vector<int64_t> dims = DimsOf(v);
  int64_t k = dims.back();
  dims.back() = k / 4;
  dims.push_back(4);
  Instruction* lanes = MakeReshape(module, comp, v, dims);
  dims.pop_back();
  Instruction* words = MakeBitcastConvert(module, comp, lanes, module.MakeArrayShape(PrimitiveType::kU32, dims));
  if (minor) return words;
  std::vector<int64_t> back(rank);
  for (int64_t i = 0; i < rank; ++i) back[to_minor[i]] = i;
  return MakeTranspose(module, comp, words, back);
}

Instruction* UnpackLanes(Module& module, Computation* comp, Instruction* packed, int64_t dim, PrimitiveType element) {
  int64_t rank = static_cast<int64_t>(packed->shape.rank());
  std::vector<int64_t> dims = DimsOf(packed);
  dims.push_back(4);
  Instruction* lanes = MakeBitcastConvert(module, comp, packed, module.MakeArrayShape(element, dims));
  Instruction* v = lanes;
  if (dim != rank - 1) {
    std::vector<int64_t> perm;  // lanes right after the packed dimension
    for (int64_t d = 0; d <= dim; ++d) perm.push_back(d);
    perm.push_back(rank);
    for (int64_t d = dim + 1; d < rank; ++d) perm.push_back(d);
    v = MakeTranspose(module, comp, lanes, perm);
  }
  std::vector<int64_t> logical = DimsOf(packed);
  logical[dim] *= 4;
  return MakeReshape(module, comp, v, logical);
}

Instruction* FindPackedSource(Instruction* value, int64_t dim) {
  // Look through get-tuple-element of a tuple instruction.
  while (value->opcode == Opcode::kGetTupleElement && value->operands[0]->opcode == Opcode::kTuple) {
    const Attribute* index = value->FindAttr(AttrId::kIndex);
    if (!index || index->i < 0 || index->i >= static_cast<int64_t>(value->operands[0]->operands.size())) return nullptr;
    value = value->operands[0]->operands[index->i];
  }
  if (value->opcode != Opcode::kReshape) return nullptr;
  Instruction* v = value->operands[0];
  int64_t rank = static_cast<int64_t>(value->shape.rank());
  if (v->opcode == Opcode::kTranspose) {
    if (dim == rank - 1) return nullptr;
    const Attribute* perm = v->FindAttr(AttrId::kDimensions);
    if (!perm || static_cast<int64_t>(perm->ints.size()) != rank + 1 || perm->ints[dim + 1] != rank) return nullptr;
    for (int64_t d = 0; d <= rank; ++d)
      if (d != dim + 1 && perm->ints[d] != (d <= dim ? d : d - 1)) return nullptr;
    v = v->operands[0];
  } else if (dim != rank - 1) {
    return nullptr;
  }
  if (v->opcode != Opcode::kBitcastConvert) return nullptr;
  Instruction* packed = v->operands[0];
  if (packed->shape.type != PrimitiveType::kU32 || static_cast<int64_t>(packed->shape.rank()) != rank) return nullptr;
  for (int64_t d = 0; d < rank; ++d)
    if (packed->shape.dims[d] * (d == dim ? 4 : 1) != value->shape.dims[d]) return nullptr;
  return packed;
}

}  // namespace nhlo
