// SM90 tile rules shared by TileDescription and GemmDescription.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tilecraft/describe/tile_description.hpp"

namespace tilecraft {

// Auto -> cooperative for M >= 128 or stream-K, ping-pong for M == 64.
KernelSchedule resolve_kernel_schedule(const TileDescription& tile);
EpilogueSchedule matching_epilogue_schedule(KernelSchedule kernel);
Status validate_sm90_tile(const TileDescription& tile);
// Shared memory the TMA epilogue takes beside the mainloop's stages (an estimate that errs high).
int64_t sm90_epilogue_reserve_bytes(const TileDescription& tile, int bytes_c, int bytes_d);

}  // namespace tilecraft
