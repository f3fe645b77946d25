#include "spike_reader.hpp"

#include "dnnc/protocol/csv.hpp"

#include <algorithm>
#include <limits>

namespace dnnc::cli {

using json = nlohmann::json;

spike_reader::spike_reader(const client_options& o, std::string lead, std::int64_t from, std::ostream* csv)
    : options_(o), lead_(std::move(lead)), csv_(csv), from_(from) {
    const auto reply = request({{"groups", true}});
    if (!reply.value("recording", false) && !reply.value("sampling", false))
        throw usage_error("the network at " + lead_ + " records no spikes: add <record neurons=\"...\"/> to its <network>");
    // Names as codes: each population and variable once, in the order they first appear.
    auto code_of = [](std::vector<std::string>& names, const std::string& name) {
        const auto it = std::find(names.begin(), names.end(), name);
        if (it != names.end()) return static_cast<std::int32_t>(it - names.begin());
        names.push_back(name);
        return static_cast<std::int32_t>(names.size() - 1);
    };
    for (const auto& s : reply.value("samplings", json::array())) {
        std::vector<std::int32_t> variables;
        for (const auto& v : s.at("variables")) variables.push_back(code_of(sample_variables_, v.get<std::string>()));
        for (const auto& n : s.at("neurons"))
            sampled_.push_back({n.at(0).get<std::uint64_t>(), code_of(sample_populations_, n.at(1).get<std::string>()),
                                n.at(2).get<std::int64_t>(), s.at("every").get<std::int64_t>(), variables});
    }
    std::sort(sampled_.begin(), sampled_.end(), [](const sampled_neuron& a, const sampled_neuron& b) { return a.neuron < b.neuron; });
    dt_ = reply.at("dt").get<double>();
    learn_groups(reply.at("groups"));
    if (csv_) *csv_ << protocol::spike_csv_header();
}

json spike_reader::request(const json& extra) {
    json body{{"from", from_}};
    body.update(extra);
    return json::parse(call_node(options_, lead_, {protocol::message_type::spikes, 0, 0, body.dump()}).payload);
}

void spike_reader::learn_groups(const json& groups) {
    for (const auto& g : groups) {
        const auto first = g.at("first").get<std::uint64_t>();
        if (std::any_of(extents_.begin(), extents_.end(), [&](const extent& x) { return x.first == first; })) continue;
        const auto id = g.at("id").get<std::string>();
        auto at = std::find_if(groups_.begin(), groups_.end(), [&](const group& known) { return known.id == id; });
        if (at == groups_.end()) at = groups_.insert(groups_.end(), group{id, 0, 0});
        const auto recorded = g.at("recorded").get<std::uint64_t>();
        at->recorded += recorded;
        extents_.push_back({first, g.at("size").get<std::uint64_t>(), g.value("member", std::uint64_t{0}), recorded,
                            static_cast<std::size_t>(at - groups_.begin())});
    }
    std::sort(extents_.begin(), extents_.end(), [](const extent& a, const extent& b) { return a.first < b.first; });
    latest_ = 0;
}

const spike_reader::extent& spike_reader::extent_of(std::uint64_t neuron) {
    auto inside = [&](const extent& x) { return neuron >= x.first && neuron < x.first + x.size; };
    auto find = [&] {
        const auto it = std::upper_bound(extents_.begin(), extents_.end(), neuron,
                                         [](std::uint64_t n, const extent& x) { return n < x.first; });
        if (it == extents_.begin() || !inside(*std::prev(it))) return false;
        latest_ = static_cast<std::size_t>(std::prev(it) - extents_.begin());
        return true;
    };
    if (latest_ < extents_.size() && inside(extents_[latest_])) return extents_[latest_];
    if (find()) return extents_[latest_];
    learn_groups(request({{"groups", true}}).at("groups"));
    if (!find()) throw protocol_error("the lead sent a spike of neuron " + std::to_string(neuron) + ", which it does not record");
    return extents_[latest_];
}

std::int64_t spike_reader::read() {
    const auto reply = request(json::object());
    std::string rows;
    for (const auto& entry : reply.at("spikes")) {
        const auto tick = entry.at(0).get<std::int64_t>();
        for (const auto& n : entry.at(1)) {
            const auto neuron = n.get<std::uint64_t>();
            const auto& x = extent_of(neuron);
            auto& g = groups_[x.group];
            ++g.spikes;
            const auto member = x.member + (neuron - x.first);
            if (csv_) rows += protocol::spike_csv_row(tick, dt_, g.id, member);
            if (columns_) {
                columns_->tick.push_back(tick);
                columns_->group.push_back(static_cast<std::int32_t>(x.group));
                columns_->index.push_back(static_cast<std::int64_t>(member));
            }
        }
    }
    if (csv_) {
        *csv_ << rows;
        if (!*csv_) throw io_error("cannot write the spikes");
    }
    read_samples(reply.value("samples", json::array()));
    samples_lost_ = reply.value("samples_lost", std::int64_t{0});
    lost_ = reply.at("lost").get<std::int64_t>();
    completed_ = reply.at("completed").get<std::int64_t>();
    state_ = reply.at("state").get<std::string>();
    const auto through = reply.at("through").get<std::int64_t>();
    from_ = std::max(from_, through + 1);
    return through;
}

void spike_reader::record_samples(std::ostream* csv, sample_columns* to) {
    samples_csv_ = csv;
    sample_columns_ = to;
    if (csv) *csv << protocol::sample_csv_header();
}

void spike_reader::read_samples(const json& samples) {
    std::string rows;
    for (const auto& entry : samples) {
        const auto m = entry.at(0).get<std::int64_t>();  // the state at time m·dt
        const auto& values = entry.at(1);
        std::size_t k = 0;
        for (const auto& n : sampled_) {
            if (m % n.every != 0) continue;
            for (const auto v : n.variables) {
                if (k >= values.size()) throw protocol_error("the lead sent too few values of sample " + std::to_string(m));
                const auto& sampled = values[k++];  // null: NaN, a node the lead did not wait for
                const float value = sampled.is_null() ? std::numeric_limits<float>::quiet_NaN() : sampled.get<float>();
                if (samples_csv_)
                    rows += protocol::sample_csv_row(m, dt_, sample_populations_[static_cast<std::size_t>(n.population)], n.index,
                                                     sample_variables_[static_cast<std::size_t>(v)], value);
                if (sample_columns_) {
                    sample_columns_->m.push_back(m);
                    sample_columns_->population.push_back(n.population);
                    sample_columns_->index.push_back(n.index);
                    sample_columns_->variable.push_back(v);
                    sample_columns_->value.push_back(value);
                }
            }
        }
        if (k != values.size()) throw protocol_error("the lead sent too many values of sample " + std::to_string(m));
    }
    if (samples_csv_) {
        *samples_csv_ << rows;
        if (!*samples_csv_) throw io_error("cannot write the samples");
    }
}

void spike_reader::read_through(std::int64_t last) {
    while (read() < last) {
    }
}

void spike_reader::acknowledge() { request({{"acknowledge", true}}); }

json spike_reader::rates(std::int64_t ticks) const {
    json list = json::array();
    const double seconds = static_cast<double>(ticks) * dt_ / 1000.0;
    for (const auto& g : groups_) {
        const double rate = g.recorded > 0 && seconds > 0 ? static_cast<double>(g.spikes) / static_cast<double>(g.recorded) / seconds : 0.0;
        list.push_back({{"id", g.id}, {"neurons", g.recorded}, {"spikes", g.spikes}, {"rate_hz", rate}});
    }
    return list;
}

}  // namespace dnnc::cli
