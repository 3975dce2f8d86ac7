// Finding programs on PATH without ever looking in the working folder.
#pragma once

#include <string>

namespace tilecraft {

// The first `name` that is an executable file in an absolute folder of PATH, or "". Empty and
// relative entries of PATH name the working folder, where a planted program could wait: skipped.
std::string find_program_on_path(const std::string& name);

}  // namespace tilecraft
