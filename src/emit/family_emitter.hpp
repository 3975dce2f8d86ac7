// The text a kind of kernel writes where it differs from a plain GEMM's: a family (convolutions,
// grouped GEMMs) or an epilogue option (epilogue graphs). Each registers its hooks once, from its
// own folder (a FamilyEmitterRegistration at namespace scope); the shared SM80 and SM90 emitters
// ask emitter_with(description, hook) and never name one. A description may be of a family and
// take an epilogue option at once: each hook comes from the first kind (by name) that takes the
// description and has it; where none has it, the text is a GEMM's.
#pragma once

#include <string>
#include <vector>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

struct FamilyEmitter {
  const char* name;  // orders the registry (and so a module's includes)
  bool (*takes)(const GemmDescription& description);

  // Which kernels of the family may share a translation unit (module_class): those of the same
  // text, "" for all of them.
  std::string (*unit_class)(const GemmDescription& description) = nullptr;

  // SM80, a family with a CUTLASS 2.x operator of its own: the whole module.
  std::string (*sm80_module)(const std::vector<GemmEntry>& entries) = nullptr;
  // SM80, in a GEMM module: one entry's text (type aliases and the three static ABI functions),
  // its kernels for the module's verify list, the jit header it needs, and whether that header
  // builds on sm80_gemm.cuh's GEMM adapters (which the module then includes too).
  std::string (*sm80_entry)(const GemmEntry& entry, int index) = nullptr;
  std::string (*sm80_kernels)(const GemmEntry& entry, int index) = nullptr;
  const char* sm80_header = nullptr;
  bool sm80_on_gemm = false;

  // SM90: the jit header of the family's Adapter (in place of sm90_gemm.cuh), one more header,
  // and the parts of a CUTLASS 3.x entry that differ from a GEMM's.
  const char* sm90_header = nullptr;
  const char* sm90_extra_header = nullptr;
  std::string (*sm90_layout_c)(const GemmDescription& description) = nullptr;
  std::string (*sm90_tile_shape)(const GemmDescription& description) = nullptr;
  // CollectiveMainloop, the kernel and Gemm, given the stage count type.
  std::string (*sm90_kernel)(const GemmDescription& description,
                             const std::string& stages) = nullptr;
  // The epilogue's FusionOp (and what it needs), given the epilogue schedule, and fill_fusion.
  std::string (*sm90_fusion)(const GemmDescription& description,
                             const std::string& schedule) = nullptr;
  std::string (*sm90_fill)(const GemmDescription& description) = nullptr;
  // A fusion that reads its own inputs (the kernel's source C is void otherwise): the index,
  // among the epilogue's operand tensors, of the one the epilogue reads as its source C (of D's
  // element type), or -1.
  int (*sm90_source_c)(const GemmDescription& description) = nullptr;
};

struct FamilyEmitterRegistration {
  explicit FamilyEmitterRegistration(const FamilyEmitter& family);
};

// Every registered kind, by name.
const std::vector<FamilyEmitter>& family_emitters();

// The first registered kind that takes the description and has `hook` (a member such as
// &FamilyEmitter::sm90_fusion), or null.
template <class Hook>
const FamilyEmitter* emitter_with(const GemmDescription& description, Hook FamilyEmitter::*hook) {
  for (const FamilyEmitter& kind : family_emitters()) {
    if (kind.*hook && kind.takes(description)) return &kind;
  }
  return nullptr;
}

}  // namespace tilecraft::emit
