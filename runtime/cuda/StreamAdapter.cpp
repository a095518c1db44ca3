// CUDA streams and events behind the runtime::Stream / runtime::Event interfaces.
#include "runtime/cuda/StreamAdapter.hpp"

#include "runtime/Error.hpp"
#include "runtime/cuda/CudaCheck.hpp"

namespace vdnn::runtime::cuda {
namespace {

template <typename To, typename From>
To& same_backend(From& object, const char* what) {
  auto* cast = dynamic_cast<To*>(&object);
  if (cast == nullptr) {
    throw InvalidArgument(std::string("a CUDA stream cannot use a ") + what +
                          " of another backend");
  }
  return *cast;
}

}  // namespace

void StreamAdapter::issue(PostedCall posted) {
  if (issuer_ != nullptr) {
    issuer_->post(std::move(posted));
  } else {
    posted.call();
  }
}

void StreamAdapter::enqueue(std::function<void()> task) { issue({std::move(task)}); }

void StreamAdapter::copy_async(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  issue({[dst, src, bytes, stream = stream_] {
    VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  }});
}

// A posted wait reads the event as it stands when the wait is made; the caller's own record of it
// settles first, so that is the record the program order gave it.
void StreamAdapter::wait(const Event& event) {
  const auto& waited = same_backend<const EventAdapter>(event, "event");
  if (issuer_ == nullptr) {
    wait_event(stream_, waited.settled());
    return;
  }
  issue({[&waited, stream = stream_] { wait_event(stream, waited.event()); }, {waited.unissued()}});
}

// One post instead of five: posting, not the CUDA calls, is what the enqueuing thread pays here.
// A mark on another stream is recorded by the issue thread too, so the enqueuing thread makes no
// CUDA call at all for the copy. That is safe (Note [Issue thread]): the mark then covers more of
// that stream's work, all of it enqueued before anything the enqueuing thread later makes wait for
// this copy's events (it settles them first, after this call is made).
void StreamAdapter::timed_copy(const TimedCopy& copy) {
  if (!posts()) {
    Stream::timed_copy(copy);
    return;
  }
  std::array<const EventAdapter*, 2> after{};
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (copy.after[i] != nullptr)
      after[i] = &same_backend<const EventAdapter>(*copy.after[i], "event");
  }
  const auto timing = [](Event* event) {
    return event != nullptr ? &same_backend<EventAdapter>(*event, "event") : nullptr;
  };
  EventAdapter* started = timing(copy.started);
  EventAdapter* ended = timing(copy.ended);
  auto& done = same_backend<EventAdapter>(*copy.done, "event");
  // The mark is recorded here, on the issue thread: later than the call, never later than the copy.
  EventAdapter* mark = nullptr;
  cudaStream_t marked = nullptr;
  if (copy.after_stream != nullptr) {
    mark = &same_backend<EventAdapter>(*copy.mark, "event");
    marked = same_backend<StreamAdapter>(*copy.after_stream, "stream").get();
  }
  PostedCall posted{
      [after, mark, marked, started, ended, &done, dst = copy.dst, src = copy.src,
       bytes = copy.bytes, stream = stream_] {
        if (mark != nullptr) {
          mark->event().record(marked);
          wait_event(stream, mark->event());
        }
        for (const EventAdapter* event : after) {
          if (event != nullptr) wait_event(stream, event->event());
        }
        if (started != nullptr) started->event().record(stream);
        if (bytes > 0) {
          VDNN_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
        }
        if (ended != nullptr) ended->event().record(stream);
        done.event().record(stream);
      },
      {done.unissued()}};
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i] != nullptr) posted.unissued[1 + i] = after[i]->unissued();
  }
  if (mark != nullptr) posted.unissued[3] = mark->unissued();
  if (started != nullptr) posted.unissued[4] = started->unissued();
  if (ended != nullptr) posted.unissued[5] = ended->unissued();
  issue(std::move(posted));
}

cudaStream_t StreamAdapter::issue_here() {
  if (issuer_ != nullptr) issuer_->drain();
  return stream_;
}

void StreamAdapter::synchronize() { VDNN_CHECK_CUDA(cudaStreamSynchronize(issue_here())); }

const CudaEvent& EventAdapter::settled() const noexcept {
  settle(unissued_);
  return event_;
}

bool EventAdapter::query() const { return settled().ready(); }

void EventAdapter::synchronize() const { settled().synchronize(); }

double EventAdapter::seconds_since(const Event& earlier) const {
  return 1e-3 * elapsed_ms(same_backend<const EventAdapter>(earlier, "event").settled(), settled());
}

void EventAdapter::record(Stream& stream) {
  auto& on = same_backend<StreamAdapter>(stream, "stream");
  // A posted wait of it must see the record before this one; calls posted after it come after it.
  if (!on.posts()) settle(unissued_);
  on.issue({[this, raw = on.get()] { event_.record(raw); }, {&unissued_}});
}

}  // namespace vdnn::runtime::cuda
