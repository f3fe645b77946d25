#include "weights_reader.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace dnnc::cli {

using json = nlohmann::json;

void read_weights(const client_options& o, const std::string& lead, const std::string& projection,
                  const std::function<void(const weight_row&)>& f) {
    constexpr std::uint64_t page = 100000;
    std::size_t nodes = 1;
    for (std::size_t node = 0; node < nodes; ++node)
        for (std::uint64_t from = 0, total = 1; from < total; from += page) {
            const json request{{"node", node}, {"from", from}, {"limit", page}};
            const auto reply = json::parse(call_node(o, lead, {protocol::message_type::weights, 0, 0, request.dump()}).payload);
            nodes = reply.at("nodes").get<std::size_t>();
            total = reply.at("total").get<std::uint64_t>();
            const auto& plastic = reply.at("plastic");
            if (!projection.empty() && std::find(plastic.begin(), plastic.end(), projection) == plastic.end())
                throw usage_error("no plastic projection '" + projection + "' (plastic: " + (plastic.empty() ? "none" : plastic.dump()) + ")");
            for (const auto& row : reply.at("rows")) {
                weight_row r{row[0].get<std::string>(), row[1].get<std::string>(), row[2].get<std::string>(), row[3].get<float>()};
                if (projection.empty() || r.projection == projection) f(r);
            }
        }
}

std::uint64_t save_weights(const client_options& o, const std::string& lead, const std::string& path, const std::string& projection) {
    std::ofstream out(path);
    if (!out) throw io_error("cannot write " + path);
    out << "projection,source,target,weight\n";
    std::uint64_t written = 0;
    char value[32];
    read_weights(o, lead, projection, [&](const weight_row& r) {
        std::snprintf(value, sizeof value, "%.9g", static_cast<double>(r.weight));
        out << r.projection << ',' << r.source << ',' << r.target << ',' << value << '\n';
        ++written;
    });
    if (!out.flush()) throw io_error("cannot write " + path);
    return written;
}

json read_weight_histograms(const client_options& o, const std::string& lead) {
    return json::parse(call_node(o, lead, {protocol::message_type::weight_histograms, 0, 0, {}}).payload);
}

std::string weights_sample_path(const std::string& path, std::int64_t tick) {
    const std::filesystem::path p(path);
    return (p.parent_path() / (p.stem().string() + "-" + std::to_string(tick) + p.extension().string())).string();
}

}  // namespace dnnc::cli
