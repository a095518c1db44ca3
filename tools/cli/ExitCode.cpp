// Maps vdnn's typed errors to exit codes and messages.
#include "tools/cli/ExitCode.hpp"

#include <iostream>

#include "graph/Graph.hpp"
#include "models/ConfigLoader.hpp"
#include "models/train/Divergence.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/Error.hpp"
#include "runtime/Rendezvous.hpp"
#include "tools/cli/StopSignal.hpp"

namespace vdnn::tools {

int report_error(const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const models::ConfigError& e) {
    std::cerr << "vdnn: config error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const graph::GraphError& e) {
    std::cerr << "vdnn: config error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const runtime::InvalidArgument& e) {
    std::cerr << "vdnn: usage error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const runtime::OutOfMemory& e) {
    std::cerr << "vdnn: does not fit: " << e.what() << "\n";
    return kExitDoesNotFit;
  } catch (const models::Diverged& e) {
    std::cerr << "vdnn: diverged: " << e.what() << "\n";
    return kExitDiverged;
  } catch (const runtime::CommunicatorError& e) {
    std::cerr << "vdnn: distributed error: " << e.what() << "\n";
    return kExitRankFailed;
  } catch (const runtime::RendezvousError& e) {
    std::cerr << "vdnn: distributed error: " << e.what() << "\n";
    return kExitRankFailed;
  } catch (const Interrupted& e) {
    std::cerr << "vdnn: interrupted: " << e.what() << "\n";
    return kExitInterrupted;
  } catch (const std::exception& e) {
    std::cerr << "vdnn: error: " << e.what() << "\n";
    return kExitRuntimeError;
  } catch (...) {
    std::cerr << "vdnn: unknown error\n";
    return kExitRuntimeError;
  }
}

}  // namespace vdnn::tools
