// The handlers only set flags (see stop_signals.h).
#include "runtime/process/stop_signals.h"

#include <csignal>

namespace gpubt::runtime {
namespace {

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_print_maps = 0;
void on_stop(int) { g_stop = 1; }
void on_usr1(int) { g_print_maps = 1; }

struct sigaction g_old_int {}, g_old_term{}, g_old_usr1{};

} // namespace

StopSignals::StopSignals(bool usr1, bool restart) : usr1_(usr1) {
  g_stop = 0;
  g_print_maps = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sa.sa_flags = restart ? SA_RESTART : 0;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  if (usr1_) {
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, &g_old_usr1);
  }
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  if (usr1_)
    sigaction(SIGUSR1, &g_old_usr1, nullptr);
  g_stop = 0; // what came was for this run
  g_print_maps = 0;
}

bool stop_signalled() { return g_stop; }
bool print_maps_requested() { return g_print_maps; }

bool take_print_maps_request() {
  if (!g_print_maps)
    return false;
  g_print_maps = 0;
  return true;
}

} // namespace gpubt::runtime
