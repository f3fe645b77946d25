// dnnc input --lead HOST:PORT FILE.csv and dnnc output --lead HOST:PORT [--follow]
// [--from T] [--raster | --spikes] [-o FILE]: inputs, outputs and recorded spikes live at
// the lead only.
#include "client.hpp"
#include "commands.hpp"
#include "spike_reader.hpp"

#include "dnnc/protocol/csv.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

namespace dnnc::cli {
namespace {

using json = nlohmann::json;

struct input_options {
    std::string lead, file;
    client_options client;
};

struct output_options {
    std::string lead, out;
    std::int64_t from = 0;
    bool follow = false, raster = false, spikes = false;
    client_options client;
};

int run_input(const input_options& o) {
    protocol::control_request input(protocol::control_request::kind::input);
    input.rows = protocol::read_input_csv(o.file);
    const auto reply = control(o.client, o.lead, input);
    std::cout << input.rows.size() << " rows sent: " << reply["values"] << " neuron inputs\n";
    return 0;
}

// The recorded spikes, drained from the lead: up to the last complete tick, or for as long
// as the run goes with `follow`.
void print_spikes(const output_options& o, std::ostream& out) {
    spike_reader reader(o.client, o.lead, o.from, &out);
    while (true) {
        const auto through = reader.read();
        if (reader.state() == "failed" || (!o.follow && through >= reader.completed())) break;
        if (through >= reader.completed()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    reader.acknowledge();
    if (reader.lost() > 0) throw error("the lead dropped " + std::to_string(reader.lost()) + " spikes that were not read in time");
}

int run_output(const output_options& o) {
    std::ofstream file;
    if (!o.out.empty()) {
        file.open(o.out);
        if (!file) throw io_error("cannot write " + o.out);
    }
    std::ostream& out = o.out.empty() ? std::cout : file;
    if (o.spikes) {
        print_spikes(o, out);
        return 0;
    }
    output_reader reader(o.client, o.lead, o.from, out, o.raster);
    while (true) {
        const auto state = reader.read();
        if (state == "failed" || !o.follow) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (reader.missed() > 0)
        throw error("missed " + std::to_string(reader.missed()) + " output rows that the lead no longer held");
    return 0;
}

}  // namespace

void add_io(CLI::App& app, action& chosen) {
    auto in = std::make_shared<input_options>();
    auto* input = app.add_subcommand("input", "Send external inputs (CSV: tick,target,value) to the lead");
    input->add_option("file", in->file, "Input CSV")->required();
    input->add_option("--lead", in->lead, "HOST:PORT of the lead")->required();
    in->client.add_to(input);
    input->callback([in, &chosen] { chosen = [in] { return run_input(*in); }; });

    auto out = std::make_shared<output_options>();
    auto* output = app.add_subcommand("output", "Download the outputs recorded at the lead as CSV");
    output->add_option("--lead", out->lead, "HOST:PORT of the lead")->required();
    output->add_option("--from", out->from, "First tick to print");
    output->add_flag("--follow", out->follow, "Keep printing rows as ticks complete (until interrupted)");
    auto* raster = output->add_flag("--raster", out->raster, "Print a spike raster: tick,neuron for every non-zero output");
    output->add_flag("--spikes", out->spikes, "Print the recorded spikes (<record>) as t_ms,population,index; the lead forgets them")
        ->excludes(raster);
    output->add_option("-o,--output", out->out, "Write to this file instead of standard output");
    out->client.add_to(output);
    output->callback([out, &chosen] { chosen = [out] { return run_output(*out); }; });
}

}  // namespace dnnc::cli
