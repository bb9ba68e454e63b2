// Every Output call, to both outputs in turn (see tee_output.h).
#include "runtime/output/tee_output.h"

namespace gpubt::runtime {
namespace {

class TeeOutput : public Output {
public:
  TeeOutput(std::unique_ptr<Output> a, std::unique_ptr<Output> b)
      : a_(std::move(a)), b_(std::move(b)) {}
  void printf(const Message &m) override { a_->printf(m), b_->printf(m); }
  void time(const std::string &t) override { a_->time(t), b_->time(t); }
  void value(const Value &v) override { a_->value(v), b_->value(v); }
  void command_output(const std::string &t) override { a_->command_output(t), b_->command_output(t); }
  void file_contents(const std::string &t) override { a_->file_contents(t), b_->file_contents(t); }
  void map(const MapView &m) override { a_->map(m), b_->map(m); }
  void join(const std::string &t) override { a_->join(t), b_->join(t); }
  void helper_error(const std::string &h, int64_t rc, uint32_t line, uint32_t col) override {
    a_->helper_error(h, rc, line, col), b_->helper_error(h, rc, line, col);
  }
  void exit_maps_begin() override { a_->exit_maps_begin(), b_->exit_maps_begin(); }
  void attached_probes(uint64_t n) override { a_->attached_probes(n), b_->attached_probes(n); }
  void lost_events(uint64_t n) override { a_->lost_events(n), b_->lost_events(n); }
  void flush() override { a_->flush(), b_->flush(); }
  OutputStyle style() const override { return a_->style(); } // the first one, the user's
  void origin(const EventOrigin &o) override { a_->origin(o), b_->origin(o); }
  void span_edge(const SpanEdge &e) override { a_->span_edge(e), b_->span_edge(e); }
  void gpu_launch(const GpuLaunch &l) override { a_->gpu_launch(l), b_->gpu_launch(l); }
  Status finish() override {
    auto a = a_->finish(), b = b_->finish();
    return a ? b : a;
  }

private:
  std::unique_ptr<Output> a_, b_;
};

} // namespace

std::unique_ptr<Output> make_tee_output(std::unique_ptr<Output> main,
                                        std::unique_ptr<Output> extra) {
  return std::make_unique<TeeOutput>(std::move(main), std::move(extra));
}

} // namespace gpubt::runtime
