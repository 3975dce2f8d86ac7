#include "emit/family_emitter.hpp"

#include <algorithm>
#include <cstring>

namespace tilecraft::emit {

namespace {

std::vector<FamilyEmitter>& registry() {
  static std::vector<FamilyEmitter> families;
  return families;
}

}  // namespace

FamilyEmitterRegistration::FamilyEmitterRegistration(const FamilyEmitter& family) {
  std::vector<FamilyEmitter>& families = registry();
  families.push_back(family);
  std::sort(families.begin(), families.end(), [](const FamilyEmitter& a, const FamilyEmitter& b) {
    return std::strcmp(a.name, b.name) < 0;
  });
}

const std::vector<FamilyEmitter>& family_emitters() { return registry(); }

}  // namespace tilecraft::emit
