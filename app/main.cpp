// The simrun executable: the framework's command line, linked with every problem module.
#include "commands/command_line.hpp"

int main(int argc, char** argv) { return simrun::app::run_command_line(argc, argv); }
