// SPDX-License-Identifier: Apache-2.0
// Shape rules of the computing opcodes: reductions, windows, contractions (dot, ragged-dot,
// scaled-dot, convolution), fft, linear algebra, batch norm and reduce-precision.
#include <algorithm>

#include "ir/dimension_numbers.h"
#include "ir/shape_inference_internal.h"

namespace nhlo::infer {
namespace {

// `what` is `prefix` + `suffix`, joined only when there is something to report.
template <typename Dims>
std::string CheckUnique(std::string_view prefix, std::string_view suffix, const Dims& dims, const Shape& s) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(s.rank()))
      return std::string(prefix) + std::string(suffix) + " dimension " + Num(dims[i]) + " is out of range for " +
             Str(s);
    for (size_t j = 0; j < i; ++j)
      if (dims[j] == dims[i])
        return std::string(prefix) + std::string(suffix) + " dimension " + Num(dims[i]) + " is used twice";
  }
  return {};
}

// The element type of a contraction's result: free in XLA (a preferred, usually wider, type),
// so the written one wins; without one the operands must agree.
std::optional<PrimitiveType> ContractionType(const Instruction& inst, const Shape& lhs, const Shape& rhs,
                                             std::string& error) {
  if (IsArrayType(inst.shape.type)) return inst.shape.type;
  if (lhs.type != rhs.type) {
    error = Op(inst) + " operands have different element types; write the result shape";
    return std::nullopt;
  }
  return lhs.type;
}

// The dot_general result dimensions: batch, lhs free, rhs free (rhs dims in `rhs_skip` are
// neither). Empty if fine, else what is wrong.
std::string DotDims(const std::string& op, const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                    const std::vector<int64_t>& rhs_skip, DimList& out) {
  if (d.lhs_batch.size() != d.rhs_batch.size())
    return op + " has " + Num(d.lhs_batch.size()) + " lhs batch dims but " + Num(d.rhs_batch.size()) +
           " rhs batch dims";
  if (d.lhs_contracting.size() != d.rhs_contracting.size())
    return op + " has " + Num(d.lhs_contracting.size()) + " lhs contracting dims but " + Num(d.rhs_contracting.size()) +
           " rhs contracting dims";
  SmallVec<int64_t, 8> lhs_used, rhs_used;
  for (int64_t v : d.lhs_batch) lhs_used.push_back(v);
  for (int64_t v : d.lhs_contracting) lhs_used.push_back(v);
  for (int64_t v : d.rhs_batch) rhs_used.push_back(v);
  for (int64_t v : d.rhs_contracting) rhs_used.push_back(v);
  std::string e = CheckUnique(op, ": lhs batch/contracting", lhs_used, lhs);
  if (e.empty()) e = CheckUnique(op, ": rhs batch/contracting", rhs_used, rhs);
  if (!e.empty()) return e;
  for (size_t i = 0; i < d.lhs_batch.size(); ++i)
    if (!DimMatches(lhs, d.lhs_batch[i], rhs, d.rhs_batch[i]))
      return op + " batch dimension sizes differ: lhs dim " + Num(d.lhs_batch[i]) + " is " +
             Num(lhs.dims[d.lhs_batch[i]]) + ", rhs dim " + Num(d.rhs_batch[i]) + " is " +
             Num(rhs.dims[d.rhs_batch[i]]);
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i)
    if (!DimMatches(lhs, d.lhs_contracting[i], rhs, d.rhs_contracting[i]))
      return op + " contracting dimension sizes differ: lhs dim " + Num(d.lhs_contracting[i]) + " is " +
             Num(lhs.dims[d.lhs_contracting[i]]) + ", rhs dim " + Num(d.rhs_contracting[i]) + " is " +
             Num(rhs.dims[d.rhs_contracting[i]]);
  for (int64_t b : d.lhs_batch) out.Take(lhs, b);
  for (size_t i = 0; i < lhs.rank(); ++i)
    if (!Contains(lhs_used, i)) out.Take(lhs, i);
  for (size_t i = 0; i < rhs.rank(); ++i)
    if (!Contains(rhs_used, i) && !Contains(rhs_skip, i)) out.Take(rhs, i);
  return {};
}

}  // namespace

Inference InferReduce(Module& m, const Instruction& inst) {
  size_t count = inst.operands.size();
  if (count < 2 || count % 2 != 0)
    return Error("reduce takes N inputs and N init values, got " + Num(count) + " operands");
  size_t n = count / 2;
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Error("reduce needs to_apply=");
  auto dims = IntList(inst, AttrId::kDimensions);
  if (!dims) return Error("reduce needs dimensions=");
  const Shape& x = inst.operands[0]->shape;
  SmallVec<const Shape*, 8> inits;  // reduces are common: no allocation for the usual few inputs
  SmallVec<PrimitiveType, 8> types;
  for (size_t i = 0; i < n; ++i) {
    const Shape& in = inst.operands[i]->shape;
    if (!in.IsArray()) return Error("reduce inputs must be arrays, got " + Str(in));
    if (!SameDims(in, x)) return Error("reduce inputs have different dimensions: " + Str(x) + " and " + Str(in));
    types.push_back(in.type);
    inits.push_back(&inst.operands[n + i]->shape);
  }
  std::string e = CheckUnique("reduce", "", *dims, x);
  if (!e.empty()) return Error(e);
  e = CheckReducer("reduce", *f, inits, types);
  if (!e.empty()) return Error(e);
  const Shape* root = SignatureOf(*f).result;
  if (!root) return NotInferable();
  DimList kept;
  for (size_t i = 0; i < x.rank(); ++i)
    if (!Contains(*dims, i)) kept.Take(x, i);
  if (!root->IsTuple()) return Inferred(kept.Build(m, root->type));
  std::vector<Shape> elements;
  for (const Shape& s : root->tuple) elements.push_back(kept.Build(m, s.type));
  return Inferred(m.MakeTupleShape(elements));
}

Inference InferReduceWindow(Module& m, const Instruction& inst) {
  size_t count = inst.operands.size();
  if (count < 2 || count % 2 != 0)
    return Error("reduce-window takes N inputs and N init values, got " + Num(count) + " operands");
  size_t n = count / 2;
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Error("reduce-window needs to_apply=");
  std::string e;
  std::vector<WindowDim> window = WindowOf(inst, e);
  if (!e.empty()) return Error(e);
  const Shape& x = inst.operands[0]->shape;
  SmallVec<const Shape*, 8> inits;  // reduces are common: no allocation for the usual few inputs
  SmallVec<PrimitiveType, 8> types;
  for (size_t i = 0; i < n; ++i) {
    const Shape& in = inst.operands[i]->shape;
    if (!in.IsArray()) return Error("reduce-window inputs must be arrays, got " + Str(in));
    if (!SameDims(in, x)) return Error("reduce-window inputs have different dimensions: " + Str(x) + " and " + Str(in));
    types.push_back(in.type);
    inits.push_back(&inst.operands[n + i]->shape);
  }
  e = CheckReducer("reduce-window", *f, inits, types);
  if (!e.empty()) return Error(e);
  DimList dims;
  e = WindowOutput("reduce-window", x, window, dims);
  if (!e.empty()) return Error(e);
  const Shape* root = SignatureOf(*f).result;
  if (!root) return NotInferable();
  // The result takes the init values' element types (XLA).
  if (!root->IsTuple()) return Inferred(dims.Build(m, inits[0]->type));
  std::vector<Shape> elements;
  for (const Shape* init : inits) elements.push_back(dims.Build(m, init->type));
  return Inferred(m.MakeTupleShape(elements));
}

Inference InferSelectAndScatter(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  const Shape& source = inst.operands[1]->shape;
  const Shape& init = inst.operands[2]->shape;
  if (!x.IsArray() || !source.IsArray())
    return Error("select-and-scatter operand and source must be arrays, got " + Str(x) + " and " + Str(source));
  const Computation* select = Called(inst, AttrId::kSelect);
  const Computation* scatter = Called(inst, AttrId::kScatter);
  if (!select || !scatter) return Error("select-and-scatter needs select= and scatter=");
  Signature sig = SignatureOf(*select);
  if (sig.params.size() != 2)
    return Error("select-and-scatter select computation " + Describe(*select) + " must take 2 parameters");
  for (const Shape* p : sig.params)
    if (p && (!p->IsScalar() || !SameTypeIgnoringFp(p->type, x.type)))
      return Error("select-and-scatter select computation " + Describe(*select) + " must take two " +
                   std::string(PrimitiveTypeName(x.type)) + " scalars");
  if (sig.result && !(sig.result->IsScalar() && sig.result->type == PrimitiveType::kPred))
    return Error("select-and-scatter select computation " + Describe(*select) + " must return pred[]");
  const Shape* inits[] = {&init};
  PrimitiveType types[] = {source.type};
  std::string e = CheckReducer("select-and-scatter scatter", *scatter, inits, types);
  if (!e.empty()) return Error(e);
  std::vector<WindowDim> window = WindowOf(inst, e);
  if (!e.empty()) return Error(e);
  DimList dims;
  e = WindowOutput("select-and-scatter", x, window, dims);
  if (!e.empty()) return Error(e);
  Shape windows = dims.Build(m, source.type);
  if (!CompatibleIgnoringFp(source, windows))
    return Error("select-and-scatter source " + Str(source) + " does not match the windows of " + Str(x) + ", " +
                 Str(windows));
  return Inferred(x);
}

// lenient: scan is new in XLA and its rule is not written down in the references; this follows
// the importer's example: to_apply(input elements..., carries...) -> (outputs..., carries...), and
// the result stacks each output along the scanned dimension, then the final carries.
Inference InferScan(Module& m, const Instruction& inst) {
  const Computation* f = Called(inst, AttrId::kToApply);
  if (!f) return Error("scan needs to_apply=");
  auto carries = IntAttr(inst, AttrId::kNumCarries);
  if (!carries) return Error("scan needs num_carries=");
  if (*carries < 0 || *carries > static_cast<int64_t>(inst.operands.size()))
    return Error("scan num_carries=" + Num(*carries) + " does not fit its " + Count(inst.operands.size(), "operand"));
  std::string e;
  auto dim = SingleDimension(inst, e);
  if (!dim) return Error(e);
  size_t inputs = inst.operands.size() - static_cast<size_t>(*carries);
  if (inputs == 0) return NotInferable();
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray() || *dim < 0 || *dim >= static_cast<int64_t>(x.rank()))
    return Error("scan dimension " + Num(*dim) + " is out of range for " + Str(x));
  Signature sig = SignatureOf(*f);
  if (sig.params.size() != inst.operands.size())
    return Error("scan computation " + Describe(*f) + " must take " + Count(inst.operands.size(), "parameter"));
  // Parameter i takes slice i of input i (the input without the scan dimension), then the
  // carries take their inits' shapes, as XLA's ScanExpander passes them.
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    if (!sig.params[i]) return NotInferable();
    const Shape& op = inst.operands[i]->shape;
    const Shape& param = *sig.params[i];
    bool fits = op.IsArray() && param.IsArray() && op.type == param.type;
    if (fits && i < inputs) {
      fits = op.rank() == param.rank() + 1 && *dim < static_cast<int64_t>(op.rank());
      for (size_t d = 0, p = 0; fits && d < op.rank(); ++d)
        if (static_cast<int64_t>(d) != *dim) fits = op.dims[d] == param.dims[p++];
    } else if (fits) {
      fits = SameShape(op, param);
    }
    if (!fits)
      return Error("scan operand " + Num(static_cast<int64_t>(i)) + " " + Str(op) + " does not fit parameter " +
                   Num(static_cast<int64_t>(i)) + " " + Str(param) + " of " + Describe(*f) +
                   (i < inputs ? " (an input's slice along the scan dimension)" : " (a carry)"));
  }
  if (!sig.result || !sig.result->IsTuple() || sig.result->tuple.size() < static_cast<size_t>(*carries))
    return NotInferable();
  size_t outputs = sig.result->tuple.size() - static_cast<size_t>(*carries);
  std::vector<Shape> elements;
  for (size_t i = 0; i < outputs; ++i) {
    const Shape& per_step = sig.result->tuple[i];
    if (!per_step.IsArray() || static_cast<size_t>(*dim) > per_step.rank()) return NotInferable();
    DimList dims;
    for (size_t d = 0; d <= per_step.rank(); ++d) {
      if (static_cast<int64_t>(d) == *dim) dims.Take(x, d);
      if (d < per_step.rank()) dims.Take(per_step, d);
    }
    elements.push_back(dims.Build(m, per_step.type));
  }
  for (size_t i = outputs; i < sig.result->tuple.size(); ++i) {
    const Shape& carry = sig.result->tuple[i];
    if (!sig.params[inputs + i - outputs]) return NotInferable();
    const Shape& param = *sig.params[inputs + i - outputs];
    if (!SameShape(carry, param))
      return Error("scan computation " + Describe(*f) + " returns carry " + Str(carry) + " for parameter " +
                   Str(param));
    elements.push_back(carry);
  }
  return Inferred(m.MakeTupleShape(elements));
}

Inference InferDot(Module& m, const Instruction& inst) {
  const Shape& lhs = inst.operands[0]->shape;
  const Shape& rhs = inst.operands[1]->shape;
  if (!lhs.IsArray() || !rhs.IsArray()) return Error("operands of 'dot' must be arrays");
  DimList dims;
  std::string e = DotDims("dot", lhs, rhs, DotNumbersOf(inst), {}, dims);
  if (!e.empty()) return Error(e);
  auto type = ContractionType(inst, lhs, rhs, e);
  if (!type) return Error(e);
  return Inferred(dims.Build(m, *type));
}

// The result follows XLA's three modes (ragged non-contracting, contracting or batch
// dimension). group_sizes is [b..., x..., g] or [g] (x: the lhs dimensions of the ragged kind
// before the ragged one; mode batch has no b...), as jax.lax.ragged_dot_general defines it; a
// non-contracting ragged dimension needs one rhs group dimension of extent g, the other modes
// none [inferred from the JAX definition and XLA's RaggedDotRewriter].
Inference InferRaggedDot(Module& m, const Instruction& inst) {
  const Shape& lhs = inst.operands[0]->shape;
  const Shape& rhs = inst.operands[1]->shape;
  const Shape& groups = inst.operands[2]->shape;
  if (!lhs.IsArray() || !rhs.IsArray()) return Error("operands of 'ragged-dot' must be arrays");
  if (!groups.IsArray() || !IsInteger(groups.type) || groups.rank() == 0)
    return Error("ragged-dot group sizes must be an integer array, got " + Str(groups));
  const std::optional<RaggedDotDimensionNumbers> numbers = NumbersOf<RaggedDotDimensionNumbers>(inst);
  if (!numbers || numbers->lhs_ragged.size() != 1) return Error("ragged-dot needs exactly one lhs_ragged_dims entry");
  const std::vector<int64_t> ragged(numbers->lhs_ragged.begin(), numbers->lhs_ragged.end());
  const std::vector<int64_t> group_dims(numbers->rhs_group.begin(), numbers->rhs_group.end());
  std::string e = CheckUnique("ragged-dot lhs_ragged_dims", "", ragged, lhs);
  if (e.empty()) e = CheckUnique("ragged-dot rhs_group_dims", "", group_dims, rhs);
  if (!e.empty()) return Error(e);
  const DotDimensionNumbers& d = numbers->dot;
  const int64_t r = ragged[0];
  const bool contracting = Contains(d.lhs_contracting, r), batch = Contains(d.lhs_batch, r);
  if (!contracting && !batch && group_dims.size() != 1)
    return Error("ragged-dot with a non-contracting ragged dimension needs one rhs_group_dims entry");
  if ((contracting || batch) && !group_dims.empty())
    return Error("ragged-dot rhs_group_dims is only allowed when the ragged dimension is non-contracting");
  const int64_t g = groups.dims[groups.rank() - 1];
  if (group_dims.size() == 1 && rhs.dims[group_dims[0]] != g)
    return Error("ragged-dot rhs group dimension " + Num(group_dims[0]) + " has " + Num(rhs.dims[group_dims[0]]) +
                 " groups, group sizes " + Str(groups) + " has " + Num(g));
  for (int64_t b : d.lhs_batch)
    if (b < 0 || b >= static_cast<int64_t>(lhs.rank()))
      return Error("ragged-dot lhs_batch_dims entry " + Num(b) + " is out of range for " + Str(lhs));
  if (groups.rank() > 1) {
    std::vector<int64_t> want;
    if (!batch)
      for (int64_t b : d.lhs_batch) want.push_back(lhs.dims[b]);
    for (int64_t x = 0; x < r; ++x) {
      bool same_kind = contracting ? Contains(d.lhs_contracting, x)
                       : batch     ? Contains(d.lhs_batch, x)
                                   : !Contains(d.lhs_contracting, x) && !Contains(d.lhs_batch, x);
      if (same_kind) want.push_back(lhs.dims[x]);
    }
    want.push_back(g);
    bool same = want.size() == static_cast<size_t>(groups.rank());
    for (size_t i = 0; same && i < want.size(); ++i) same = groups.dims[i] == want[i];
    if (!same) {
      std::string w;
      for (size_t i = 0; i < want.size(); ++i) w += (i ? "," : "") + Num(want[i]);
      return Error("ragged-dot group sizes " + Str(groups) + " must have the dimensions [" + w + "]" +
                   (want.size() > 1 ? " or [" + Num(g) + "]" : ""));
    }
  }
  DimList dims;
  if (contracting) dims.Take(groups, groups.rank() - 1);
  e = DotDims("ragged-dot", lhs, rhs, d, group_dims, dims);
  if (!e.empty()) return Error(e);
  auto type = ContractionType(inst, lhs, rhs, e);
  if (!type) return Error(e);
  return Inferred(dims.Build(m, *type));
}

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale) — XLA's operand order, as the corpus writes it (the
// grammar notes' (lhs, lhs_scale, rhs, rhs_scale) is a mistake there): a dot of lhs and rhs;
// the scales only need to match their operand's rank. lenient: XLA's block-size rules for the
// scales are not checked.
Inference InferScaledDot(Module& m, const Instruction& inst) {
  auto with_order = [&](size_t lhs_i, size_t rhs_i, size_t lhs_scale_i, size_t rhs_scale_i) -> Inference {
    const Shape& lhs = inst.operands[lhs_i]->shape;
    const Shape& rhs = inst.operands[rhs_i]->shape;
    if (!lhs.IsArray() || !rhs.IsArray()) return Error("operands of 'scaled-dot' must be arrays");
    for (auto [scale_i, of_i] : {std::pair{lhs_scale_i, lhs_i}, std::pair{rhs_scale_i, rhs_i}}) {
      const Shape& scale = inst.operands[scale_i]->shape;
      const Shape& of = inst.operands[of_i]->shape;
      if (!scale.IsArray() || (!scale.IsScalar() && scale.rank() != of.rank()))
        return Error("scaled-dot scale " + Str(scale) + " does not match the rank of " + Str(of));
    }
    DimList dims;
    std::string e = DotDims("scaled-dot", lhs, rhs, DotNumbersOf(inst), {}, dims);
    if (!e.empty()) return Error(e);
    auto type = ContractionType(inst, lhs, rhs, e);
    if (!type) return Error(e);
    return Inferred(dims.Build(m, *type));
  };
  return with_order(0, 1, 2, 3);
}

Inference InferConvolution(Module& m, const Instruction& inst) {
  const Shape& lhs = inst.operands[0]->shape;
  const Shape& rhs = inst.operands[1]->shape;
  if (!lhs.IsArray() || !rhs.IsArray()) return Error("operands of 'convolution' must be arrays");
  const std::optional<ConvolutionDimensionNumbers> numbers = NumbersOf<ConvolutionDimensionNumbers>(inst);
  if (!numbers) return Error("convolution needs dim_labels=");
  const ConvDimLabels& l = *numbers->dim_labels;
  // lenient: XLA's rule needs every dimension labelled; `?` labels are accepted unchecked.
  if (l.has_unknown) return NotInferable();
  const int64_t fgc = numbers->feature_group_count, bgc = numbers->batch_group_count;
  if (fgc <= 0) return Error("convolution feature_group_count must be positive, got " + Num(fgc));
  if (bgc <= 0) return Error("convolution batch_group_count must be positive, got " + Num(bgc));
  if (fgc > 1 && bgc > 1)
    return Error("convolution cannot have both feature_group_count and batch_group_count above 1");
  size_t spatial = l.input_spatial.size();
  if (l.input_rank != lhs.rank())
    return Error("convolution dim_labels describe an input of rank " + Num(l.input_rank) + ", got " + Str(lhs));
  if (l.kernel_rank != rhs.rank())
    return Error("convolution dim_labels describe a kernel of rank " + Num(l.kernel_rank) + ", got " + Str(rhs));
  if (lhs.rank() != spatial + 2) return Error("convolution input " + Str(lhs) + " must have rank " + Num(spatial + 2));
  const std::vector<WindowDim> window(numbers->window.begin(), numbers->window.end());
  if (window.size() != spatial)
    return Error("convolution window has " + Count(window.size(), "dimension") + " but dim_labels have " +
                 Count(spatial, "spatial dimension"));
  int64_t in_features = lhs.dims[l.input_feature];
  int64_t batch = lhs.dims[l.input_batch];
  int64_t kernel_in = rhs.dims[l.kernel_input_feature];
  int64_t kernel_out = rhs.dims[l.kernel_output_feature];
  bool static_features = !Unbounded(lhs, l.input_feature) && !Unbounded(rhs, l.kernel_input_feature);
  if (static_features && (in_features % fgc != 0 || in_features / fgc != kernel_in))
    return Error("convolution input features (" + Num(in_features) + " in " + Str(lhs) + ") / feature_group_count " +
                 Num(fgc) + " must equal the kernel input features (" + Num(kernel_in) + " in " + Str(rhs) + ")");
  if (!Unbounded(rhs, l.kernel_output_feature) && (kernel_out % fgc != 0 || kernel_out % bgc != 0))
    return Error("convolution kernel output features (" + Num(kernel_out) + ") must be a multiple of the group count");
  if (!Unbounded(lhs, l.input_batch) && batch % bgc != 0)
    return Error("convolution batch (" + Num(batch) + ") must be a multiple of batch_group_count " + Num(bgc));
  Shape base;
  DimList base_dims;
  for (size_t i = 0; i < spatial; ++i) {
    base_dims.Take(lhs, l.input_spatial[i]);
    if (!Unbounded(rhs, l.kernel_spatial[i]) && rhs.dims[l.kernel_spatial[i]] != window[i].size)
      return Error("convolution window size " + Num(window[i].size) + " does not match kernel dimension " +
                   Num(l.kernel_spatial[i]) + " of " + Str(rhs));
  }
  base = base_dims.Build(m, lhs.type);
  DimList windows;
  std::string e = WindowOutput("convolution", base, window, windows);
  if (!e.empty()) return Error(e);
  Shape window_shape = windows.Build(m, lhs.type);
  // Output dimensions by position: batch, feature and spatial per the output labels.
  SmallVec<int64_t, 8> sizes(spatial + 2, 0);
  SmallVec<DimKind, 8> kinds(spatial + 2, DimKind::kStatic);
  sizes[l.output_batch] = Unbounded(lhs, l.input_batch) ? -1 : batch / bgc;
  kinds[l.output_batch] = KindAt(lhs, l.input_batch);
  sizes[l.output_feature] = kernel_out;
  kinds[l.output_feature] = KindAt(rhs, l.kernel_output_feature);
  for (size_t i = 0; i < spatial; ++i) {
    sizes[l.output_spatial[i]] = window_shape.dims[i];
    DimKind k = KindAt(window_shape, i);
    if (k == DimKind::kStatic && rhs.IsDynamicDim(l.kernel_spatial[i])) k = DimKind::kBounded;
    kinds[l.output_spatial[i]] = k;
  }
  auto type = ContractionType(inst, lhs, rhs, e);
  if (!type) return Error(e);
  DimList out;
  for (size_t i = 0; i < sizes.size(); ++i) out.Add(sizes[i], kinds[i]);
  return Inferred(out.Build(m, *type));
}

Inference InferFft(Module& m, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  const Attribute* type_attr = inst.FindAttr(AttrId::kFftType);
  auto length = IntList(inst, AttrId::kFftLength);
  if (!type_attr) return Error("fft needs fft_type=");
  if (!length) return Error("fft needs fft_length=");
  FftType type = static_cast<FftType>(type_attr->i);
  size_t n = length->size();
  if (n < 1 || n > 3) return Error("fft_length must have 1 to 3 entries, got " + List(*length));
  if (!x.IsArray() || x.rank() < n)
    return Error("fft of rank " + Num(n) + " needs an operand of rank " + Num(n) + " or more, got " + Str(x));
  size_t first = x.rank() - n;
  std::string type_name(EnumValueName(EnumSet::kFftType, type_attr->i));
  if (type == FftType::kFft || type == FftType::kIfft) {
    if (!IsComplex(x.type)) return Error(type_name + " needs a complex operand, got " + Str(x));
    return Inferred(x);
  }
  if (type == FftType::kRfft) {
    if (x.type != PrimitiveType::kF32 && x.type != PrimitiveType::kF64)
      return Error("RFFT needs an f32 or f64 operand, got " + Str(x));
    for (size_t i = 0; i < n; ++i)
      if (!Unbounded(x, first + i) && x.dims[first + i] != (*length)[i])
        return Error("RFFT operand " + Str(x) + " does not end in the fft_length " + List(*length));
    DimList dims;
    for (size_t i = 0; i < x.rank(); ++i) dims.Take(x, i);
    if (length->back() != 0) dims.Set(x.rank() - 1, length->back() / 2 + 1, DimKind::kStatic);
    return Inferred(dims.Build(m, x.type == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128));
  }
  if (type == FftType::kIrfft) {
    if (!IsComplex(x.type)) return Error("IRFFT needs a complex operand, got " + Str(x));
    for (size_t i = 0; i + 1 < n; ++i)
      if (!Unbounded(x, first + i) && x.dims[first + i] != (*length)[i])
        return Error("IRFFT operand " + Str(x) + " does not match the fft_length " + List(*length));
    int64_t last = x.dims[x.rank() - 1];
    if (!Unbounded(x, x.rank() - 1) && (last != 0 || length->back() != 0) && last != length->back() / 2 + 1)
      return Error("IRFFT operand " + Str(x) + " must end in fft_length/2+1 = " + Num(length->back() / 2 + 1));
    DimList dims;
    for (size_t i = 0; i < x.rank(); ++i) dims.Take(x, i);
    dims.Set(x.rank() - 1, length->back(), DimKind::kStatic);
    return Inferred(dims.Build(m, ComplexComponent(x.type)));
  }
  return Error("fft_type must be FFT, IFFT, RFFT or IRFFT, got " + type_name);
}

Inference InferTriangularSolve(Module&, const Instruction& inst) {
  const Shape& a = inst.operands[0]->shape;
  const Shape& b = inst.operands[1]->shape;
  if (!a.IsArray() || !b.IsArray() || (!IsFloat(a.type) && !IsComplex(a.type)) || a.type != b.type)
    return Error("triangular-solve needs two floating-point or complex operands of one type, got " + Str(a) + " and " +
                 Str(b));
  if (a.rank() < 2) return Error("triangular-solve 'a' must have rank 2 or more, got " + Str(a));
  if (b.rank() != a.rank())
    return Error("triangular-solve operands have different ranks: " + Str(a) + " and " + Str(b));
  size_t r = a.rank();
  if (!DimMatches(a, r - 2, a, r - 1))
    return Error("triangular-solve 'a' must be square in its two minor dimensions, got " + Str(a));
  const Attribute* left = inst.FindAttr(AttrId::kLeftSide);
  size_t shared = left && left->b ? r - 2 : r - 1;
  if (!DimMatches(a, r - 1, b, shared))
    return Error("triangular-solve shared dimension of " + Str(a) + " and " + Str(b) + " differs");
  for (size_t i = 0; i + 2 < r; ++i)
    if (!DimMatches(a, i, b, i)) return Error("triangular-solve batch dimensions differ: " + Str(a) + " and " + Str(b));
  return Inferred(b);
}

Inference InferCholesky(Module&, const Instruction& inst) {
  const Shape& a = inst.operands[0]->shape;
  if (!a.IsArray() || (!IsFloat(a.type) && !IsComplex(a.type)))
    return Error("cholesky needs a floating-point or complex operand, got " + Str(a));
  if (a.rank() < 2) return Error("cholesky operand must have rank 2 or more, got " + Str(a));
  if (!DimMatches(a, a.rank() - 2, a, a.rank() - 1))
    return Error("cholesky operand must be square in its two minor dimensions, got " + Str(a));
  return Inferred(a);
}

Inference InferBatchNorm(Module& m, const Instruction& inst) {
  std::string op = Op(inst);
  const Shape& x = inst.operands[0]->shape;
  auto feature = IntAttr(inst, AttrId::kFeatureIndex);
  if (!feature) return Error(op + " needs feature_index=");
  if (!x.IsArray() || x.rank() < 1 || !IsFloat(x.type))
    return Error(op + " needs a floating-point operand of rank 1 or more, got " + Str(x));
  if (*feature < 0 || *feature >= static_cast<int64_t>(x.rank()))
    return Error(op + " feature_index " + Num(*feature) + " is out of range for " + Str(x));
  size_t f = static_cast<size_t>(*feature);
  // Operands after x: training (scale, offset), inference (scale, offset, mean, variance),
  // grad (scale, mean, variance, grad_output); every one but grad_output is per feature.
  size_t per_feature_end = inst.opcode == Opcode::kBatchNormGrad ? 4 : inst.operands.size();
  static const char* const kTrainingNames[] = {"operand", "scale", "offset"};
  static const char* const kInferenceNames[] = {"operand", "scale", "offset", "mean", "variance"};
  static const char* const kGradNames[] = {"operand", "scale", "mean", "variance", "grad_output"};
  const char* const* names = inst.opcode == Opcode::kBatchNormTraining    ? kTrainingNames
                             : inst.opcode == Opcode::kBatchNormInference ? kInferenceNames
                                                                          : kGradNames;
  for (size_t i = 1; i < inst.operands.size(); ++i) {
    const Shape& s = inst.operands[i]->shape;
    if (!s.IsArray() || s.type != x.type)
      return Error(op + " " + names[i] + " " + Str(s) + " must have the element type of " + Str(x));
    if (i < per_feature_end) {
      if (s.rank() != 1 || !DimMatches(s, 0, x, f))
        return Error(op + " " + names[i] + " " + Str(s) + " must have one entry per feature (dimension " + Num(f) +
                     " of " + Str(x) + ")");
    } else if (!SameDims(s, x)) {
      return Error(op + " " + names[i] + " " + Str(s) + " must have the dimensions of " + Str(x));
    }
  }
  if (inst.opcode == Opcode::kBatchNormInference) return Inferred(x);
  DimList features;
  if (Unbounded(x, f))
    features.Take(x, f);
  else
    features.Add(x.dims[f]);  // static even for a dynamic feature dimension (XLA)
  Shape per_feature = features.Build(m, x.type);
  return Inferred(m.MakeTupleShape({x, per_feature, per_feature}));
}

Inference InferReducePrecision(Module&, const Instruction& inst) {
  const Shape& x = inst.operands[0]->shape;
  if (!x.IsArray() || !IsFloat(x.type)) return Error("reduce-precision needs a floating-point operand, got " + Str(x));
  auto exponent = IntAttr(inst, AttrId::kExponentBits);
  auto mantissa = IntAttr(inst, AttrId::kMantissaBits);
  if (!exponent || !mantissa) return Error("reduce-precision needs exponent_bits= and mantissa_bits=");
  if (*exponent < 1) return Error("reduce-precision exponent_bits must be at least 1, got " + Num(*exponent));
  if (*mantissa < 0) return Error("reduce-precision mantissa_bits must not be negative, got " + Num(*mantissa));
  return Inferred(x);
}

}  // namespace nhlo::infer
