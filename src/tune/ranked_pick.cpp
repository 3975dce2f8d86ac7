#include "tune/ranked_pick.hpp"

namespace tilecraft::tune {

std::mutex& ranked_picks_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, RememberedPick>& ranked_picks() {
  static std::map<std::string, RememberedPick> picks;
  return picks;
}

}  // namespace tilecraft::tune
