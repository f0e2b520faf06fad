// SPDX-License-Identifier: Apache-2.0
// The byte layout of every attribute kind's payload in a bundle file (docs/bundle-format.md,
// "Attributes"), written once. AttrPayload walks an attribute's fields in file order and hands
// each to a field visitor; the writer's visitor writes it, the reader's reads and checks it, the
// hex dump's prints it beside its bytes (WABT's reader/dumper split). So the three cannot
// disagree about a field's place, width or meaning.
//
// A field visitor F provides:
//   static constexpr bool kDecoding;  // true: the walk fills `a` from bytes
//   Status U8Named(FieldName, uint8_t&, std::string_view description)
//   Status U32(FieldName, uint32_t&), I64(FieldName, int64_t&), F64(FieldName, double&)
//   Status Bool(FieldName, bool&)    // one byte, 0 or 1 ("true"/"false")
//   Status Flag(FieldName, bool&)    // one byte, not zero = true ("yes"/"no")
//   Status Bool64(FieldName, bool&)  // eight bytes, 0 or 1
//   Status Enum(FieldName, AttrId, int64_t&)  // one byte, a code of the attribute's value set
//   Status Text(FieldName, std::string_view&)  // a string reference {u32 offset, u32 length}
//   Status Callee(FieldName, uint32_t&)        // a computation index
//   Status Count(FieldName, size_t element_bytes, uint32_t&)  // u32: how many elements follow
//   Status Reserved(size_t bytes)
//   Status Invalid(std::string message)  // a decoded value no file may hold
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "codegen/bundle_format.h"
#include "support/status.h"

namespace nhlo {

/// A field's name in the hex dump: `name`, `name[i]` (index >= 0), or `[i] name` (index_first).
struct FieldName {
  std::string_view name;
  int64_t index = -1;
  bool index_first = false;
  std::string_view suffix = {};  // " count" for the count of a named list
};

namespace attr_layout {

// A u32 count, then the elements (resized to it when decoding).
template <typename F, typename Vec>
Status Counted(F& f, FieldName name, size_t element_bytes, Vec& v) {
  uint32_t n = static_cast<uint32_t>(v.size());
  NHLO_TRY(f.Count(name, element_bytes, n));
  if constexpr (F::kDecoding) v.resize(n);
  return OkStatus();
}

// A u32 count and that many i64: `count`, `[i]` for an unnamed list; `NAME count`, `NAME[i]`.
template <typename F, typename Vec>
Status Ints(F& f, std::string_view name, Vec& v) {
  NHLO_TRY(Counted(f, name.empty() ? FieldName{"count"} : FieldName{name, -1, false, " count"}, 8, v));
  for (size_t i = 0; i < v.size(); ++i) NHLO_TRY(f.I64({name, static_cast<int64_t>(i)}, v[i]));
  return OkStatus();
}

// A size_t field stored as an i64.
template <typename F, typename T>
Status SizeAsI64(F& f, FieldName name, T& value, int64_t max) {
  int64_t v = static_cast<int64_t>(value);
  NHLO_TRY(f.I64(name, v));
  if constexpr (F::kDecoding) {
    if (v < 0 || v > max) return f.Invalid("has an impossible rank");
    value = static_cast<size_t>(v);
  }
  return OkStatus();
}

// The value of `a`'s kind: read from a const record (encoding, dumping); made, empty, in a
// mutable one, which the walk then fills (decoding).
template <typename T, typename Record>
auto& Slot(Record& a) {
  if constexpr (std::is_const_v<Record>)
    return a.template Get<T>();
  else
    return a.template Set<T>();
}
template <typename T, typename Record>
auto& BoxedSlot(Record& a) {
  if constexpr (std::is_const_v<Record>)
    return a.template Boxed<T>();
  else
    return a.template SetBoxed<T>();
}

}  // namespace attr_layout

/// Walks the payload of attribute `a` (an AttrRecord; const for the writer and the dumper).
template <typename F, typename Record>
Status AttrPayload(F& f, Record& a) {
  using attr_layout::BoxedSlot;
  using attr_layout::Counted;
  using attr_layout::Ints;
  using attr_layout::Slot;
  auto at = [](int64_t i, std::string_view name) { return FieldName{name, i, true}; };
  switch (a.kind) {
    case AttrKind::Int: return f.I64({"value"}, Slot<int64_t>(a));
    case AttrKind::Bool: return f.Bool({"value"}, Slot<bool>(a));
    case AttrKind::Float: return f.F64({"value"}, Slot<double>(a));
    case AttrKind::Enum: return f.Enum({"value"}, a.id, Slot<int64_t>(a));
    case AttrKind::String:
    case AttrKind::Ident:
    case AttrKind::Raw: return f.Text({"text"}, Slot<AttrRecord::Text>(a).text);
    case AttrKind::Config: {
      auto& text = Slot<AttrRecord::Text>(a);
      NHLO_TRY(f.Text({"text"}, text.text));
      return f.Flag({"is json"}, text.is_json);
    }
    case AttrKind::IntList: return Ints(f, "", Slot<std::vector<int64_t>>(a));
    case AttrKind::PairList: {
      auto& pairs = Slot<std::vector<int64_t>>(a);
      NHLO_TRY(Ints(f, "", pairs));
      if (pairs.size() % 2 != 0) return f.Invalid("has an unpaired entry");
      return OkStatus();
    }
    case AttrKind::EnumList: {
      auto& codes = Slot<std::vector<int64_t>>(a);
      NHLO_TRY(Counted(f, {"count"}, 1, codes));
      for (size_t i = 0; i < codes.size(); ++i) NHLO_TRY(f.Enum({"", static_cast<int64_t>(i)}, a.id, codes[i]));
      return OkStatus();
    }
    case AttrKind::Computation:
    case AttrKind::ComputationList: {
      auto& callees = Slot<std::vector<uint32_t>>(a);
      NHLO_TRY(Counted(f, {"count"}, 4, callees));
      if (a.kind == AttrKind::Computation && callees.size() != 1)
        return f.Invalid("names " + std::to_string(callees.size()) + " computations, not one");
      for (size_t i = 0; i < callees.size(); ++i) NHLO_TRY(f.Callee({"", static_cast<int64_t>(i)}, callees[i]));
      return OkStatus();
    }
    case AttrKind::Window: {
      auto& window = Slot<std::vector<WindowDim>>(a);
      NHLO_TRY(Counted(f, {"count"}, 56, window));
      for (size_t k = 0; k < window.size(); ++k) {
        auto& d = window[k];
        const auto i = static_cast<int64_t>(k);
        NHLO_TRY(f.I64(at(i, "size"), d.size));
        NHLO_TRY(f.I64(at(i, "stride"), d.stride));
        NHLO_TRY(f.I64(at(i, "pad low"), d.pad_low));
        NHLO_TRY(f.I64(at(i, "pad high"), d.pad_high));
        NHLO_TRY(f.I64(at(i, "base dilation"), d.base_dilation));
        NHLO_TRY(f.I64(at(i, "window dilation"), d.window_dilation));
        NHLO_TRY(f.Bool64(at(i, "reversal"), d.reversal));
      }
      return OkStatus();
    }
    case AttrKind::SliceRanges: {
      auto& slices = Slot<std::vector<SliceDim>>(a);
      NHLO_TRY(Counted(f, {"count"}, 24, slices));
      for (size_t k = 0; k < slices.size(); ++k) {
        const auto i = static_cast<int64_t>(k);
        NHLO_TRY(f.I64(at(i, "start"), slices[k].start));
        NHLO_TRY(f.I64(at(i, "limit"), slices[k].limit));
        NHLO_TRY(f.I64(at(i, "stride"), slices[k].stride));
      }
      return OkStatus();
    }
    case AttrKind::PaddingConfig: {
      auto& padding = Slot<std::vector<PaddingDim>>(a);
      NHLO_TRY(Counted(f, {"count"}, 24, padding));
      for (size_t k = 0; k < padding.size(); ++k) {
        const auto i = static_cast<int64_t>(k);
        NHLO_TRY(f.I64(at(i, "low"), padding[k].low));
        NHLO_TRY(f.I64(at(i, "high"), padding[k].high));
        NHLO_TRY(f.I64(at(i, "interior"), padding[k].interior));
      }
      return OkStatus();
    }
    case AttrKind::DimLabels: {
      auto& l = BoxedSlot<ConvDimLabels>(a);
      // The input's spatial count; the kernel's and output's lists are written to that length
      // (-1 where one is shorter).
      uint32_t spatial = static_cast<uint32_t>(l.input_spatial.size());
      NHLO_TRY(f.U32({"spatial count"}, spatial));
      NHLO_TRY(f.Flag({"has unknown"}, l.has_unknown));
      NHLO_TRY(f.Reserved(1));
      NHLO_TRY(f.Reserved(2));
      if (spatial > SpatialDims::kMax) return f.Invalid("has more than 10 spatial dimensions");
      NHLO_TRY(f.I64({"input batch"}, l.input_batch));
      NHLO_TRY(f.I64({"input feature"}, l.input_feature));
      NHLO_TRY(f.I64({"kernel input feature"}, l.kernel_input_feature));
      NHLO_TRY(f.I64({"kernel output feature"}, l.kernel_output_feature));
      NHLO_TRY(f.I64({"output batch"}, l.output_batch));
      NHLO_TRY(f.I64({"output feature"}, l.output_feature));
      NHLO_TRY(attr_layout::SizeAsI64(f, {"input rank"}, l.input_rank, 64));
      NHLO_TRY(attr_layout::SizeAsI64(f, {"kernel rank"}, l.kernel_rank, 64));
      NHLO_TRY(attr_layout::SizeAsI64(f, {"output rank"}, l.output_rank, 64));
      for (auto [name, dims] :
           {std::pair{"input spatial", &l.input_spatial}, std::pair{"kernel spatial", &l.kernel_spatial},
            std::pair{"output spatial", &l.output_spatial}}) {
        for (uint32_t k = 0; k < spatial; ++k) {
          int64_t v = k < dims->size() ? (*dims)[k] : -1;
          NHLO_TRY(f.I64({name, static_cast<int64_t>(k)}, v));
          if constexpr (F::kDecoding) dims->push_back(v);
        }
      }
      return OkStatus();
    }
    case AttrKind::ReplicaGroups: {
      auto& g = BoxedSlot<ReplicaGroupsRecord>(a);
      uint8_t form = g.mesh ? 2 : g.iota ? 1 : 0;
      NHLO_TRY(f.U8Named({"form"}, form, form == 2 ? "mesh (2)" : form == 1 ? "iota (1)" : "list (0)"));
      NHLO_TRY(f.Reserved(1));
      NHLO_TRY(f.Reserved(2));
      if (form > 2) return f.Invalid("has unknown form " + std::to_string(form));
      if constexpr (F::kDecoding) {
        g.iota = form == 1;
        g.mesh = form == 2;
      }
      if (form == 2) return OkStatus();  // mesh axes without an iota reading: no device lists
      if (form == 1) {
        NHLO_TRY(f.I64({"num groups"}, g.num_groups));
        NHLO_TRY(f.I64({"group size"}, g.group_size));
        NHLO_TRY(Ints(f, "reshape", g.reshape_dims));
        return Ints(f, "transpose", g.transpose);
      }
      NHLO_TRY(Ints(f, "group sizes", g.group_sizes));
      return Ints(f, "ids", g.ids);
    }
    case AttrKind::InstructionList:
    case AttrKind::Shape:
    case AttrKind::Literal:
    case AttrKind::ShapeList:
    case AttrKind::BoolList:
    case AttrKind::KeyValues: return f.Invalid("is of a kind bundle files do not carry");
  }
  return f.Invalid("has an unknown kind");
}

}  // namespace nhlo
