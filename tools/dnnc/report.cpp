#include "report.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dnnc::cli {

using json = nlohmann::json;

namespace {

const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                              "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string esc(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string num(double x, int digits = 2) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, x);
    return text;
}

}  // namespace

spike_table parse_spike_csv(const std::string& text, const std::string& path) {
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    if (line.rfind("t_ms,population,index", 0) != 0)
        throw usage_error(path + ":1: not a spikes CSV (header t_ms,population,index, as dnnc run --spikes writes)");
    spike_table t;
    std::map<std::string, std::size_t> where;
    for (long number = 2; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        const auto a = line.find(','), b = line.find(',', a == std::string::npos ? a : a + 1);
        try {
            if (a == std::string::npos || b == std::string::npos) throw std::invalid_argument("columns");
            const double ms = std::stod(line.substr(0, a));
            const std::string id = line.substr(a + 1, b - a - 1);
            const auto index = std::stoll(line.substr(b + 1));
            auto [it, fresh] = where.emplace(id, t.populations.size());
            if (fresh) t.populations.push_back({id, 0, {}, {}});
            auto& p = t.populations[it->second];
            p.t_ms.push_back(ms);
            p.index.push_back(index);
            p.size = std::max<std::int64_t>(p.size, index + 1);
            t.last_ms = std::max(t.last_ms, ms);
        } catch (const std::exception&) {
            throw usage_error(path + ":" + std::to_string(number) + ": not a spike row (t_ms,population,index): '" + line + "'");
        }
    }
    return t;
}

spike_table read_spike_csv(const std::string& path) { return parse_spike_csv(read_file(path), path); }

std::string raster_svg(const spike_table& spikes, int per_population) {
    const double W = 1000, H = 420, left = 70, bottom = 30, top = 10;
    std::int64_t rows = 0;
    std::vector<std::int64_t> stride, first_row;
    for (const auto& p : spikes.populations) {
        stride.push_back(std::max<std::int64_t>(1, (p.size + per_population - 1) / per_population));
        first_row.push_back(rows);
        rows += (p.size + stride.back() - 1) / stride.back();
    }
    rows = std::max<std::int64_t>(rows, 1);
    const double span = std::max(spikes.last_ms, 1.0), plot_h = H - bottom - top;
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H << "\" width=\"" << W << "\" height=\"" << H
        << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    for (std::size_t k = 0; k < spikes.populations.size(); ++k) {
        const auto& p = spikes.populations[k];
        const double y0 = top + plot_h * static_cast<double>(first_row[k]) / static_cast<double>(rows);
        svg << "<line x1=\"" << left << "\" x2=\"" << W - 10 << "\" y1=\"" << y0 << "\" y2=\"" << y0 << "\" stroke=\"#ccc\"/>"
            << "<text x=\"4\" y=\"" << y0 + 12 << "\">" << esc(p.id) << "</text>\n<path fill=\"" << colors[k % 10] << "\" d=\"";
        const double row_h = std::max(1.0, plot_h / static_cast<double>(rows) * 0.8);
        for (std::size_t s = 0; s < p.t_ms.size(); ++s) {
            if (p.index[s] % stride[k]) continue;
            const double x = left + (W - left - 10) * p.t_ms[s] / span;
            const double y = top + plot_h * static_cast<double>(first_row[k] + p.index[s] / stride[k]) / static_cast<double>(rows);
            svg << 'M' << num(x, 1) << ' ' << num(y, 1) << "h1.5v" << num(row_h, 1) << "h-1.5z";
        }
        svg << "\"/>\n";
    }
    svg << "<line x1=\"" << left << "\" x2=\"" << W - 10 << "\" y1=\"" << H - bottom << "\" y2=\"" << H - bottom
        << "\" stroke=\"#333\"/><text x=\"" << left << "\" y=\"" << H - 10 << "\">0</text><text x=\"" << W - 10 << "\" y=\""
        << H - 10 << "\" text-anchor=\"end\">" << num(span, 1) << " ms</text>\n</svg>\n";
    return svg.str();
}

std::string rates_svg(const spike_table& spikes, double bin_ms) {
    const double W = 1000, H = 260, left = 70, bottom = 30, top = 10;
    const auto bins = static_cast<std::size_t>(std::max(1.0, std::ceil(std::max(spikes.last_ms, bin_ms) / bin_ms)));
    std::vector<std::vector<double>> rate;
    double highest = 1;
    for (const auto& p : spikes.populations) {
        std::vector<double> r(bins, 0.0);
        for (double t : p.t_ms) r[std::min(bins - 1, static_cast<std::size_t>(t / bin_ms))] += 1;
        for (auto& v : r) v = v / static_cast<double>(std::max<std::int64_t>(p.size, 1)) / (bin_ms / 1000);
        highest = std::max(highest, *std::max_element(r.begin(), r.end()));
        rate.push_back(std::move(r));
    }
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H << "\" width=\"" << W << "\" height=\"" << H
        << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        << "<text x=\"4\" y=\"" << top + 10 << "\">" << num(highest, 1) << " Hz</text><text x=\"4\" y=\"" << H - bottom
        << "\">0</text>\n";
    for (std::size_t k = 0; k < rate.size(); ++k) {
        svg << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << colors[k % 10] << "\" points=\"";
        for (std::size_t b = 0; b < bins; ++b)
            svg << num(left + (W - left - 10) * (static_cast<double>(b) + 0.5) / static_cast<double>(bins), 1) << ','
                << num(H - bottom - (H - bottom - top) * rate[k][b] / highest, 1) << ' ';
        svg << "\"/><text x=\"" << W - 12 << "\" y=\"" << top + 12 + 14 * static_cast<double>(k) << "\" text-anchor=\"end\" fill=\""
            << colors[k % 10] << "\">" << esc(spikes.populations[k].id) << "</text>\n";
    }
    svg << "<line x1=\"" << left << "\" x2=\"" << W - 10 << "\" y1=\"" << H - bottom << "\" y2=\"" << H - bottom
        << "\" stroke=\"#333\"/><text x=\"" << W - 10 << "\" y=\"" << H - 10 << "\" text-anchor=\"end\">"
        << num(static_cast<double>(bins) * bin_ms, 1) << " ms (bins of " << num(bin_ms, 1) << " ms)</text>\n</svg>\n";
    return svg.str();
}

namespace {

// The cluster as the live page draws it: nodes on an ellipse, sized by capacity, coloured by load,
// each caption on the side away from the centre.
std::string cluster_svg(const protocol::lead_status& cluster) {
    const auto& nodes = cluster.nodes;
    const double W = 420, H = 280, RX = W / 2 - 70, RY = H / 2 - 40;
    double max_cap = 1, max_neurons = 1;
    for (const auto& n : nodes) {
        max_cap = std::max(max_cap, n.capacity);
        max_neurons = std::max(max_neurons, static_cast<double>(n.neurons));
    }
    std::map<std::string, std::pair<double, double>> pos;
    const double count = static_cast<double>(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const double a = 2 * M_PI * static_cast<double>(i) / count - M_PI / 2;
        pos[nodes[i].id] = nodes.size() == 1 ? std::make_pair(W / 2, H / 2) : std::make_pair(W / 2 + RX * std::cos(a), H / 2 + RY * std::sin(a));
    }
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H << "\" width=\"" << W << "\" height=\"" << H
        << "\" font-family=\"sans-serif\">\n";
    for (const auto& l : cluster.links) {
        const auto a = pos[l.from], b = pos[l.to];
        svg << "<line x1=\"" << a.first << "\" y1=\"" << a.second << "\" x2=\"" << b.first << "\" y2=\"" << b.second
            << "\" stroke=\"#889\" stroke-width=\"2\"/><text x=\"" << (a.first + b.first) / 2 << "\" y=\"" << (a.second + b.second) / 2 - 4
            << "\" font-size=\"10\" text-anchor=\"middle\">" << num(l.latency_ms, 3) << " ms</text>\n";
    }
    for (const auto& n : nodes) {
        const auto p = pos[n.id];
        const double r = 12 + 16 * std::sqrt(n.capacity / max_cap), load = static_cast<double>(n.neurons) / max_neurons;
        svg << "<circle cx=\"" << p.first << "\" cy=\"" << p.second << "\" r=\"" << r << "\" fill=\""
            << (n.alive ? "hsl(" + num(210 - 180 * load, 0) + ",60%,75%)" : std::string("#fcc")) << "\" stroke=\""
            << (n.alive ? "#335" : "#b00020") << "\"/><text x=\"" << p.first << "\" y=\"" << p.second + 4
            << "\" font-size=\"12\" font-weight=\"600\" text-anchor=\"middle\">" << esc(n.id) << "</text><text x=\""
            << p.first << "\" y=\"" << (p.second < H / 2 - 1 ? p.second - r - 4 : p.second + r + 12) << "\" font-size=\"10\" text-anchor=\"middle\">cap "
            << n.capacity << " · " << n.neurons << " n</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

// A plastic projection's weights as the nodes binned them (the lead's weight_histograms):
// a bar per bin over [lo, hi], the range's ends below.
std::string weights_svg(const json& projection) {
    const auto bins = projection["bins"].get<std::vector<std::uint64_t>>();
    const double W = 420, H = 150, base = H - 20, high = base - 8, width = W / static_cast<double>(std::max<std::size_t>(bins.size(), 1));
    const double top = static_cast<double>(std::max<std::uint64_t>(1, bins.empty() ? 1 : *std::max_element(bins.begin(), bins.end())));
    const double lo = projection["lo"].get<double>(), hi = projection["hi"].get<double>();
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H << "\" width=\"" << W << "\" height=\"" << H
        << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    for (std::size_t k = 0; k < bins.size(); ++k) {
        const double h = high * static_cast<double>(bins[k]) / top;
        svg << "<rect x=\"" << num(static_cast<double>(k) * width + 1, 1) << "\" y=\"" << num(base - h, 1) << "\" width=\""
            << num(width - 2, 1) << "\" height=\"" << num(h, 1) << "\" fill=\"" << colors[0] << "\"/>";
    }
    svg << "\n<line x1=\"0\" x2=\"" << W << "\" y1=\"" << base << "\" y2=\"" << base << "\" stroke=\"#333\"/><text x=\"0\" y=\"" << H - 4
        << "\">" << num(lo, 3) << "</text><text x=\"" << W << "\" y=\"" << H - 4 << "\" text-anchor=\"end\">" << num(hi, 3)
        << "</text>\n</svg>\n";
    return svg.str();
}

}  // namespace

std::string report_html(const spike_table& spikes, const protocol::node_status* status, const json& summary) {
    std::ostringstream h;
    const std::string name = summary.is_object() && summary.contains("network") ? summary["network"].get<std::string>()
                              : status && status->network ? *status->network
                                                          : "run";
    h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dnnc report: " << esc(name) << "</title>\n"
      << "<style>body{font:14px system-ui,sans-serif;margin:16px;color:#222}table{border-collapse:collapse}"
         "td,th{border-bottom:1px solid #eee;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}"
         "section{margin-bottom:18px}h2{font-size:16px;color:#445}svg{max-width:100%;height:auto}</style></head><body>\n"
      << "<h1>dnnc report: " << esc(name) << "</h1>\n";
    if (summary.is_object()) {
        h << "<section><h2>Run</h2><table>";
        for (const char* key : {"ticks", "seconds", "ticks_per_second", "sync", "signals_sent", "signals_dropped",
                                "packets_missing", "edge_cut", "total_seconds"})
            if (summary.contains(key)) h << "<tr><td>" << key << "</td><td>" << esc(summary[key].dump()) << "</td></tr>";
        h << "</table>";
        if (summary.contains("populations")) {
            h << "<table style=\"margin-top:8px\"><tr><th>population</th><th>recorded</th><th>spikes</th><th>rate Hz</th></tr>";
            for (const auto& p : summary["populations"])
                h << "<tr><td>" << esc(p.value("id", std::string())) << "</td><td>" << p.value("neurons", 0) << "</td><td>"
                  << p.value("spikes", 0) << "</td><td>" << num(p.value("rate_hz", 0.0), 2) << "</td></tr>";
            h << "</table>";
        }
        h << "</section>\n";
    }
    if (status && status->cluster) {
        const auto& cluster = *status->cluster;
        h << "<section><h2>Cluster</h2>" << cluster_svg(cluster)
          << "<table><tr><th>node</th><th>address</th><th>capacity</th><th>neurons</th><th>alive</th></tr>";
        for (const auto& n : cluster.nodes)
            h << "<tr><td>" << esc(n.id) << "</td><td>" << esc(n.address) << "</td><td>" << n.capacity << "</td><td>" << n.neurons
              << "</td><td>" << (n.alive ? "yes" : "DEAD") << "</td></tr>";
        h << "</table></section>\n";
        if (!cluster.populations.empty()) {
            h << "<section><h2>Partition</h2><table><tr><th>population</th><th>size</th>";
            for (const auto& n : cluster.nodes) h << "<th>" << esc(n.id) << "</th>";
            h << "</tr>";
            for (const auto& p : cluster.populations) {
                h << "<tr><td>" << esc(p.id) << "</td><td>" << p.size << "</td>";
                for (const auto c : p.nodes) h << "<td>" << c << "</td>";
                h << "</tr>";
            }
            h << "</table><p>edge cut " << cluster.edge_cut << ", imbalance " << num(cluster.imbalance, 3) << "</p></section>\n";
        }
    }
    // The moves of neurons during the run (growth, re-balance, join, drain; the newest the
    // lead keeps): what moved where, and the pause.
    if (status && !status->moves.empty()) {
        h << "<section><h2>Moves</h2><table><tr><th>tick</th><th>what</th><th>neurons moved</th><th>neurons per node, before &rarr; after</th><th>pause ms</th></tr>";
        for (const auto& m : status->moves) {
            std::string nodes;
            for (const auto& n : m.nodes)
                nodes += (nodes.empty() ? "" : ", ") + esc(n.id) + " " + std::to_string(n.before) + " &rarr; " + std::to_string(n.after) +
                         (n.kept ? " (kept its engine)" : n.prepared ? " (engine built ahead)" : "");
            h << "<tr><td>" << m.tick << "</td><td>" << esc(m.what) << "</td><td>" << m.moved << "</td><td>" << nodes << "</td><td>"
              << num(m.paused_ms, 0) << "</td></tr>";
        }
        h << "</table></section>\n";
    }
    const json weights = summary.is_object() && summary.contains("weight_histograms") ? summary["weight_histograms"]
                         : status && status->cluster ? status->cluster->weight_histograms
                                                     : json();
    if (weights.is_object()) {
        h << "<section><h2>Weights</h2><p>The plastic synapses' weights after tick " << weights.value("tick", std::int64_t{0}) << ", "
          << weights.value("bins", 0) << " bins per projection.</p>\n";
        for (const auto& p : weights["projections"]) {
            h << "<figure style=\"display:inline-block;margin:0 16px 8px 0\">" << weights_svg(p) << "<figcaption>"
              << esc(p.value("projection", std::string())) << " (" << esc(p.value("model", std::string())) << "): " << p.value("synapses", 0)
              << " synapses";
            if (p.contains("min")) h << ", " << num(p["min"].get<double>(), 3) << " to " << num(p["max"].get<double>(), 3);
            h << "</figcaption></figure>\n";
        }
        h << "</section>\n";
    }
    if (!spikes.populations.empty()) {
        h << "<section><h2>Raster</h2>" << raster_svg(spikes) << "</section>\n<section><h2>Population rates</h2>"
          << rates_svg(spikes) << "</section>\n";
    } else {
        h << "<section><h2>Raster</h2><p>No spikes (the network records none, or none were given).</p></section>\n";
    }
    h << "</body></html>\n";
    return h.str();
}

}  // namespace dnnc::cli
