#include "compile/memo_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "tilecraft/compile/file_util.hpp"

namespace tilecraft::compile {

std::string read_memo(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  std::string text;
  if (!fd.valid() || !read_all(fd.get(), path, &text)) return "";
  return text;
}

void write_memo(const std::string& path, const std::string& text) {
  std::string temp = path + ".tmp-XXXXXX";
  UniqueFd fd(mkostemp(temp.data(), O_CLOEXEC));
  if (!fd.valid()) return;
  bool written = write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  fd.reset();
  if (!written || rename(temp.c_str(), path.c_str()) != 0) unlink(temp.c_str());
}

}  // namespace tilecraft::compile
