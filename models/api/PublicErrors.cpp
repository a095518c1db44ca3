// Maps each internal error type (runtime/, graph/, models/) to its public vdnn::Error type.
#include "models/api/PublicErrors.hpp"

#include <vdnn/Error.hpp>

#include "graph/Graph.hpp"
#include "graph/MemoryCheck.hpp"
#include "graph/Planner.hpp"
#include "models/ConfigError.hpp"
#include "models/train/Divergence.hpp"
#include "models/train/Safetensors.hpp"
#include "runtime/Communicator.hpp"
#include "runtime/Error.hpp"
#include "runtime/Rendezvous.hpp"
#include "runtime/memory/OversubscriptionGuard.hpp"
#include "runtime/memory/PeerMemoryResource.hpp"

namespace vdnn::api {

void rethrow_public() {
  // Most derived first: the three ways a run does not fit are all runtime::OutOfMemory.
  try {
    throw;
  } catch (const vdnn::Error&) {
    throw;
  } catch (const models::CheckpointError& e) {
    throw CheckpointError(e.what());
  } catch (const runtime::DataError& e) {
    throw DataError(e.what());
  } catch (const models::ConfigError& e) {
    throw NetworkError(e.what());
  } catch (const graph::GraphError& e) {
    throw NetworkError(e.what());
  } catch (const runtime::ShapeError& e) {
    throw NetworkError(e.what());
  } catch (const models::Diverged& e) {
    throw Diverged(e.what(), e.iteration());
  } catch (const graph::DoesNotFit& e) {
    throw DoesNotFit(e.what(), e.bytes_requested(), e.bytes_limit());
  } catch (const graph::HostMemoryExceeded& e) {
    throw DoesNotFit(e.what(), e.bytes_requested(), e.bytes_limit());
  } catch (const runtime::OversubscriptionRefused& e) {
    throw DoesNotFit(e.what(), e.bytes_requested(), e.bytes_limit());
  } catch (const runtime::PeerMemoryRefused& e) {
    throw DoesNotFit(e.what(), e.bytes_requested(), e.bytes_limit());
  } catch (const runtime::OutOfMemory& e) {
    throw OutOfMemory(e.what(), e.bytes_requested(), e.bytes_limit());
  } catch (const runtime::CudaError& e) {
    throw DeviceError(e.what());
  } catch (const runtime::CommunicatorError& e) {
    throw DistributedError(e.what(), e.failed_rank());
  } catch (const runtime::RendezvousError& e) {
    throw DistributedError(e.what(), -1);
  } catch (const runtime::InvalidArgument& e) {
    throw InvalidArgument(e.what());
  } catch (const runtime::Error& e) {
    throw Error(e.what());
  }
}

}  // namespace vdnn::api
