// SPDX-License-Identifier: Apache-2.0
// Shape rules of the data-movement opcodes: slicing, concatenation, padding, gather/scatter,
// reverse, transpose, sort, topk and the dynamic-size queries.
#include <algorithm>

#include "ir/dimension_numbers.h"
#include "ir/shape_inference_internal.h"

namespace nhlo::infer {
namespace {

// Checks that every entry of `dims` is in [0, bound), that none repeats and, if `sorted`, that
// they ascend. Empty if fine, else why not, starting with `what`.
std::string CheckDimList(const std::string& what, const std::vector<int64_t>& dims, size_t bound, bool sorted,
                         const std::string& bound_text) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(bound))
      return what + " " + Num(dims[i]) + " is out of range for " + bound_text;
    for (size_t j = 0; j < i; ++j)
      if (dims[j] == dims[i]) return what + " " + List(dims) + " repeats " + Num(dims[i]);
    if (sorted && i > 0 && dims[i] < dims[i - 1]) return what + " " + List(dims) + " must be sorted";
  }
  return {};
}

// The start indices of dynamic-slice / dynamic-update-slice: one scalar per operand dimension,
// or (the old form) a single rank-1 array.
std::string CheckStartIndices(const std::string& op, const Instruction& inst, size_t first, const Shape& x) {
  size_t count = inst.operands.size() - first;
  if (count == 1 && inst.operands[first]->shape.IsArray() && inst.operands[first]->shape.rank() == 1) {
    const Shape& v = inst.operands[first]->shape;
    if (!IsInteger(v.type)) return op + " start indices must be integers, got " + Str(v);
    if (!Unbounded(v, 0) && v.dims[0] != static_cast<int64_t>(x.rank()))
      return op + " start index vector " + Str(v) + " does not match the operand rank " + Num(x.rank());
    return {};
  }
  if (count != x.rank())
    return op + " has " + Count(count, "start index", "start indices") + " for an operand of rank " + Num(x.rank()) +
           " (" + Str(x) + ")";
  for (size_t i = first; i < inst.operands.size(); ++i) {
    const Shape& s = inst.operands[i]->shape;
    if (!s.IsScalar() || !IsInteger(s.type)) return op + " start indices must be integer scalars, got " + Str(s);
    if (s.type != inst.operands[first]->shape.type)
      return op + " start indices have different types: " + Str(inst.operands[first]->shape) + " and " + Str(s);
  }
  return {};
}

// Indices of gather/scatter with the implicit trailing 1 when index_vector_dim == rank.
Shape ExpandedIndices(Module& m, const Shape& indices, int64_t index_vector_dim) {
  if (index_vector_dim != static_cast<int64_t>(indices.rank())) return indices;
  DimList dims;
  for (size_t i = 0; i < indices.rank(); ++i) dims.Take(indices, i);
  dims.Add(1);
  return dims.Build(m, indices.type);
}

// The batching-dimension pairs shared by gather and scatter: operand dims and indices dims with
// equal sizes, neither repeated, the indices side never the index vector dimension.
std::string CheckBatchingDims(const std::string& op, const std::vector<int64_t>& operand_dims, const Shape& operand,
                              const std::vector<int64_t>& index_dims, const Shape& indices, int64_t index_vector_dim,
                              const char* operand_name, const char* index_name) {
  if (operand_dims.size() != index_dims.size())
    return op + " " + operand_name + " " + List(operand_dims) + " and " + index_name + " " + List(index_dims) +
           " differ in length";
  std::string e = CheckDimList(op + " " + index_name, index_dims, indices.rank(), false, Str(indices));
  if (!e.empty()) return e;
  for (size_t i = 0; i < index_dims.size(); ++i) {
    if (index_dims[i] == index_vector_dim)
      return op + " " + index_name + " contains index_vector_dim " + Num(index_vector_dim);
    if (!DimMatches(operand, operand_dims[i], indices, index_dims[i]))
      return op + " batching dimension " + Num(operand_dims[i]) + " of " + Str(operand) + " and dimension " +
             Num(index_dims[i]) + " of the indices " + Str(indices) + " differ in size";
  }
  return {};
}

}  // namespace

Inference InferSlice(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray()) return Error("operand of 'slice' must be an array, got " + Str(x));
  const Attribute* a = inst.FindAttr(AttrId::kSlice);
  if (!a) return Error("slice needs slice=");
  const Span<SliceDim>* ranges = &a->slices;
  if (ranges->size() != x.rank())
    return Error("slice has " + Count(ranges->size(), "range") + " for an operand of rank " + Num(x.rank()) + " (" +
                 Str(x) + ")");
  DimList dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    const SliceDim& r = (*ranges)[i];
    auto where = [&] { return " in dimension " + Num(i) + " of " + Str(x); };  // built only on failure
    if (r.start < 0) return Error("slice start " + Num(r.start) + " is negative" + where());
    if (!Unbounded(x, i) && r.limit > x.dims[i])
      return Error("slice limit " + Num(r.limit) + " is past the end" + where());
    if (r.start > r.limit)
      return Error("slice start " + Num(r.start) + " is after its limit " + Num(r.limit) + where());
    if (r.stride <= 0) return Error("slice stride " + Num(r.stride) + " must be positive" + where());
    int64_t size = r.limit == r.start ? 0 : 1 + (r.limit - r.start - 1) / r.stride;  // no overflow for any stride
    // A one-element slice of a dynamic dimension is static (XLA).
    dims.Add(size, size != 1 && KindAt(x, i) == DimKind::kBounded ? DimKind::kBounded : DimKind::kStatic);
  }
  return Inferred(dims.Build(m, x.type));
}

Inference InferDynamicSlice(Module& m, const Instruction& inst) {
  if (inst.operands.size() < 2) return Error("dynamic-slice needs an operand and start indices");
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray()) return Error("operand of 'dynamic-slice' must be an array, got " + Str(x));
  std::string e = CheckStartIndices("dynamic-slice", inst, 1, x);
  if (!e.empty()) return Error(e);
  auto sizes = IntList(inst, AttrId::kDynamicSliceSizes);
  if (!sizes) return Error("dynamic-slice needs dynamic_slice_sizes=");
  if (sizes->size() != x.rank())
    return Error("dynamic-slice has " + Count(sizes->size(), "slice size") + " for an operand of rank " +
                 Num(x.rank()) + " (" + Str(x) + ")");
  DimList dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    int64_t size = (*sizes)[i];
    if (size < 0 || (!Unbounded(x, i) && size > x.dims[i]))
      return Error("dynamic-slice size " + Num(size) + " does not fit dimension " + Num(i) + " of " + Str(x));
    dims.Add(size);
  }
  return Inferred(dims.Build(m, x.type));
}

Inference InferDynamicUpdateSlice(Module& m, const Instruction& inst) {
  if (inst.operands.size() < 3) return Error("dynamic-update-slice needs an operand, an update and start indices");
  const Shape& x = inst.operands[0]->shape;
  const Shape& u = inst.operands[1]->shape;
  if (!x.IsArray() || !u.IsArray())
    return Error("dynamic-update-slice operand and update must be arrays, got " + Str(x) + " and " + Str(u));
  std::string e = CheckStartIndices("dynamic-update-slice", inst, 2, x);
  if (!e.empty()) return Error(e);
  if (u.rank() != x.rank())
    return Error("dynamic-update-slice update " + Str(u) + " has a different rank than " + Str(x));
  if (u.type != x.type)
    return Error("dynamic-update-slice update " + Str(u) + " has a different element type than " + Str(x));
  bool dynamic = false;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!Unbounded(x, i) && !Unbounded(u, i) && u.dims[i] > x.dims[i])
      return Error("dynamic-update-slice update " + Str(u) + " is larger than " + Str(x) + " in dimension " + Num(i));
    dynamic = dynamic || (u.IsDynamicDim(i) && u.dims[i] == x.dims[i] && !x.IsDynamicDim(i));
  }
  if (!dynamic) return Inferred(x);
  // Updating a whole dimension with a dynamic update makes it dynamic (XLA).
  DimList dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    bool full = u.IsDynamicDim(i) && u.dims[i] == x.dims[i] && !x.IsDynamicDim(i);
    if (full)
      dims.Add(x.dims[i], DimKind::kBounded);
    else
      dims.Take(x, i);
  }
  return Inferred(dims.Build(m, x.type));
}

Inference InferConcatenate(Module& m, const Instruction& inst) {
  if (inst.operands.empty()) return Error("concatenate needs at least one operand");
  std::string e;
  auto dim = SingleDimension(inst, e);
  if (!dim) return Error(e);
  const Shape& first = inst.operands[0]->shape;
  for (const Instruction* op : inst.operands)
    if (!op->shape.IsArray()) return Error("concatenate operands must be arrays, got " + Str(op->shape));
  if (*dim < 0 || *dim >= static_cast<int64_t>(first.rank()))
    return Error("concatenate dimension " + Num(*dim) + " is out of range for " + Str(first));
  size_t d = static_cast<size_t>(*dim);
  for (const Instruction* op : inst.operands) {
    const Shape& s = op->shape;
    if (s.rank() != first.rank())
      return Error("concatenate operands have different ranks: " + Str(first) + " and " + Str(s));
    if (s.type != first.type)
      return Error("concatenate operands have different element types: " + Str(first) + " and " + Str(s));
    for (size_t i = 0; i < s.rank(); ++i)
      if (i != d && !DimMatches(first, i, s, i))
        return Error("concatenate operands " + Str(first) + " and " + Str(s) + " differ in dimension " + Num(i) +
                     ", which is not the concatenated one");
  }
  DimList dims;
  for (size_t i = 0; i < first.rank(); ++i) {
    bool unbounded = false, dynamic = false;
    int64_t size = 0;
    for (const Instruction* op : inst.operands) {
      const Shape& s = op->shape;
      unbounded = unbounded || Unbounded(s, i);
      dynamic = dynamic || s.IsDynamicDim(i);
      if (i != d) {
        size = s.dims[i];
      } else if (__builtin_add_overflow(size, s.dims[i], &size)) {
        return Error("concatenate along dimension " + Num(d) + " gives more than 2^63 elements in it");
      }
    }
    if (!unbounded && i == d) {
      // The other dimensions times the joined one must stay an element count (below 2^63).
      int64_t elements = size > 0 ? size : 1;
      for (size_t j = 0; j < first.rank(); ++j)
        if (j != d && first.dims[j] > 0 && __builtin_mul_overflow(elements, first.dims[j], &elements))
          return Error("concatenate gives a shape of more than 2^63 elements");
    }
    if (unbounded)
      dims.Add(-1, DimKind::kUnbounded);
    else
      dims.Add(size, dynamic ? DimKind::kBounded : DimKind::kStatic);
  }
  return Inferred(dims.Build(m, first.type));
}

Inference InferPad(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  const Shape& v = inst.operands[1]->shape;
  if (!x.IsArray()) return Error("operand of 'pad' must be an array, got " + Str(x));
  if (!v.IsScalar()) return Error("pad value must be a scalar, got " + Str(v));
  // Floats of different precision pass, as XLA's mixed-precision verifier lets them (the pad
  // value is converted; HloEvaluatorTest.Pad2DFloatArrayDifferentTypes).
  if (v.type != x.type && !(IsFloat(v.type) && IsFloat(x.type)))
    return Error("pad value " + Str(v) + " has a different element type than " + Str(x));
  std::vector<PaddingDim> config;
  if (const Attribute* a = inst.FindAttr(AttrId::kPadding)) {
    config.assign(a->padding.begin(), a->padding.end());
  } else if (x.rank() != 0) {
    return Error("pad needs padding=");
  }
  if (config.size() != x.rank())
    return Error("pad has padding for " + Count(config.size(), "dimension") + " but the operand " + Str(x) +
                 " has rank " + Num(x.rank()));
  DimList dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    const PaddingDim& p = config[i];
    if (p.interior < 0) return Error("pad interior padding " + Num(p.interior) + " is negative in dimension " + Num(i));
    if (Unbounded(x, i)) {
      dims.Take(x, i);
      continue;
    }
    __int128 size = __int128{x.dims[i]} + p.low + p.high + __int128{std::max<int64_t>(x.dims[i] - 1, 0)} * p.interior;
    if (size < 0)
      return Error("pad makes dimension " + Num(i) + " of " + Str(x) + " negative (" + Num(static_cast<int64_t>(size)) +
                   ")");
    if (size > INT64_MAX / 2) return Error("pad makes dimension " + Num(i) + " of " + Str(x) + " too large");
    dims.Add(static_cast<int64_t>(size), KindAt(x, i));
  }
  return Inferred(dims.Build(m, x.type));
}

Inference InferGather(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  const Shape& indices = inst.operands[1]->shape;
  if (!x.IsArray() || !indices.IsArray())
    return Error("gather operands must be arrays, got " + Str(x) + " and " + Str(indices));
  if (!IsInteger(indices.type)) return Error("gather indices must be integers, got " + Str(indices));
  std::optional<GatherDimensionNumbers> numbers = NumbersOf<GatherDimensionNumbers>(inst);
  if (!numbers)
    return Error(
        "gather needs offset_dims=, collapsed_slice_dims=, start_index_map=, index_vector_dim= and slice_sizes=");
  auto vec = [](DimIndexList l) { return std::vector<int64_t>(l.begin(), l.end()); };
  const int64_t ivd = numbers->index_vector_dim;
  const std::vector<int64_t> slice_sizes = vec(numbers->slice_sizes);
  std::vector<int64_t> offset = vec(numbers->offset_dims);
  std::vector<int64_t> collapsed = vec(numbers->collapsed_slice_dims);
  std::vector<int64_t> start_map = vec(numbers->start_index_map);
  std::vector<int64_t> obatch = vec(numbers->operand_batching_dims);
  std::vector<int64_t> ibatch = vec(numbers->start_indices_batching_dims);
  if (ivd < 0 || ivd > static_cast<int64_t>(indices.rank()))
    return Error("gather index_vector_dim " + Num(ivd) + " is out of range for the indices " + Str(indices));
  Shape expanded = ExpandedIndices(m, indices, ivd);
  size_t out_rank = offset.size() + expanded.rank() - 1;
  std::string x_text = Str(x);
  std::string e = CheckDimList("gather offset_dims", offset, out_rank, true, "a result of rank " + Num(out_rank));
  if (e.empty()) e = CheckDimList("gather start_index_map", start_map, x.rank(), false, x_text);
  if (e.empty()) e = CheckDimList("gather collapsed_slice_dims", collapsed, x.rank(), true, x_text);
  if (e.empty()) e = CheckDimList("gather operand_batching_dims", obatch, x.rank(), true, x_text);
  if (e.empty())
    e = CheckBatchingDims("gather", obatch, x, ibatch, expanded, ivd, "operand_batching_dims",
                          "start_indices_batching_dims");
  if (!e.empty()) return Error(e);
  if (!Unbounded(expanded, ivd) && static_cast<int64_t>(start_map.size()) != expanded.dims[ivd])
    return Error("gather start_index_map " + List(start_map) + " has " + Num(start_map.size()) +
                 " entries but the index vector dimension of " + Str(indices) + " has " + Num(expanded.dims[ivd]));
  for (int64_t d : obatch)
    if (Contains(collapsed, d)) return Error("gather dimension " + Num(d) + " is both collapsed and batching");
  if (slice_sizes.size() != x.rank())
    return Error("gather has " + Count(slice_sizes.size(), "slice size") + " for an operand of rank " + Num(x.rank()) +
                 " (" + x_text + ")");
  if (slice_sizes.size() != offset.size() + collapsed.size() + obatch.size())
    return Error("gather operand dimensions must each be an offset, collapsed or batching dimension: " + Num(x.rank()) +
                 " dimensions, " + Num(offset.size()) + " offset_dims, " + Num(collapsed.size()) +
                 " collapsed_slice_dims, " + Num(obatch.size()) + " operand_batching_dims");
  for (size_t i = 0; i < x.rank(); ++i) {
    int64_t size = slice_sizes[i];
    if (size < 0 || (!Unbounded(x, i) && size > x.dims[i]))
      return Error("gather slice size " + Num(size) + " does not fit dimension " + Num(i) + " of " + x_text);
    if (size > 1 && (Contains(collapsed, i) || Contains(obatch, i)))
      return Error("gather slice size of collapsed or batching dimension " + Num(i) + " must be 0 or 1, got " +
                   Num(size));
  }
  DimList dims;
  size_t operand_dim = 0, index_dim = 0;
  for (size_t i = 0; i < out_rank; ++i) {
    if (Contains(offset, static_cast<int64_t>(i))) {
      while (operand_dim < x.rank() && (Contains(collapsed, operand_dim) || Contains(obatch, operand_dim)))
        ++operand_dim;
      if (operand_dim >= x.rank()) return NotInferable();
      int64_t size = slice_sizes[operand_dim];
      // Gathering a whole dynamic dimension keeps it dynamic (XLA).
      dims.Add(size,
               size == x.dims[operand_dim] && x.IsDynamicDim(operand_dim) ? KindAt(x, operand_dim) : DimKind::kStatic);
      ++operand_dim;
    } else {
      if (static_cast<int64_t>(index_dim) == ivd) ++index_dim;
      if (index_dim >= expanded.rank()) return NotInferable();
      dims.Take(expanded, index_dim++);
    }
  }
  return Inferred(dims.Build(m, x.type));
}

Inference InferScatter(Module& m, const Instruction& inst) {
  size_t count = inst.operands.size();
  if (count < 3 || count % 2 == 0)
    return Error("scatter takes N operands, the indices and N updates, got " + Num(count) + " operands");
  size_t n = (count - 1) / 2;
  const Shape& indices = inst.operands[n]->shape;
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Error("scatter needs to_apply=");
  if (!indices.IsArray() || !IsInteger(indices.type))
    return Error("scatter indices must be integers, got " + Str(indices));
  std::optional<ScatterDimensionNumbers> numbers = NumbersOf<ScatterDimensionNumbers>(inst);
  if (!numbers)
    return Error(
        "scatter needs update_window_dims=, inserted_window_dims=, scatter_dims_to_operand_dims= and "
        "index_vector_dim=");
  auto vec = [](DimIndexList l) { return std::vector<int64_t>(l.begin(), l.end()); };
  const int64_t ivd = numbers->index_vector_dim;
  std::vector<int64_t> window = vec(numbers->update_window_dims);
  std::vector<int64_t> inserted = vec(numbers->inserted_window_dims);
  std::vector<int64_t> to_operand = vec(numbers->scatter_dims_to_operand_dims);
  std::vector<int64_t> ibatch = vec(numbers->input_batching_dims);
  std::vector<int64_t> sbatch = vec(numbers->scatter_indices_batching_dims);
  if (ivd < 0 || ivd > static_cast<int64_t>(indices.rank()))
    return Error("scatter index_vector_dim " + Num(ivd) + " is out of range for the indices " + Str(indices));
  Shape expanded = ExpandedIndices(m, indices, ivd);
  std::vector<const Shape*> inits;
  std::vector<Shape> init_storage;
  init_storage.reserve(n);
  std::vector<PrimitiveType> update_types;
  std::vector<Shape> results;
  for (size_t k = 0; k < n; ++k) {
    const Shape& x = inst.operands[k]->shape;
    const Shape& u = inst.operands[n + 1 + k]->shape;
    if (!x.IsArray() || !u.IsArray())
      return Error("scatter operands and updates must be arrays, got " + Str(x) + " and " + Str(u));
    if (!SameDims(x, inst.operands[0]->shape))
      return Error("scatter operands have different dimensions: " + Str(inst.operands[0]->shape) + " and " + Str(x));
    std::string x_text = Str(x);
    size_t expected_rank = expanded.rank() - 1 + window.size();
    if (u.rank() != expected_rank)
      return Error("scatter updates " + Str(u) + " must have rank " + Num(expected_rank) + " (" +
                   Count(window.size(), "window dimension") + " and " +
                   Count(expanded.rank() - 1, "scatter dimension") + ")");
    std::string e = CheckDimList("scatter update_window_dims", window, u.rank(), true, Str(u));
    if (e.empty()) e = CheckDimList("scatter inserted_window_dims", inserted, x.rank(), true, x_text);
    if (e.empty()) e = CheckDimList("scatter input_batching_dims", ibatch, x.rank(), true, x_text);
    if (e.empty()) e = CheckDimList("scatter scatter_dims_to_operand_dims", to_operand, x.rank(), false, x_text);
    if (e.empty())
      e = CheckBatchingDims("scatter", ibatch, x, sbatch, expanded, ivd, "input_batching_dims",
                            "scatter_indices_batching_dims");
    if (!e.empty()) return Error(e);
    for (int64_t d : ibatch)
      if (Contains(inserted, d)) return Error("scatter dimension " + Num(d) + " is both inserted and batching");
    if (window.size() + inserted.size() + ibatch.size() != x.rank())
      return Error("scatter operand dimensions must each be a window, inserted or batching dimension: " +
                   Num(x.rank()) + " dimensions, " + Num(window.size()) + " update_window_dims, " +
                   Num(inserted.size()) + " inserted_window_dims, " + Num(ibatch.size()) + " input_batching_dims");
    if (!Unbounded(expanded, ivd) && static_cast<int64_t>(to_operand.size()) != expanded.dims[ivd])
      return Error("scatter scatter_dims_to_operand_dims " + List(to_operand) + " has " + Num(to_operand.size()) +
                   " entries but the index vector dimension of " + Str(indices) + " has " + Num(expanded.dims[ivd]));
    size_t w = 0;
    for (size_t i = 0; i < x.rank(); ++i) {
      if (Contains(inserted, i) || Contains(ibatch, i)) continue;
      if (w >= window.size()) break;
      size_t ud = static_cast<size_t>(window[w++]);
      if (!Unbounded(x, i) && !Unbounded(u, ud) && u.dims[ud] > x.dims[i])
        return Error("scatter update window dimension " + Num(ud) + " of " + Str(u) + " is larger than dimension " +
                     Num(i) + " of " + x_text);
    }
    size_t sd = 0;
    for (size_t i = 0; i < u.rank(); ++i) {
      if (Contains(window, i)) continue;
      if (static_cast<int64_t>(sd) == ivd) ++sd;
      if (sd >= expanded.rank()) break;
      if (!DimMatches(u, i, expanded, sd))
        return Error("scatter update dimension " + Num(i) + " of " + Str(u) + " does not match dimension " + Num(sd) +
                     " of the indices " + Str(indices));
      ++sd;
    }
    init_storage.push_back(m.MakeArrayShape(x.type, {}));
    update_types.push_back(u.type);
    results.push_back(x);
  }
  for (const Shape& s : init_storage) inits.push_back(&s);
  std::string e = CheckReducer("scatter", *f, inits, update_types, "operand element type");
  if (!e.empty()) return Error(e);
  return Inferred(n == 1 ? results[0] : m.MakeTupleShape(results));
}

Inference InferReverse(Module&, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray()) return Error("operand of 'reverse' must be an array, got " + Str(x));
  auto dims = IntList(inst, AttrId::kDimensions);
  if (!dims) return Error("reverse needs dimensions=");
  std::string e = CheckDimList("reverse dimension", *dims, x.rank(), false, Str(x));
  if (!e.empty()) return Error(e);
  return Inferred(x);
}

Inference InferTranspose(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray()) return Error("operand of 'transpose' must be an array, got " + Str(x));
  auto perm = IntList(inst, AttrId::kDimensions);
  if (!perm) return Error("transpose needs dimensions=");
  if (perm->size() != x.rank())
    return Error("transpose dimensions has " + Count(perm->size(), "entry", "entries") + " for an operand of rank " +
                 Num(x.rank()));
  std::vector<bool> seen(x.rank(), false);
  DimList dims;
  for (int64_t d : *perm) {
    if (d < 0 || d >= static_cast<int64_t>(x.rank()) || seen[d])
      return Error("transpose dimensions is not a permutation");
    seen[d] = true;
    dims.Take(x, static_cast<size_t>(d));
  }
  return Inferred(dims.Build(m, x.type));
}

Inference InferSort(Module& m, const Instruction& inst) {
  if (inst.operands.empty()) return Error("sort needs at least one operand");
  const Shape& first = inst.operands[0]->shape;
  for (const Instruction* op : inst.operands) {
    if (!op->shape.IsArray()) return Error("sort operands must be arrays, got " + Str(op->shape));
    if (!SameDims(op->shape, first))
      return Error("sort operands have different dimensions: " + Str(first) + " and " + Str(op->shape));
  }
  std::string e;
  auto dim = SingleDimension(inst, e);
  if (!dim) return Error(e);
  if (*dim < 0 || *dim >= static_cast<int64_t>(first.rank()))
    return Error("sort dimension " + Num(*dim) + " is out of range for " + Str(first));
  const Computation* cmp = Called(inst, AttrId::kToApply);
  if (!cmp) return Error("sort needs to_apply=");
  Signature sig = SignatureOf(*cmp);
  size_t n = inst.operands.size();
  if (sig.params.size() != 2 * n)
    return Error("sort comparator " + Describe(*cmp) + " must take " + Count(2 * n, "parameter") + ", it takes " +
                 Num(sig.params.size()));
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const Shape* p = sig.params[i];
    PrimitiveType t = inst.operands[i / 2]->shape.type;
    if (p && (!p->IsScalar() || !SameTypeIgnoringFp(p->type, t)))
      return Error("sort comparator " + Describe(*cmp) + " parameter " + Num(i) + " must be a " +
                   std::string(PrimitiveTypeName(t)) + " scalar");
  }
  if (sig.result && !(sig.result->IsScalar() && sig.result->type == PrimitiveType::kPred))
    return Error("sort comparator " + Describe(*cmp) + " must return pred[]");
  if (n == 1) return Inferred(first);
  std::vector<Shape> elements;
  for (const Instruction* op : inst.operands) elements.push_back(op->shape);
  return Inferred(m.MakeTupleShape(elements));
}

Inference InferTopK(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray() || x.rank() == 0) return Error("topk needs an array operand of rank 1 or more, got " + Str(x));
  auto k = IntAttr(inst, AttrId::kK);
  if (!k) return Error("topk needs k=");
  size_t last = x.rank() - 1;
  if (*k < 0 || (!Unbounded(x, last) && *k > x.dims[last]))
    return Error("topk k=" + Num(*k) + " does not fit the last dimension of " + Str(x));
  DimList dims;
  for (size_t i = 0; i < last; ++i) dims.Take(x, i);
  dims.Add(*k);
  return Inferred(m.MakeTupleShape({dims.Build(m, x.type), dims.Build(m, PrimitiveType::kS32)}));
}

Inference InferGetDimensionSize(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  std::string e;
  auto dim = SingleDimension(inst, e);
  if (!dim) return Error(e);
  if (!x.IsArray() || *dim < 0 || *dim >= static_cast<int64_t>(x.rank()))
    return Error("get-dimension-size dimension " + Num(*dim) + " is out of range for " + Str(x));
  return Inferred(m.MakeArrayShape(PrimitiveType::kS32, {}));
}

Inference InferSetDimensionSize(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  const Shape& size = inst.operands[1]->shape;
  std::string e;
  auto dim = SingleDimension(inst, e);
  if (!dim) return Error(e);
  if (!x.IsArray() || *dim < 0 || *dim >= static_cast<int64_t>(x.rank()))
    return Error("set-dimension-size dimension " + Num(*dim) + " is out of range for " + Str(x));
  if (!size.IsScalar() || size.type != PrimitiveType::kS32)
    return Error("set-dimension-size size must be s32[], got " + Str(size));
  DimList dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (static_cast<int64_t>(i) == *dim && !Unbounded(x, i))
      dims.Add(x.dims[i], DimKind::kBounded);
    else
      dims.Take(x, i);
  }
  return Inferred(dims.Build(m, x.type));
}

}  // namespace nhlo::infer
