// dnnc report PATH... -o run.html, dnnc plot raster|rates SPIKES.csv -o FILE.svg
#include "commands.hpp"
#include "report.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace dnnc::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !(out << text)) throw io_error("cannot write " + path);
}

struct plot_options {
    std::string kind, spikes, output;
    int per_population = 100;
    double bin_ms = 10;
};

struct report_options {
    std::vector<std::string> inputs;
    std::string output;
};

// Each input by what it holds: a spikes CSV, a status (dnnc status --json: "nodes" with
// addresses) or a run summary (dnnc run --json); a folder, the files in it.
int run_report(const report_options& o) {
    std::vector<std::string> files;
    for (const auto& in : o.inputs) {
        if (fs::is_directory(in)) {
            for (const auto& e : fs::directory_iterator(in))
                if (e.is_regular_file() && (e.path().extension() == ".csv" || e.path().extension() == ".json"))
                    files.push_back(e.path().string());
        } else {
            files.push_back(in);
        }
    }
    spike_table spikes;
    std::optional<protocol::node_status> status;
    json summary;
    for (const auto& f : files) {
        const std::string text = read_file(f);
        if (text.rfind("t_ms,population,index", 0) == 0) {
            spikes = parse_spike_csv(text, f);
            continue;
        }
        if (fs::path(f).extension() != ".json") continue;  // other CSVs (outputs) are not shown
        json j;
        try {
            j = json::parse(text);
        } catch (const json::exception& e) {
            throw usage_error(f + ": not JSON: " + e.what());
        }
        if (j.contains("role")) {
            try {
                status = protocol::decode_node_status(j);
            } catch (const protocol_error& e) {
                throw usage_error(f + ": not a status as dnnc status --json prints it: " + e.what());
            }
        } else if (j.contains("ticks")) {
            summary = j;
        }
    }
    if (spikes.populations.empty() && !status && summary.is_null())
        throw usage_error("nothing to report: give a spikes CSV (dnnc run --spikes), a status (dnnc status --json) or a "
                          "summary (dnnc run --json)");
    // The status knows each population's size; the CSV only the largest index that spiked.
    if (status && status->cluster)
        for (auto& p : spikes.populations)
            for (const auto& q : status->cluster->populations)
                if (q.id == p.id) p.size = static_cast<std::int64_t>(q.size);
    write_file(o.output, report_html(spikes, status ? &*status : nullptr, summary));
    std::cout << "report: " << o.output << '\n';
    return 0;
}

int run_plot(const plot_options& o) {
    const auto spikes = read_spike_csv(o.spikes);
    write_file(o.output, o.kind == "raster" ? raster_svg(spikes, o.per_population) : rates_svg(spikes, o.bin_ms));
    return 0;
}

}  // namespace

void add_report(CLI::App& app, action& chosen) {
    auto r = std::make_shared<report_options>();
    auto* report = app.add_subcommand("report", "Write one self-contained HTML report of a finished run");
    report->add_option("inputs", r->inputs, "Spikes CSV, status JSON (dnnc status --json), summary JSON (dnnc run --json), or folders of them")
        ->required();
    report->add_option("-o,--output", r->output, "The HTML file")->required();
    report->callback([r, &chosen] { chosen = [r] { return run_report(*r); }; });

    auto p = std::make_shared<plot_options>();
    auto* plot = app.add_subcommand("plot", "Plot recorded spikes as SVG: a raster or population rates");
    plot->add_option("kind", p->kind, "raster or rates")->required()->check(CLI::IsMember({"raster", "rates"}));
    plot->add_option("spikes", p->spikes, "Spikes CSV (t_ms,population,index), as dnnc run --spikes writes")->required();
    plot->add_option("-o,--output", p->output, "The SVG file")->required();
    plot->add_option("--per-population", p->per_population, "Raster: at most this many neurons of each population (default 100)")
        ->check(CLI::PositiveNumber);
    plot->add_option("--bin", p->bin_ms, "Rates: bin width in ms (default 10)")->check(CLI::PositiveNumber);
    plot->callback([p, &chosen] { chosen = [p] { return run_plot(*p); }; });
}

}  // namespace dnnc::cli
