// SPDX-License-Identifier: Apache-2.0
#include "ir/dimension_numbers.h"

namespace nhlo {
namespace {

// An instruction's attributes as MakeDimensionNumbers asks for them.
struct InstructionAttrs {
  const Instruction& inst;
  std::optional<DimIndexList> List(AttrId id) const {
    const Attribute* a = inst.FindAttr(id);
    if (!a || a->kind != AttrKind::IntList) return std::nullopt;
    return DimIndexList(a->ints.data(), a->ints.size());
  }
  std::optional<int64_t> Int(AttrId id) const {
    const Attribute* a = inst.FindAttr(id);
    return a && a->kind == AttrKind::Int ? std::optional<int64_t>(a->i) : std::nullopt;
  }
  std::span<const WindowDim> Window() const {
    const Attribute* a = inst.FindAttr(AttrId::kWindow);
    if (!a || a->kind != AttrKind::Window) return {};
    return std::span<const WindowDim>(a->window.data(), a->window.size());
  }
  const ConvDimLabels* Labels() const {
    const Attribute* a = inst.FindAttr(AttrId::kDimLabels);
    return a && a->kind == AttrKind::DimLabels ? a->dim_labels : nullptr;
  }
};

}  // namespace

DimensionNumbers DimensionNumbersOf(const Instruction& inst) {
  std::optional<AttrId> missing;
  return MakeDimensionNumbers(inst.opcode, InstructionAttrs{inst}, missing);
}

DotDimensionNumbers DotNumbersOf(const Instruction& inst) {
  DimensionNumbers dims = DimensionNumbersOf(inst);
  if (const auto* d = std::get_if<DotDimensionNumbers>(&dims)) return *d;
  if (const auto* r = std::get_if<RaggedDotDimensionNumbers>(&dims)) return r->dot;
  return {};
}

}  // namespace nhlo
