// The SM80 GEMM emitter: one translation unit of GemmUniversal instantiations behind the C ABI.
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

namespace {

bool has_split_k_parallel(const std::vector<GemmEntry>& entries) {
  for (const GemmEntry& entry : entries) {
    if (entry.kind == GemmEntryKind::kSplitKParallel) return true;
  }
  return false;
}

bool has_family(const std::vector<GemmEntry>& entries, const FamilyEmitter& family) {
  for (const GemmEntry& entry : entries) {
    if (family.takes(entry.description)) return true;
  }
  return false;
}

}  // namespace

std::string entry_name(const GemmEntry& entry) {
  std::string name = entry.description.procedural_name();
  if (entry.kind == GemmEntryKind::kSplitKParallel) name += "_splitk_parallel";
  return name;
}

std::string universal_entry_text(const GemmEntry& entry, int index) {
  const FamilyEmitter* family = family_emitter(entry.description);
  if (family != nullptr && family->sm80_entry != nullptr) return family->sm80_entry(entry, index);
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
  const FamilyEmitter* first = family_emitter(entries.front().description);
  if (first != nullptr && first->sm80_module != nullptr) return first->sm80_module(entries);
  const bool split_k = has_split_k_parallel(entries);
  for (const GemmEntry& entry : entries) {
    if (entry.kind == GemmEntryKind::kSplitKParallel && entry.description.has_epilogue_graph()) {
      throw Error(Status::unsupported(
          "emit: " + entry_name(entry) +
          ": an epilogue graph runs in the GEMM's own epilogue (CUTLASS's 2.x visitor); "
          "GemmSplitKParallel's reduction kernel cannot run it"));
    }
  }
  std::string out = "// ---- tilecraft generated module: " + std::to_string(entries.size()) +
                    " GEMM entr" + (entries.size() == 1 ? "y" : "ies") +
                    " (CUTLASS 2.x GemmUniversal, SM80)\n";
  out += module_open_text();
  bool on_gemm = false;
  for (const GemmEntry& entry : entries) {
    const FamilyEmitter* family = family_emitter(entry.description);
    on_gemm = on_gemm || family == nullptr || family->sm80_on_gemm;
  }
  if (on_gemm) out += jit_include("sm80_gemm.cuh");
  if (split_k) out += jit_include("sm80_split_k_parallel.cuh");
  for (const FamilyEmitter& family : family_emitters()) {
    if (family.sm80_header != nullptr && has_family(entries, family)) {
      out += jit_include(family.sm80_header);
    }
  }
  for (size_t index = 0; index < entries.size(); ++index) {
    const GemmEntry& entry = entries[index];
    const int i = static_cast<int>(index);
    out += "\n// ---- entry " + std::to_string(index) + ": " + entry_name(entry) + "\n";
    out += entry.kind == GemmEntryKind::kUniversal ? universal_entry_text(entry, i)
                                                   : split_k_parallel_entry_text(entry, i);
  }
  std::string kernels;
  for (size_t index = 0; index < entries.size(); ++index) {
    const std::string i = std::to_string(index);
    const FamilyEmitter* family = family_emitter(entries[index].description);
    if (family != nullptr && family->sm80_kernels != nullptr) {
      kernels += family->sm80_kernels(entries[index], static_cast<int>(index));
    } else if (entries[index].kind == GemmEntryKind::kUniversal) {
      kernels += "      &tc_gemm::gemm_kernel<TcGemm" + i + ">(\"tc_kernel_" + i + "\"),\n";
    } else {
      kernels +=
          "      &tc_gemm::gemm_kernel<TcPartial" + i + ">(\"tc_kernel_" + i + "_partial\"),\n";
      kernels += "      &tc_image::kernel<TcReduction" + i + "::ReductionKernel>(\"tc_kernel_" + i +
                 "_reduction\"),\n";
    }
  }
  out += "#if !defined(TILECRAFT_DEVICE_HALF)\n";
  out += module_table_text(entries);
  out += module_verify_text(kernels);
  out += "#endif  // !TILECRAFT_DEVICE_HALF\n";
  out += module_close_text();
  return out;
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
