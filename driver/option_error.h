// getopt_long's complaint about a bad option, said in one line and with the nearest long option
// ("unrecognized option '--timline' (did you mean '--timeline'?)"), for a parse run with
// opterr = 0 and SHORT_OPTS starting with ':'.
#pragma once
#include <getopt.h>

#include <string>
#include <vector>

namespace gpubt::driver {

// C is what getopt_long returned ('?' or ':'), with optind and optopt as it left them.
std::string option_error(int c, char *const *argv, const std::vector<option> &long_opts);

} // namespace gpubt::driver
