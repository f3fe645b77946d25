#include "structure_reader.hpp"

#include "dnnc/core/error.hpp"

#include <cstdio>
#include <fstream>

namespace dnnc::cli {

using json = nlohmann::json;

void read_structure(const client_options& o, const std::string& lead, const std::function<void(const structure_row&)>& f) {
    protocol::control_request read(protocol::control_request::kind::structure);
    for (std::uint64_t from = 0;;) {
        read.from = static_cast<std::int64_t>(from);
        const auto reply = control(o, lead, read);
        if (reply.at("lost").get<std::uint64_t>() > 0)
            throw error("the lead dropped " + reply["lost"].dump() + " structure rows that were not read in time");
        if (reply.at("rows").empty()) return;
        for (const auto& r : reply["rows"])
            f({r.at("t_ms").get<double>(), r.at("population").get<std::string>(), r.at("mean_ca").get<double>(),
               r.at("connections_in").get<std::uint64_t>(), r.at("created").get<std::uint64_t>(), r.at("deleted").get<std::uint64_t>()});
        from = reply.at("next").get<std::uint64_t>();
    }
}

void read_grown(const client_options& o, const std::string& lead,
                const std::function<void(const std::string& synapse, const std::string& source, const std::string& target)>& f) {
    constexpr std::uint64_t page = 100000;
    for (std::uint64_t from = 0, total = 1; from < total; from += page) {
        const json request{{"grown", true}, {"from", from}, {"limit", page}};
        const auto reply = json::parse(call_node(o, lead, {protocol::message_type::weights, 0, 0, request.dump()}).payload);
        total = reply.at("total").get<std::uint64_t>();
        for (const auto& row : reply.at("rows")) f(row.at(0).get<std::string>(), row.at(1).get<std::string>(), row.at(2).get<std::string>());
    }
}

std::uint64_t save_structure(const client_options& o, const std::string& lead, const std::string& path) {
    std::ofstream out(path);
    if (!out) throw io_error("cannot write " + path);
    out << "t_ms,population,mean_ca,connections_in,created,deleted\n";
    std::uint64_t written = 0;
    char line[64];
    read_structure(o, lead, [&](const structure_row& r) {
        std::snprintf(line, sizeof line, "%.10g,", r.t_ms);
        out << line << r.population;
        std::snprintf(line, sizeof line, ",%.17g,", r.mean_ca);
        out << line << r.connections_in << ',' << r.created << ',' << r.deleted << '\n';
        ++written;
    });
    if (!out.flush()) throw io_error("cannot write " + path);
    return written;
}

}  // namespace dnnc::cli
