// greenrl: train, evaluate and benchmark RL agents, and account for their energy and carbon.
// Exit codes: 0 success; 1 runtime failure (I/O, internal error); 2 bad input (config, CLI
// arguments, checkpoint), reported before any work starts.
#include "cli/cli_main.h"

int main(int argc, char** argv) { return greenrl::cli::Main(argc, argv); }
