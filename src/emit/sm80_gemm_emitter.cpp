// The SM80 GEMM emitter: one translation unit of GemmUniversal instantiations behind the C ABI.
#include <algorithm>
#include <string>
#include <vector>

#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/family_emitter.hpp"
#include "emit/module_table.hpp"
#include "emit/sm80_gemm_parts.hpp"
#include "emit/sm90_gemm_parts.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

std::string entry_name(const GemmEntry& entry) {
  std::string name = entry.description.procedural_name();
  if (entry.kind == GemmEntryKind::kSplitKParallel) name += "_splitk_parallel";
  return name;
}

std::string universal_entry_text(const GemmEntry& entry, int index) {
  if (const FamilyEmitter* kind = emitter_with(entry.description, &FamilyEmitter::sm80_entry)) {
    return kind->sm80_entry(entry, index);
  }
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const std::string gemm = "TcGemm" + i;
  const std::string kernel = "tc_kernel_" + i;
  const std::string host = abi_functions_text(
      i,
      "tc_gemm::universal_can_implement<" + gemm + ">(args, error, capacity, " +
          std::to_string(epilogue_max_k(d.epilogue)) + ")",
      "tc_gemm::universal_workspace_size<" + gemm + ">(args, \"" + kernel + "\")",
      "tc_gemm::universal_run<" + gemm + ">(args, workspace, stream, error, capacity, \"" + kernel +
          "\")");
  return "using " + gemm + " = " +
         gemm_universal_type(d, {d.C.element, d.C.layout, cutlass_epilogue(d.epilogue)}) + ";\n" +
         halves_text(kernel_definition_text(KernelForm::kKernel2, gemm + "::GemmKernel", kernel),
                     host);
}

namespace {

std::string sm80_entry_text(const GemmEntry& entry, int index) {
  return entry.kind == GemmEntryKind::kUniversal ? universal_entry_text(entry, index)
                                                 : split_k_parallel_entry_text(entry, index);
}

std::string sm80_entry_kernels(const GemmEntry& entry, int index) {
  if (const FamilyEmitter* kind = emitter_with(entry.description, &FamilyEmitter::sm80_kernels)) {
    return kind->sm80_kernels(entry, index);
  }
  const std::string i = std::to_string(index);
  if (entry.kind == GemmEntryKind::kUniversal) {
    return "      &tc_gemm::gemm_kernel<TcGemm" + i + ">(\"tc_kernel_" + i + "\"),\n";
  }
  return "      &tc_gemm::gemm_kernel<TcPartial" + i + ">(\"tc_kernel_" + i + "_partial\"),\n" +
         "      &tc_image::kernel<TcReduction" + i + "::ReductionKernel>(\"tc_kernel_" + i +
         "_reduction\"),\n";
}

}  // namespace

std::string emit_gemm_module(const std::vector<GemmEntry>& entries) {
  if (entries.empty()) throw Error(Status::invalid("emit: a module needs at least one entry"));
  const int arch = entries.front().description.arch;
  for (const GemmEntry& entry : entries) {
    if (entry.description.arch != arch) {
      throw Error(Status::invalid("emit: one module holds kernels of one arch; got " +
                                  std::to_string(arch) + " and " +
                                  std::to_string(entry.description.arch)));
    }
  }
  const bool conv = entries.front().description.is_conv();
  for (const GemmEntry& entry : entries) {
    if (entry.description.is_conv() != conv) {
      throw Error(Status::invalid("emit: one module holds convolutions or GEMMs, not both; got " +
                                  entry_name(entries.front()) + " and " + entry_name(entry)));
    }
  }
  if (arch == 90) return emit_sm90_gemm_module(entries);  // GEMMs and convolutions alike
  if (const FamilyEmitter* kind =
          emitter_with(entries.front().description, &FamilyEmitter::sm80_module)) {
    return kind->sm80_module(entries);
  }
  const auto split_k = [](const GemmEntry& e) { return e.kind == GemmEntryKind::kSplitKParallel; };
  for (const GemmEntry& entry : entries) {
    if (split_k(entry) && entry.description.has_epilogue_graph()) {
      throw Error(Status::unsupported(
          "emit: " + entry_name(entry) +
          ": an epilogue graph runs in the GEMM's own epilogue (CUTLASS's 2.x visitor); "
          "GemmSplitKParallel's reduction kernel cannot run it"));
    }
  }
  std::vector<std::string> headers;
  if (std::ranges::any_of(entries, [](const GemmEntry& entry) {
        const FamilyEmitter* kind = emitter_with(entry.description, &FamilyEmitter::sm80_entry);
        return kind == nullptr || kind->sm80_on_gemm;
      })) {
    headers.push_back("sm80_gemm.cuh");
  }
  if (std::ranges::any_of(entries, split_k)) headers.push_back("sm80_split_k_parallel.cuh");
  for (const FamilyEmitter& family : family_emitters()) {
    if (family.sm80_header != nullptr && std::ranges::any_of(entries, [&](const GemmEntry& e) {
          return family.takes(e.description);
        })) {
      headers.push_back(family.sm80_header);
    }
  }
  return module_text(entries, "GEMM", "CUTLASS 2.x GemmUniversal, SM80", "", headers,
                     sm80_entry_text, sm80_entry_kernels);
}

std::vector<std::string> gemm_module_arch_flags(int arch) {
  if (arch >= 90) {
    const std::string a = std::to_string(arch);
    return {"-gencode=arch=compute_" + a + "a,code=sm_" + a + "a"};
  }
  // One front-end pass for compute_<arch>; ptxas then builds SASS for the arch itself and for
  // sm_90 (Hopper runs SM80-style kernels natively), plus PTX for anything newer.
  const std::string a = std::to_string(arch);
  return {"-gencode=arch=compute_" + a + ",code=sm_" + a,
          "-gencode=arch=compute_" + a + ",code=sm_90",
          "-gencode=arch=compute_" + a + ",code=compute_" + a};
}

}  // namespace tilecraft::emit
