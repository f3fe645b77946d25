// dnnc: the command-line front end. Exit codes: 0 ok, 1 runtime failure, 2 bad input/usage
// (also when a node refuses a request as bad input: protocol::refusal_flag).
#include "commands.hpp"

#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/core/error.hpp"

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"dnnc: distributed neural-graph simulator and partitioner"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "dnnc 0.1.0");
    dnnc::cli::action chosen;
    dnnc::cli::add_validate(app, chosen);
    dnnc::cli::add_partition(app, chosen);
    dnnc::cli::add_gen(app, chosen);
    dnnc::cli::add_submit(app, chosen);
    dnnc::cli::add_status(app, chosen);
    dnnc::cli::add_cluster(app, chosen);
    dnnc::cli::add_control(app, chosen);
    dnnc::cli::add_io(app, chosen);
    dnnc::cli::add_run(app, chosen);
    dnnc::cli::add_export(app, chosen);
    dnnc::cli::add_snapshot(app, chosen);
    dnnc::cli::add_weights(app, chosen);
    dnnc::cli::add_update(app, chosen);
    dnnc::cli::add_grow(app, chosen);
    dnnc::cli::add_rebalance(app, chosen);
    dnnc::cli::add_report(app, chosen);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    try {
        return chosen();
    } catch (const dnnc::config_error& e) {
        std::cerr << e.what() << '\n';
        return 2;
    } catch (const dnnc::usage_error& e) {
        std::cerr << "dnnc: " << e.what() << '\n';
        return 2;
    } catch (const dnnc::node_server::remote_refusal& e) {
        std::cerr << "dnnc: the node refused: " << e.what() << '\n';
        return 2;
    } catch (const dnnc::node_server::remote_error& e) {
        std::cerr << "dnnc: the node refused: " << e.what() << '\n';
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "dnnc: " << e.what() << '\n';
        return 1;
    }
}
