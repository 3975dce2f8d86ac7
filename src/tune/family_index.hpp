// Which kernels have been compiled for a problem family (a signature without its shape) on a
// device model: <cache dir>/tuning/v1/<device model>/family-<key>.txt, one kernel name a line.
// A hint, not a promise: the artifact cache is asked before a listed kernel is relied on.
// Also what the index and the tuning cache (tuning_store.cpp) share of their folder and files.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::tune {

std::set<std::string> compiled_in_family(const ProblemSignature& signature);
// Adds names (atomic rewrite; a concurrent writer may drop a name, which costs a compile later).
void note_compiled(const ProblemSignature& signature, const std::vector<std::string>& names);

// <cache dir>/tuning/v1, which holds a folder per device model.
std::string tuning_root();
// A device model's folder name: letters, digits and '-' kept, the rest '_'.
std::string model_folder(const std::string& device_model);
// The body of `text` when it is a record this user's tilecraft signed (compile/signed_record.hpp).
std::optional<std::string> verified(const std::string& text);
// Writes `body` signed, atomically (temporary file, then rename), to the device model's folder.
Status write_signed(const std::string& device_model, const std::string& file_name,
                    const std::string& body);

}  // namespace tilecraft::tune
