#pragma once
// Each subcommand of `dnnc` lives in its own cmd_*.cpp: it adds itself to the app, and when
// it is the one chosen, main calls the action it stored, which returns the exit code.
#include <CLI/CLI.hpp>

#include <functional>

namespace dnnc::cli {

using action = std::function<int()>;

void add_validate(CLI::App& app, action& chosen);
void add_partition(CLI::App& app, action& chosen);
void add_gen(CLI::App& app, action& chosen);
void add_submit(CLI::App& app, action& chosen);
void add_status(CLI::App& app, action& chosen);
void add_cluster(CLI::App& app, action& chosen);
void add_control(CLI::App& app, action& chosen);
void add_io(CLI::App& app, action& chosen);
void add_run(CLI::App& app, action& chosen);
void add_export(CLI::App& app, action& chosen);
void add_snapshot(CLI::App& app, action& chosen);
void add_weights(CLI::App& app, action& chosen);
void add_update(CLI::App& app, action& chosen);
void add_grow(CLI::App& app, action& chosen);
void add_rebalance(CLI::App& app, action& chosen);  // rebalance, join and drain
void add_report(CLI::App& app, action& chosen);  // report and plot

}  // namespace dnnc::cli
