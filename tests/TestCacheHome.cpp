// The tests' setup cache (runtime::default_cache_dir follows XDG_CACHE_HOME) lives under the build
// tree, never in the user's ~/.cache: set before any test runs, whether or not CTest set it, and
// inherited by the `vdnn` commands the CLI tests start.
#include <cstdlib>

namespace {

const bool kCacheHomeSet = [] {
  return ::setenv("XDG_CACHE_HOME", VDNN_TEST_CACHE_HOME, 1) == 0;
}();

}  // namespace
