// Which kernels have been compiled for a problem family (a signature without its shape) on a
// device model: <cache dir>/tuning/v1/<device model>/family-<key>.txt, one kernel name a line.
// A hint, not a promise: the artifact cache is asked before a listed kernel is relied on.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::tune {

std::set<std::string> compiled_in_family(const ProblemSignature& signature);
// Adds names (atomic rewrite; a concurrent writer may drop a name, which costs a compile later).
void note_compiled(const ProblemSignature& signature, const std::vector<std::string>& names);

}  // namespace tilecraft::tune
