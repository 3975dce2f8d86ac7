#include "tilecraft/core/program_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace tilecraft {

std::string find_program_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path || name.empty() || name.find('/') != std::string::npos) return "";
  std::string all = path;
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(':', start);
    if (end == std::string::npos) end = all.size();
    std::string folder = all.substr(start, end - start);
    std::string candidate = folder + "/" + name;
    struct stat info;
    if (!folder.empty() && folder.front() == '/' && stat(candidate.c_str(), &info) == 0 &&
        S_ISREG(info.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

}  // namespace tilecraft
