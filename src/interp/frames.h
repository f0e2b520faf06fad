// SPDX-License-Identifier: Apache-2.0
// The interpreter's memory (issue 32's split of the machine): each computation's pointer table
// (temps placed in its frame of the arena, parameters bound by pointer to the caller's values,
// constants unpacked once), the running computation and its frame, and the steps that only move
// values between buffers: tuples' trees, asynchronous pairs, transfers. ControlFlow
// (control_flow.h) runs computations on top of it; the Machine (interp.cc) dispatches steps.
#pragma once

#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "codegen/bundle_format.h"
#include "interp/dynamic_steps.h"
#include "interp/kernels.h"
#include "interp/lower.h"
#include "interp/value.h"
#include "support/large_alloc.h"
#include "support/mapped_arena.h"

namespace nhlo::machine_internal {

class Frames {
 public:
  explicit Frames(const BundleProgram& p) : p_(p) {}

 protected:
  size_t IndexOf(const ComputationRecord& comp) const { return static_cast<size_t>(&comp - p_.computations.data()); }

  // Makes `comp` the running computation with its frame at `base`.
  void SetCurrent(const ComputationRecord& comp, uint8_t* base) {
    size_t index = IndexOf(comp);
    std::vector<uint8_t*>& ptrs = ptrs_[index];
    for (uint32_t t : temps_[index]) ptrs[t] = base + comp.buffers[t].location;
    ResolveAliases(index);
    cur_ = &comp;
    ptr_ = ptrs.data();
    base_ = base;
  }

  // Points each alias at its parameter's or constant's bytes: after the parameters are bound.
  void ResolveAliases(size_t index) {
    std::vector<uint8_t*>& ptrs = ptrs_[index];
    for (const auto& [alias, target] : aliases_[index]) ptrs[alias] = ptrs[target];
  }

  const BufferRecord& B(uint32_t buffer) const { return cur_->buffers[buffer]; }
  uint8_t*& P(const ComputationRecord& comp, uint32_t buffer) { return ptrs_[IndexOf(comp)][buffer]; }
  // Where the callees of bundle `b` place their frame.
  uint8_t* CalleeBase(const BundleRecord& b) const { return base_ + b.callee_frame; }

  // Binds an entry parameter to the argument's own bytes: parameters are only read (every value
  // has its own buffer, so no kernel writes into one), so a borrowed argument is not copied. A
  // smaller value for a bounded parameter is padded into a copy the frames keep.
  Status BindArgument(uint32_t buffer, const Value& v, const std::string& what) {
    const BufferRecord& b = B(buffer);
    if (b.type == PrimitiveType::kTuple) {
      if (!v.IsTuple() || v.tuple.size() != b.tuple.size())
        return Status::Error(what + " must be a tuple of " + std::to_string(b.tuple.size()) + " elements");
      for (size_t i = 0; i < b.tuple.size(); ++i)
        NHLO_TRY(BindArgument(b.tuple[i], v.tuple[i], what + "." + std::to_string(i)));
      return OkStatus();
    }
    if (v.type == b.type && v.dims != b.dims && FitsBound(b, v.dims)) {
      // A smaller value for a bounded parameter: laid out at the bound, its dims the runtime sizes.
      std::string& padded = padded_args_.emplace_back(b.size, '\0');
      CopyBox(reinterpret_cast<const uint8_t*>(v.bytes.data()), v.dims, reinterpret_cast<uint8_t*>(padded.data()),
              b.dims, v.dims, HostByteSize(b.type));
      SizesOf(*cur_, buffer) = v.dims;  // below the bound: FitsBound held and v.dims != b.dims
      ptr_[buffer] = reinterpret_cast<uint8_t*>(padded.data());
      return OkStatus();
    }
    if (v.type != b.type || v.dims != b.dims) {
      std::string want = std::string(PrimitiveTypeName(b.type)) + "[";
      for (size_t i = 0; i < b.dims.size(); ++i)
        want += (i ? "," : "") + std::string(i < b.dim_kinds.size() && b.dim_kinds[i] ? "<=" : "") +
                std::to_string(b.dims[i]);
      return Status::Error(what + " has shape " + ValueShapeText(v) + ", expected " + want + "]");
    }
    ptr_[buffer] = reinterpret_cast<uint8_t*>(const_cast<char*>(v.bytes.data()));
    return OkStatus();
  }

  Value ReadValue(uint32_t buffer) const {
    const BufferRecord& b = B(buffer);
    Value v;
    v.type = b.type;
    if (b.type == PrimitiveType::kTuple) {
      for (uint32_t e : b.tuple) v.tuple.push_back(ReadValue(e));
      return v;
    }
    v.dims = b.dims;
    if (!IsBounded(b)) {
      if (ptr_[buffer]) AssignBytes(v.bytes, reinterpret_cast<const char*>(ptr_[buffer]), b.size);
      return v;
    }
    // A bounded dynamic value: its runtime sizes and only the elements inside them.
    for (size_t d = 0; d < b.dims.size(); ++d) v.bounds.push_back(b.dim_kinds[d] != 0 ? b.dims[d] : -1);
    if (!sizes_[IndexOf(*cur_)][buffer].empty()) v.dims = sizes_[IndexOf(*cur_)][buffer];
    int size = HostByteSize(b.type);
    AssignZeros(v.bytes, static_cast<size_t>(CheckedElementCount(v.dims)) * static_cast<size_t>(size));
    if (ptr_[buffer]) CopyBox(ptr_[buffer], b.dims, reinterpret_cast<uint8_t*>(v.bytes.data()), v.dims, v.dims, size);
    return v;
  }

  // Copies the value tree of buffer `from` of computation `src` into buffer `to` of the running
  // computation, after comparing the two trees as the load compares control flow's (MatchTree).
  Status CopyTreeFrom(const ComputationRecord& src, uint32_t from, uint32_t to) {
    NHLO_TRY(MatchTree(src, from, *cur_, to, TreeUse::kCopy));
    return CopyMatchedFrom(src, from, to);
  }
  Status CopyTree(uint32_t from, uint32_t to) { return CopyTreeFrom(*cur_, from, to); }
  // CopyTreeFrom for a pair already compared (at load, lower_control.cc): the copies only.
  Status CopyMatchedFrom(const ComputationRecord& src, uint32_t from, uint32_t to) {
    const BufferRecord& a = src.buffers[from];
    if (a.type == PrimitiveType::kTuple) {
      const BufferRecord& b = B(to);
      for (size_t i = 0; i < a.tuple.size(); ++i) NHLO_TRY(CopyMatchedFrom(src, a.tuple[i], b.tuple[i]));
      return OkStatus();
    }
    return CopyLeaf(src, from, to);
  }
  // One array (or token) of `src` into buffer `to` of the running computation, with its sizes.
  Status CopyLeaf(const ComputationRecord& src, uint32_t from, uint32_t to) {
    const BufferRecord& a = src.buffers[from];
    NHLO_TRY(CarrySizes(SizesOf(src, from), B(to), SizesOf(*cur_, to)));
    uint8_t* source = P(src, from);
    if (a.size > 0) {
      if (!source || !ptr_[to]) return Status::Error("bundle reads an unbound buffer '" + std::string(a.name) + "'");
      if (source != ptr_[to]) std::memmove(ptr_[to], source, a.size);
    }
    return OkStatus();
  }

  Result<Buf> Array(uint32_t buffer) const {
    const BufferRecord& b = B(buffer);
    if (!IsArrayType(b.type)) return Status::Error("buffer '" + std::string(b.name) + "' is not an array");
    if (!ptr_[buffer] && b.size > 0)
      return Status::Error("buffer '" + std::string(b.name) + "' is read before it is bound");
    return Buf{&b, ptr_[buffer]};
  }

  void ZeroTree(uint32_t buffer) {
    const BufferRecord& b = B(buffer);
    if (b.type == PrimitiveType::kTuple) {
      for (uint32_t e : b.tuple) ZeroTree(e);
    } else if (b.size > 0 && ptr_[buffer]) {
      std::memset(ptr_[buffer], 0, b.size);
    }
  }

  // ---- asynchronous pairs, run at the start -------------------------------------------------
  // async-start runs its computation at once and holds ((operands...), result, contexts...);
  // async-update passes that on, async-done takes the result out. copy-start holds
  // (destination, source, context), both copies of the operand, and copy-done takes the
  // destination. Contexts are u32/s32 scalars nhlo leaves zero.
  // Element i of tuple buffer `buffer`, for the asynchronous pairs' held values.
  Result<uint32_t> HeldElement(const BundleRecord& b, uint32_t buffer, size_t i) {
    const BufferRecord& t = B(buffer);
    if (t.type != PrimitiveType::kTuple || t.tuple.size() <= i)
      return Status::Error("'" + std::string(OpcodeName(b.opcode)) + "' expects a tuple of at least " +
                           std::to_string(i + 1) + " elements in buffer '" + std::string(t.name) + "'");
    return t.tuple[i];
  }

  // ---- bounded dynamic shapes (dynamic_steps.cc) ---------------------------------------
  std::vector<int64_t>& SizesOf(const ComputationRecord& comp, uint32_t buffer) {
    return sizes_[IndexOf(comp)][buffer];
  }
  // A value's runtime sizes follow it into buffer `to` (record `to_rec`), which must hold them.
  static Status CarrySizes(const std::vector<int64_t>& from, const BufferRecord& to_rec, std::vector<int64_t>& to) {
    if (from.empty()) {
      to.clear();
      return OkStatus();
    }
    if (!FitsBound(to_rec, from))
      return Status::Error("a value below its bounds cannot move into '" + std::string(to_rec.name) +
                           "', whose shape does not hold its runtime sizes");
    if (&from != &to) to = from;
    return OkStatus();
  }

  // Binds parameter buffer `param` of callee `f` to buffer `arg` of the running computation,
  // a pair whose trees the load compared (lower_control.cc).
  Status BindMatched(const ComputationRecord& f, uint32_t param, uint32_t arg) {
    const BufferRecord& pb = f.buffers[param];
    if (pb.type == PrimitiveType::kTuple) {
      const BufferRecord& ab = B(arg);
      for (size_t i = 0; i < pb.tuple.size(); ++i) NHLO_TRY(BindMatched(f, pb.tuple[i], ab.tuple[i]));
      return OkStatus();
    }
    P(f, param) = ptr_[arg];
    return CarrySizes(SizesOf(*cur_, arg), pb, SizesOf(f, param));
  }

  // The result buffers of an op that returns one array for n == 1 and an n-tuple otherwise
  // (reduce, reduce-window, sort, scatter).
  Result<std::vector<Buf>> ResultLeaves(const BundleRecord& b, size_t n, const char* op) {
    std::vector<Buf> out;
    const BufferRecord& r = B(b.result);
    if (n == 1) {
      NHLO_ASSIGN_OR_RETURN(Buf o, Array(b.result));
      out.push_back(o);
      return out;
    }
    if (r.type != PrimitiveType::kTuple || r.tuple.size() != n)
      return Status::Error(std::string(op) + " of several inputs returns a tuple");
    for (uint32_t e : r.tuple) {
      NHLO_ASSIGN_OR_RETURN(Buf o, Array(e));
      out.push_back(o);
    }
    return out;
  }

  // Array views of operands [first, first + count).
  Result<std::vector<Buf>> OperandArrays(const BundleRecord& b, size_t first, size_t count) {
    std::vector<Buf> bufs;
    for (size_t i = first; i < first + count; ++i) {
      NHLO_ASSIGN_OR_RETURN(Buf x, Array(b.operands[i]));
      bufs.push_back(x);
    }
    return bufs;
  }
  Status RunAsyncUpdate(const Step& s) { return CopyTree(s.bundle->operands[0], s.bundle->result); }
  Status RunAsyncDone(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t result, HeldElement(b, b.operands[0], 1));
    return CopyTree(result, b.result);
  }
  Status RunCopyStart(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t destination, HeldElement(b, b.result, 0));
    NHLO_ASSIGN_OR_RETURN(uint32_t source, HeldElement(b, b.result, 1));
    const BufferRecord& r = B(b.result);
    if (r.tuple.size() > 2) ZeroTree(r.tuple[2]);
    NHLO_TRY(CopyTree(b.operands[0], source));
    return CopyTree(b.operands[0], destination);
  }
  Status RunCopyDone(const Step& s) {
    const BundleRecord& b = *s.bundle;
    NHLO_ASSIGN_OR_RETURN(uint32_t destination, HeldElement(b, b.operands[0], 0));
    return CopyTree(destination, b.result);
  }

  // Transfers with --host-data=zeros: infeed and recv receive zeros (recv-done takes them out
  // of the recv), send holds its operand as a send would, outfeed and send-done drop the data.
  // The u32 contexts are 0; tokens hold nothing.
  Status RunTransferIn(const Step& s) {
    ZeroTree(s.bundle->result);
    return OkStatus();
  }
  Status RunTransferOut(const Step&) { return OkStatus(); }
  Status RunRecvDone(const Step& s) {
    const BundleRecord& b = *s.bundle;
    const BufferRecord& r = B(b.result);
    const BufferRecord& recv = B(b.operands[0]);
    if (recv.type != PrimitiveType::kTuple || recv.tuple.empty() || r.type != PrimitiveType::kTuple || r.tuple.empty())
      return Status::Error("recv-done takes a recv's (data, context, token) and returns (data, token)");
    return CopyTree(recv.tuple[0], r.tuple[0]);
  }
  Status RunSend(const Step& s) {
    const BundleRecord& b = *s.bundle;
    const BufferRecord& r = B(b.result);
    if (b.operands.empty() || r.type != PrimitiveType::kTuple || r.tuple.empty())
      return Status::Error("send returns (data, context, token)");
    ZeroTree(b.result);
    return CopyTree(b.operands[0], r.tuple[0]);
  }

  const BundleProgram& p_;
  std::vector<std::vector<std::vector<int64_t>>> sizes_;             // runtime sizes (docs: bounded dynamic shapes)
  std::vector<std::vector<uint8_t*>> ptrs_;                          // per computation: where each buffer's bytes are
  std::vector<std::vector<uint32_t>> temps_;                         // per computation: its temp buffers
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> aliases_;  // per computation: (alias, target)
  std::vector<std::vector<std::string>> constants_;                  // per computation: unpacked constants
  const ComputationRecord* cur_ = nullptr;                           // the running computation
  uint8_t** ptr_ = nullptr;                                          // its pointer table
  uint8_t* base_ = nullptr;                                          // its frame
  MappedArena arena_;
  std::vector<Value> args_;              // arguments taken over by Run
  std::deque<std::string> padded_args_;  // bounded parameters' padded copies (stable addresses)
  bool has_result_ = false;              // the last run completed: its root is there to read
};

}  // namespace nhlo::machine_internal
