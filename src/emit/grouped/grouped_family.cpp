// Grouped GEMMs as a registered family of the shared emitters (emit/family_emitter.hpp): SM80
// GemmGrouped entries, SM90 pointer-array GEMMs read through their own Adapter.
#include <string>

#include "emit/family_emitter.hpp"
#include "emit/grouped/sm80_grouped_parts.hpp"

namespace tilecraft::emit {
namespace {

std::string sm80_grouped_kernels(const GemmEntry&, int index) {
  const std::string i = std::to_string(index);
  return "      &tc_image::kernel<TcGrouped" + i + ">(\"tc_kernel_" + i + "\"),\n";
}

const FamilyEmitterRegistration kGroupedEmitter{{
    .name = "grouped",
    .takes = [](const GemmDescription& d) { return d.is_grouped(); },
    .sm80_entry = sm80_grouped_entry_text,
    .sm80_kernels = sm80_grouped_kernels,
    .sm80_header = "sm80_grouped.cuh",
    .sm90_header = "sm90_grouped.cuh",
}};

}  // namespace
}  // namespace tilecraft::emit
