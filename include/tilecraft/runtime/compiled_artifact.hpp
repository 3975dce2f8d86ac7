// CompiledArtifact: an operation's compiled universal kernel as one self-contained file, which
// another process can load and run without a compiler.
//
// File format, version 1: text lines "key value", each ended by '\n', then an empty line, then
// the module's shared-object bytes:
//   tilecraft-artifact
//   format 1
//   abi <TILECRAFT_ABI_VERSION>
//   kernel <the entry's name: the operation's procedural name>
//   metadata <the entry's metadata string>
//   arch <the target arch, e.g. 80>
//   payload-bytes <N>
//   payload-sha256 <64 lower-case hex digits>
//
//   <N bytes of module.so>
#pragma once

#include <memory>
#include <string>

#include "tilecraft/abi/module_abi.h"
#include "tilecraft/core/status.hpp"

namespace tilecraft {

class GemmOperation;
class LoadedModule;

class CompiledArtifact {
 public:
  // The compiled universal kernel of an operation (compiles it if needed).
  static Result<CompiledArtifact> of(const GemmOperation& operation);

  // Writes the artifact file atomically (a temporary file beside it, then a rename).
  Status save(const std::string& path) const;

  // Reads and checks an artifact file (magic, versions, sha256), writes its payload once to a
  // content-addressed file under <cache dir>/artifacts (a private temporary folder when the cache
  // is not writable), loads it and finds the entry. Needs no compiler.
  static Result<CompiledArtifact> load(const std::string& path);

  const std::string& kernel_name() const { return kernel_name_; }
  int arch() const { return arch_; }
  const tc_kernel_entry* entry() const { return entry_; }
  const std::shared_ptr<const LoadedModule>& module() const { return module_; }

 private:
  CompiledArtifact(int arch, const tc_kernel_entry* entry,
                   std::shared_ptr<const LoadedModule> module);

  std::string kernel_name_;
  int arch_ = 0;
  const tc_kernel_entry* entry_ = nullptr;
  std::shared_ptr<const LoadedModule> module_;
};

}  // namespace tilecraft
