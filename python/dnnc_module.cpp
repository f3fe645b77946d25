// _dnnc: the compiled half of the Python module `dnnc` (python/dnnc/__init__.py is the
// other). It holds no simulator logic of its own: documents go through the protocol
// library's reader, checks and writer; runs through the client library the `dnnc` command
// uses (local clusters, submit, step, output and spike readers). Outputs and spikes reach
// NumPy as arrays over C++ buffers, and the GIL is released while nodes start and ticks run.
#include "client.hpp"
#include "generate.hpp"
#include "local_run.hpp"
#include "spike_reader.hpp"
#include "structure_reader.hpp"
#include "weights_reader.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/half_weight.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/plan/counts.hpp"
#include "dnnc/plan/planning_graph.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/csv.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/model/draws.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/protocol/update.hpp"
#include "dnnc/protocol/xml.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <unistd.h>

namespace py = pybind11;
using json = nlohmann::json;

namespace dnnc::python {
namespace {

namespace fs = std::filesystem;

// The Python exception classes (created in PYBIND11_MODULE).
PyObject* error_type = nullptr;           // dnnc.Error(Exception)
PyObject* document_error_type = nullptr;  // dnnc.DocumentError(Error, ValueError)
PyObject* usage_error_type = nullptr;     // dnnc.UsageError(Error, ValueError)
PyObject* node_error_type = nullptr;      // dnnc.NodeError(Error, RuntimeError)

// A NumPy array that owns `values` (moved into a capsule): no copy, no Python loop.
template <typename T>
py::array_t<T> array_of(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
    auto* owned = new std::vector<T>(std::move(values));
    py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(shape, owned->data(), free_it);
}

model::document parse_checked(const std::string& text, const std::string& file) {
    auto doc = protocol::parse_document(text, file);
    model::check_document(doc);
    return doc;
}

// The connection element (index into network::connection_order) of the projection `id`.
std::size_t projection_element(const model::document& doc, const std::string& id) {
    if (doc.net) {
        const auto& order = doc.net->connection_order;
        for (std::size_t e = 0; e < order.size(); ++e) {
            if (order[e].kind == model::connection_ref::type::projection && doc.net->projections[order[e].index].id == id) return e;
        }
    }
    throw usage_error("no projection with id '" + id + "'");
}

// The dnnc-node this module starts: one in the module's own folder (where a pip install puts
// the copy it takes from the build, docs/python.md), else the one built with the module (its
// path is known at build time), else one in /usr/local/bin or /usr/bin.
std::string node_binary() {
    std::vector<fs::path> candidates;
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&node_binary), &self) != 0 && self.dli_fname != nullptr) {
        candidates.push_back(fs::path(self.dli_fname).parent_path() / "dnnc-node");
    }
    candidates.emplace_back(DNNC_NODE_BINARY);
    candidates.emplace_back("/usr/local/bin/dnnc-node");
    candidates.emplace_back("/usr/bin/dnnc-node");
    std::string looked;
    for (const auto& p : candidates) {
        if (fs::exists(p)) return p.string();
        looked += (looked.empty() ? "" : ", ") + p.string();
    }
    throw io_error("cannot find dnnc-node (looked for " + looked + ")");
}

// One network on a cluster: started here (local nodes) or at a lead given by address.
class simulation {
public:
    struct options {
        int nodes = 0;
        std::string cluster_file, lead, secret_file, log_level = "warn";
        std::string binary_snapshot;  // the .dnncs file `doc` (its document, no states) was read from
        int batch = 0;
        bool spikes = true, outputs = true;
        double timeout_s = 120;
    };

    simulation(model::document doc, const options& o) {
        client_.secret_file = o.secret_file;
        client_.timeout_s = o.timeout_s;
        if (!doc.net) throw usage_error(doc.file + ": the document has no <network>");
        if (!o.cluster_file.empty()) {
            const auto c = protocol::load_document(o.cluster_file);
            if (!c.clu) throw usage_error(o.cluster_file + ": the document has no <cluster>");
            doc.clu = c.clu;
        } else if (o.nodes > 0) {
            doc.clu.reset();
        }
        const int nodes = !doc.clu && o.nodes == 0 ? 1 : o.nodes;
        if (doc.run && o.lead.empty()) doc.run->clock.clear();  // the clock is the lead of this cluster
        if (o.batch > 0) {
            if (!doc.run) doc.run.emplace();
            doc.run->batch = o.batch;
        }
        record_spikes_ = o.spikes;
        add_spike_record(*doc.net);
        running_ = *doc.net;
        history_ = model::longest_delay(running_);
        for (const auto& p : doc.net->inputs) input_ids_.push_back(p.id);
        model::check_document(doc);
        batch_ = doc.run ? doc.run->batch : 1;

        std::string text;
        if (!o.lead.empty()) {
            if (!doc.clu) throw usage_error("lead=: the network needs a cluster (Network.cluster(...) or cluster=)");
            lead_ = o.lead;
            text = cli::submission_of(doc);
        } else {
            const model::cluster planned = doc.clu ? *doc.clu : cli::local_cluster_of(nodes);
            if (node_server::local_nodes(planned).size() != planned.nodes.size())
                throw usage_error("a cluster started here needs every node on this machine (127.0.0.0/8); give lead= for others");
            static std::atomic<int> count{0};
            dir_ = (fs::temp_directory_path() / ("dnnc-py-" + std::to_string(getpid()) + "-" + std::to_string(count++))).string();
            fs::create_directories(dir_);
            const std::string config = (fs::path(dir_) / "run.xml").string();
            node_server::launch_options launch;
            launch.node_binary = node_binary();
            launch.secret_file = o.secret_file;
            launch.log_level = o.log_level;
            launch.owner_pid = getpid();
            session_.emplace(planned, config, launch);
            client_.secret_file = session_->secret_file();
            doc.clu = session_->listening(planned);
            model::check_cluster(*doc.clu);
            text = cli::submission_of(doc);
            std::ofstream(config) << text;
            const auto& lead_node = *std::find_if(doc.clu->nodes.begin(), doc.clu->nodes.end(),
                                                  [&](const auto& n) { return n.id == doc.clu->lead; });
            lead_ = lead_node.host + ":" + std::to_string(lead_node.port);
        }
        watch_ = cli::takeover_watch(doc);
        // A binary snapshot travels as a file in pieces, its document as prepared here.
        summary_ = o.binary_snapshot.empty()
                       ? json::parse(cli::call_node(client_, lead_, {protocol::message_type::submit, 0, 0, text}).payload)
                       : cli::restore_binary_snapshot(client_, lead_, o.binary_snapshot, false, [&](model::document& d) { d = doc; });
        start_ = summary_["tick"].get<std::int64_t>();
        completed_ = start_ - 1;
        if (!doc.net->records.empty()) {
            spikes_.emplace(client_, lead_, start_, nullptr);
            spikes_->collect(&spike_columns_);
            spikes_->record_samples(nullptr, &sample_columns_);
        }
        if (o.outputs) outputs_.emplace(client_, lead_, start_, [this](const json& reply, bool) { return take_rows(reply); });
    }

    ~simulation() {
        try {
            close();
        } catch (...) {
        }
    }

    // Stops the nodes this simulation started; a lead given by address is left as it is.
    void close() {
        session_.reset();
        if (!dir_.empty()) {
            std::error_code ignored;
            fs::remove_all(dir_, ignored);
            dir_.clear();
        }
        closed_ = true;
    }

    // Runs `ticks` ticks and returns once they are complete; reads outputs and spikes as they
    // come, and follows the run to the node that takes it over when the lead is lost.
    void run(std::int64_t ticks) {
        open();
        auto watch = watch_;
        watch.spikes = spikes_ ? &*spikes_ : nullptr;
        watch.outputs = outputs_ ? &*outputs_ : nullptr;
        watch.each_poll = [] {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        };
        watch.bar = false;
        const auto began = std::chrono::steady_clock::now();
        const auto stepped = cli::step_and_read(client_, lead_, ticks, watch);
        // After a takeover, ours: the new lead's step began at its checkpoint.
        const double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        last_step_seconds_ = stepped.took_over ? ours : stepped.progress.last_step_seconds.value_or(ours);
        read_through(stepped.progress.completed);
    }

    // The frozen network takes the parameters of `doc`, a version of it that differs in
    // parameters only (protocol/update.hpp).
    json update(model::document doc) {
        open();
        if (!doc.net) throw usage_error(doc.file + ": the document has no <network>");
        add_spike_record(*doc.net);
        // Refused here, located in the caller's document, before anything is sent.
        protocol::check_update(running_, *doc.net, history_);
        auto reply = cli::update_network(client_, lead_, doc);
        running_ = std::move(*doc.net);
        return reply;
    }

    // Adds `add` members to `population` of the running network (cli::grow_population).
    json grow(const std::string& population, std::int64_t add) {
        open();
        return cli::grow_population(client_, lead_, population, add);
    }

    // Re-places the running network's neurons (cli::rebalance).
    json rebalance(const cli::rebalance_request& request) {
        open();
        return cli::rebalance(client_, lead_, request);
    }

    // `node` ("ID@HOST:PORT") joins the running cluster (cli::join_node).
    json join(const std::string& node, double capacity, const std::vector<std::string>& links) {
        open();
        return cli::join_node(client_, lead_, node, capacity, links);
    }

    // Node `id` leaves the running cluster (cli::drain_node).
    json drain(const std::string& id) {
        open();
        return cli::drain_node(client_, lead_, id);
    }

    json command(const std::string& name) {
        open();
        auto reply = cli::control(client_, lead_, protocol::control_kind(name));
        if (reply.contains("error")) throw error(reply["error"].get<std::string>());
        return reply;
    }

    // Reads every output row and spike of the ticks complete now.
    void catch_up() {
        open();
        read_through(cli::progress_of(client_, lead_).completed);
    }

    std::int64_t tick() {
        open();
        return cli::progress_of(client_, lead_).completed + 1;
    }

    void input(const std::vector<protocol::input_row>& rows) {
        open();
        protocol::check_input_lanes(rows, batch_);
        protocol::control_request input(protocol::control_request::kind::input);
        input.rows = rows;
        const auto reply = cli::control(client_, lead_, input);
        if (reply.contains("error")) throw error(reply["error"].get<std::string>());
    }

    py::array_t<float> outputs() {
        const auto columns = static_cast<py::ssize_t>(columns_.size());
        const auto rows = columns * batch_ > 0 ? static_cast<py::ssize_t>(values_.size()) / (columns * batch_) : 0;
        std::vector<float> copy = values_;
        if (batch_ > 1) return array_of(std::move(copy), {rows, batch_, columns});
        return array_of(std::move(copy), {rows, columns});
    }
    py::array_t<std::int64_t> output_ticks() { return array_of(std::vector<std::int64_t>(ticks_), {static_cast<py::ssize_t>(ticks_.size())}); }
    const std::vector<std::string>& output_columns() const { return columns_; }

    // (t_ms, group code, index) and the group names, without a Python loop per spike.
    py::tuple spikes() {
        const double dt = spikes_ ? spikes_->dt() : 0.1;
        const auto n = static_cast<py::ssize_t>(spike_columns_.tick.size());
        std::vector<double> t_ms(spike_columns_.tick.size());
        for (std::size_t i = 0; i < t_ms.size(); ++i) t_ms[i] = static_cast<double>(spike_columns_.tick[i]) * dt;
        std::vector<std::string> names;
        if (spikes_)
            for (const auto& g : spikes_->groups()) names.push_back(g.id);
        return py::make_tuple(array_of(std::move(t_ms), {n}), array_of(std::vector<std::int32_t>(spike_columns_.group), {n}),
                              array_of(std::vector<std::int64_t>(spike_columns_.index), {n}), names);
    }

    // (t_ms, population code, index, variable code, value) of the samples of <record
    // variables>, and the population and variable names the codes index.
    py::tuple recorded() {
        const auto& c = sample_columns_;
        const auto n = static_cast<py::ssize_t>(c.m.size());
        std::vector<double> t_ms(c.m.size());
        for (std::size_t i = 0; i < t_ms.size(); ++i) t_ms[i] = static_cast<double>(c.m[i]) * (spikes_ ? spikes_->dt() : 0.1);
        std::vector<std::string> populations, variables;
        if (spikes_) {
            populations = spikes_->sample_populations();
            variables = spikes_->sample_variables();
        }
        return py::make_tuple(array_of(std::move(t_ms), {n}), array_of(std::vector<std::int32_t>(c.population), {n}),
                              array_of(std::vector<std::int64_t>(c.index), {n}), array_of(std::vector<std::int32_t>(c.variable), {n}),
                              array_of(std::vector<float>(c.value), {n}), populations, variables);
    }

    json rates() const {
        if (!spikes_) return json::array();
        return spikes_->rates(completed_ + 1 - start_);
    }

    json status() {
        open();
        return protocol::encode(cli::status_of(client_, lead_));  // decoded first: checked
    }

    // The weights of plastic projection `projection` now (frozen): each synapse's source and
    // target member index in its group (0 for a single neuron) and its weight.
    py::tuple weights(const std::string& projection) {
        open();
        if (projection.empty()) throw usage_error("weights: name a plastic projection by its id");
        std::vector<std::int64_t> sources, targets;
        std::vector<float> values;
        {
            py::gil_scoped_release released;
            cli::read_weights(client_, lead_, projection, [&](const cli::weight_row& r) {
                sources.push_back(member_index(r.source));
                targets.push_back(member_index(r.target));
                values.push_back(r.weight);
            });
        }
        const auto n = static_cast<py::ssize_t>(values.size());
        return py::make_tuple(array_of(std::move(sources), {n}), array_of(std::move(targets), {n}), array_of(std::move(values), {n}));
    }

    // The lead's structure rows so far (structure_reader.hpp): (t_ms, population code,
    // mean_ca, connections_in, created, deleted) and the population names the codes index.
    py::tuple structure() {
        open();
        std::vector<double> t_ms, mean_ca;
        std::vector<std::int32_t> code;
        std::vector<std::int64_t> connections, created, deleted;
        std::vector<std::string> names;
        {
            py::gil_scoped_release released;
            cli::read_structure(client_, lead_, [&](const cli::structure_row& r) {
                auto at = std::find(names.begin(), names.end(), r.population);
                if (at == names.end()) at = names.insert(names.end(), r.population);
                t_ms.push_back(r.t_ms);
                code.push_back(static_cast<std::int32_t>(at - names.begin()));
                mean_ca.push_back(r.mean_ca);
                connections.push_back(static_cast<std::int64_t>(r.connections_in));
                created.push_back(static_cast<std::int64_t>(r.created));
                deleted.push_back(static_cast<std::int64_t>(r.deleted));
            });
        }
        const auto n = static_cast<py::ssize_t>(t_ms.size());
        return py::make_tuple(array_of(std::move(t_ms), {n}), array_of(std::move(code), {n}), array_of(std::move(mean_ca), {n}),
                              array_of(std::move(connections), {n}), array_of(std::move(created), {n}),
                              array_of(std::move(deleted), {n}), names);
    }

    // The live grown synapses of the frozen network (structure_reader.hpp's read_grown), in
    // the order they were made: (synapse code, source population code, source index, target
    // population code, target index), the structural synapse ids and the population ids.
    py::tuple connections() {
        open();
        std::vector<std::int32_t> synapse, source_group, target_group;
        std::vector<std::int64_t> source, target;
        std::vector<std::string> synapses, groups;
        auto code = [](std::vector<std::string>& names, const std::string& name) {
            auto at = std::find(names.begin(), names.end(), name);
            if (at == names.end()) at = names.insert(names.end(), name);
            return static_cast<std::int32_t>(at - names.begin());
        };
        auto group_of = [](const std::string& reference) { return reference.substr(0, reference.find('[')); };
        {
            py::gil_scoped_release released;
            cli::read_grown(client_, lead_, [&](const std::string& id, const std::string& from, const std::string& to) {
                synapse.push_back(code(synapses, id));
                source_group.push_back(code(groups, group_of(from)));
                source.push_back(member_index(from));
                target_group.push_back(code(groups, group_of(to)));
                target.push_back(member_index(to));
            });
        }
        const auto n = static_cast<py::ssize_t>(synapse.size());
        return py::make_tuple(array_of(std::move(synapse), {n}), array_of(std::move(source_group), {n}), array_of(std::move(source), {n}),
                              array_of(std::move(target_group), {n}), array_of(std::move(target), {n}), synapses, groups);
    }

    // Saves the frozen network (XML, or binary for .dnncs) and returns its tick.
    std::int64_t snapshot(const std::string& path) {
        open();
        return cli::save_snapshot_of(client_, lead_, path).tick;
    }

    const std::string& lead() const { return lead_; }
    std::vector<int> pids() const { return session_ ? session_->pids() : std::vector<int>{}; }
    std::int64_t start() const { return start_; }
    std::int64_t completed() const { return completed_; }
    double last_step_seconds() const { return last_step_seconds_; }
    const json& summary() const { return summary_; }
    const std::vector<std::string>& input_ids() const { return input_ids_; }
    std::int64_t batch() const { return batch_; }

private:
    // With spikes=True, a network that records no spikes records every spiking neuron's.
    void add_spike_record(model::network& net) const {
        if (!record_spikes_ || model::records_spikes(net.records)) return;
        auto spiking = [](const auto& group) { return model::is_spiking(group.params.model); };
        if (std::any_of(net.neurons.begin(), net.neurons.end(), spiking) || std::any_of(net.populations.begin(), net.populations.end(), spiking))
            net.records.emplace_back();
    }

    void open() const {
        if (closed_) throw usage_error("the simulation is closed");
    }
    // `pop[i]` -> i; a neuron's id -> 0.
    static std::int64_t member_index(const std::string& reference) {
        const auto bracket = reference.find('[');
        return bracket == std::string::npos ? 0 : std::stoll(reference.substr(bracket + 1));
    }

    void read_through(std::int64_t last) {
        if (spikes_) spikes_->read_through(last);
        if (outputs_) outputs_->read_through(last);
        if (outputs_ && outputs_->missed() > 0)
            throw error("the lead dropped " + std::to_string(outputs_->missed()) + " output rows that were not read in time");
        if (spikes_ && spikes_->lost() > 0)
            throw error("the lead dropped " + std::to_string(spikes_->lost()) + " recorded spikes that were not read in time");
        if (spikes_ && spikes_->samples_lost() > 0)
            throw error("the lead dropped " + std::to_string(spikes_->samples_lost()) + " sampled values that were not read in time");
        completed_ = std::max(completed_, last);
    }

    std::int64_t take_rows(const json& reply) {
        auto columns = reply["columns"].get<std::vector<std::string>>();
        if (columns_.empty()) columns_ = std::move(columns);
        else if (columns != columns_) widen_rows(std::move(columns));
        std::int64_t next = -1;
        for (const auto& row : reply["rows"]) {
            next = row[0].get<std::int64_t>();
            ticks_.push_back(next);
            for (std::size_t k = 1; k < row.size(); ++k) values_.push_back(row[k].get<float>());
        }
        return next + 1;
    }

    // A grow widened the outputs (a population an output names grew): the rows taken so
    // far get the new columns, as the lead's own (lead_run::adopt_rows): a column takes the
    // values of the old column of its name (the k-th of a name the k-th), 0 where none.
    void widen_rows(std::vector<std::string> columns) {
        const auto from = protocol::output_values_from(columns_, columns, batch_);
        const std::size_t before = columns_.size() * static_cast<std::size_t>(batch_);
        std::vector<float> values;
        values.reserve(ticks_.size() * from.size());
        for (std::size_t r = 0; r < ticks_.size(); ++r)
            for (const auto v : from) values.push_back(v == protocol::no_column ? 0.0f : values_[r * before + v]);
        values_ = std::move(values);
        columns_ = std::move(columns);
    }

    cli::client_options client_;
    std::optional<cli::cluster_session> session_;
    cli::step_watch watch_;  // where the run may be taken over
    std::string dir_, lead_;
    json summary_;
    std::int64_t start_ = 0, completed_ = -1;
    py::ssize_t batch_ = 1;
    double last_step_seconds_ = 0;
    bool closed_ = false;
    bool record_spikes_ = true;  // options::spikes
    model::network running_;  // as submitted, with the updates since
    std::uint16_t history_ = 1;  // ticks of output the nodes keep: the longest delay as submitted
    std::vector<std::string> input_ids_;
    std::optional<cli::spike_reader> spikes_;
    cli::spike_reader::columns spike_columns_;
    cli::spike_reader::sample_columns sample_columns_;
    std::optional<cli::output_reader> outputs_;
    std::vector<std::string> columns_;
    std::vector<std::int64_t> ticks_;
    std::vector<float> values_;
};

py::object to_python(const json& j) {
    return py::module_::import("json").attr("loads")(j.dump());
}

void raise_located(const config_error& e) {
    py::list problems;
    for (const auto& p : e.problems()) problems.append(py::make_tuple(p.where.file, p.where.line, p.where.column, p.message));
    py::object instance = py::reinterpret_borrow<py::object>(document_error_type)(e.what());
    instance.attr("problems") = problems;
    if (!e.problems().empty()) {
        const auto& first = e.problems().front().where;
        instance.attr("file") = first.file;
        instance.attr("line") = first.line;
        instance.attr("column") = first.column;
    }
    PyErr_SetObject(document_error_type, instance.ptr());
}

// The partition of a METIS graph or a DNNC network's planning graph over K nodes or a cluster.
py::tuple partition(const std::string& file, std::size_t parts, const std::string& cluster_file, const std::string& strategy,
                    double imbalance, std::uint64_t seed) {
    namespace dp = partitioner;
    const bool xml = file.size() >= 4 && file.compare(file.size() - 4, 4, ".xml") == 0;
    py::gil_scoped_release release;  // taken again below, to build the results
    std::optional<model::document> doc;
    dp::graph g;
    if (xml) {
        doc = protocol::load_document(file);
        if (!doc->net) throw usage_error(file + " has no <network> to partition");
    } else {
        g = dp::read_metis(file);
    }
    dp::physical_cluster cluster;
    if (parts > 0) {
        cluster = dp::complete_cluster(parts);
    } else if (!cluster_file.empty()) {
        const auto c = protocol::load_document(cluster_file);
        if (!c.clu) throw usage_error(cluster_file + " has no <cluster>");
        cluster = plan::physical_of(*c.clu);
    } else if (doc && doc->clu) {
        cluster = plan::physical_of(*doc->clu);
    } else {
        throw usage_error("give parts=K or cluster=PATH");
    }
    if (strategy != "multilevel" && strategy != "mincut") throw usage_error("strategy is multilevel or mincut, not " + strategy);
    dp::partition_options options;
    options.method = strategy == "mincut" ? dp::strategy::mincut : dp::strategy::multilevel;
    options.imbalance = imbalance;
    options.seed = seed;
    dp::metrics_options metrics;
    metrics.max_listed_violations = 0;
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> node_of;
    dp::quality q;
    std::size_t vertices = 0, edges = 0;
    if (doc) {
        const auto units = plan::planning_graph_of(*doc->net, cluster);
        auto placed = plan::place(units, cluster, options, metrics);
        node_of = units.spread(placed.node_of_unit);
        q = std::move(placed.quality);
        vertices = units.g.vertex_count();
        edges = units.g.edge_count();
    } else {
        auto result = dp::assign(g, cluster, options, metrics);
        node_of = std::move(result.place.node_of_vertex);
        q = std::move(result.metrics);
        vertices = g.vertex_count();
        edges = g.edge_count();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    py::gil_scoped_acquire gil;
    py::dict m;
    m["vertices"] = vertices;
    m["edges"] = edges;
    m["strategy"] = strategy;
    m["seconds"] = seconds;
    m["edge_cut"] = q.edge_cut;
    m["communication_volume"] = q.communication_volume;
    m["max_imbalance"] = q.max_imbalance;
    m["condition1_violations"] = q.violation_count;
    m["hop_weighted_cut"] = q.hop_weighted_cut;
    m["tick_cost"] = q.tick_cost;
    m["nodes"] = cluster.names;
    const auto n = static_cast<py::ssize_t>(node_of.size());
    return py::make_tuple(array_of(std::move(node_of), {n}), m);
}

}  // namespace
}  // namespace dnnc::python

PYBIND11_MODULE(_dnnc, m) {
    using namespace dnnc;
    using namespace dnnc::python;
    m.doc() = "The compiled part of dnnc (use the package `dnnc`).";

    error_type = PyErr_NewExceptionWithDoc("dnnc.Error", "Every error dnnc raises.", PyExc_Exception, nullptr);
    py::tuple document_bases = py::make_tuple(py::handle(error_type), py::handle(PyExc_ValueError));
    document_error_type = PyErr_NewExceptionWithDoc(
        "dnnc.DocumentError",
        "A document is wrong; the message is 'file:line:column: ...' as the command line prints it. "
        "`problems` lists (file, line, column, message); `file`, `line`, `column` locate the first.",
        document_bases.ptr(), nullptr);
    usage_error_type = PyErr_NewExceptionWithDoc("dnnc.UsageError", "A call was given arguments that make no sense.",
                                                 document_bases.ptr(), nullptr);
    py::tuple node_bases = py::make_tuple(py::handle(error_type), py::handle(PyExc_RuntimeError));
    node_error_type = PyErr_NewExceptionWithDoc("dnnc.NodeError", "A node failed or refused a request, or could not be reached.",
                                                node_bases.ptr(), nullptr);
    m.attr("Error") = py::handle(error_type);
    m.attr("DocumentError") = py::handle(document_error_type);
    m.attr("UsageError") = py::handle(usage_error_type);
    m.attr("NodeError") = py::handle(node_error_type);

    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const config_error& e) {
            raise_located(e);
        } catch (const usage_error& e) {
            PyErr_SetString(usage_error_type, e.what());
        } catch (const node_server::remote_error& e) {
            PyErr_SetString(node_error_type, e.what());
        } catch (const io_error& e) {
            PyErr_SetString(node_error_type, e.what());
        } catch (const error& e) {
            PyErr_SetString(error_type, e.what());
        }
    });

    // What a <noise> generator adds to `neuron` at ticks 0..ticks-1, its window aside: the
    // engine's own draws (model::noise_normal), for recording a noise source (pyNN.dnnc).
    m.def("noise_current", [](std::uint64_t seed, std::uint64_t neuron, double mean, double std, std::int64_t interval,
                              std::int64_t ticks) {
        if (interval < 1 || ticks < 0) throw usage_error("noise_current: interval >= 1 and ticks >= 0");
        const auto key = model::noise_key(seed, neuron);
        std::vector<float> values(static_cast<std::size_t>(ticks));
        for (std::int64_t t = 0; t < ticks; ++t)
            values[static_cast<std::size_t>(t)] = static_cast<float>(mean + std * model::noise_normal(key, t / interval));
        return array_of(std::move(values), {static_cast<py::ssize_t>(ticks)});
    });
    m.def("canonical", [](const std::string& text, const std::string& file) {
        return protocol::serialize(parse_checked(text, file));
    }, py::arg("text"), py::arg("file"), "Parses, validates and checks a document; returns its text as the writer writes it.");

    m.def("load", [](const std::string& path) {
        const auto doc = protocol::is_binary_snapshot_path(path) ? protocol::load_snapshot(path) : protocol::load_document(path);
        return protocol::serialize(doc);
    }, py::arg("path"), "Reads and checks a document (or a snapshot); returns its text as the writer writes it.");

    m.def("counts", [](const std::string& text, const std::string& file) {
        const auto doc = parse_checked(text, file);
        py::dict d;
        if (!doc.net) return d;
        const auto size = plan::size_of(*doc.net);
        d["neurons"] = size.neurons;
        d["synapses"] = size.synapses;
        d["dense_weights"] = size.dense_weights;
        return d;
    }, py::arg("text"), py::arg("file"), "Exact neuron and synapse counts of a document's network (no synapse stored).");

    m.def("connections", [](const std::string& text, const std::string& file, const std::string& projection) {
        // The synapses of one projection, drawn by the rules the nodes draw them by (rows.hpp).
        const auto doc = parse_checked(text, file);
        const auto& net = *doc.net;
        const auto element = projection_element(doc, projection);
        const bool half = doc.run && doc.run->half_weights;  // the weights as the nodes keep them
        std::vector<std::int64_t> sources, targets;
        std::vector<float> weights;
        std::vector<std::int64_t> delays;
        {
            py::gil_scoped_release released;
            const model::synapse_rows rows(net);
            for (model::neuron_index target = 0; target < rows.neuron_count(); ++target) {
                rows.for_each(target, [&](model::neuron_index source, float weight, std::uint16_t delay, std::size_t e) {
                    if (e != element) return;
                    sources.push_back(source);
                    targets.push_back(target);
                    weights.push_back(half ? half_weight::as_kept(weight) : weight);
                    delays.push_back(delay);
                });
            }
        }
        const auto n = static_cast<py::ssize_t>(weights.size());
        return py::make_tuple(array_of(std::move(sources), {n}), array_of(std::move(targets), {n}), array_of(std::move(weights), {n}),
                              array_of(std::move(delays), {n}));
    }, py::arg("text"), py::arg("file"), py::arg("projection"),
       "The synapses of the projection with id `projection`: (source, target, weight, delay in ticks) arrays, neurons by "
       "their number in the network (explicit neurons first, then each group's members in document order), each "
       "target's synapses in canonical order.");

    m.def("connection_count", [](const std::string& text, const std::string& file, const std::string& projection) {
        const auto doc = parse_checked(text, file);
        const auto element = projection_element(doc, projection);
        py::gil_scoped_release released;
        const model::synapse_rows rows(*doc.net, {});
        // Built for no target, a fixed-outdegree projection draws nothing: its count is K per source.
        std::uint64_t n = rows.outdegree_synapses(element);
        for (model::neuron_index target = 0; target < rows.neuron_count(); ++target) n += rows.count(target, element);
        return n;
    }, py::arg("text"), py::arg("file"), py::arg("projection"),
       "The exact number of synapses of the projection with id `projection` (random rules draw their skips only).");

    m.def("read_input_csv", [](const std::string& path) {
        std::vector<py::tuple> rows;
        for (const auto& r : protocol::read_input_csv(path)) rows.push_back(py::make_tuple(r.tick, r.target, r.value, r.lane));
        return rows;
    }, py::arg("path"), "Reads an input CSV (tick,target,value[,lane]) into (tick, target, value, lane) tuples.");

    m.def("partition", &partition, py::arg("file"), py::arg("parts") = 0, py::arg("cluster") = "",
          py::arg("strategy") = "multilevel", py::arg("imbalance") = 0.03, py::arg("seed") = 1,
          "Partitions a METIS graph or a DNNC network; returns (node of every vertex or neuron, metrics).");

    m.def("generate", [](const std::string& kind, const py::dict& params, std::uint64_t seed, const std::string& path,
                         const std::string& name) {
        // What dnnc gen does, the parameters named as its options are (p_in: --p-in).
        cli::gen_options o;
        o.kind = kind;
        o.output = path;
        o.name = name;
        o.seed = seed;
        for (const auto& [key, value] : params) {
            auto option = key.cast<std::string>();
            std::replace(option.begin(), option.end(), '_', '-');
            option = "--" + option;
            if (option == "--n") o.n = value.cast<std::size_t>();
            else if (option == "--p") o.p = value.cast<double>();
            else if (option == "--degree") o.degree = value.cast<double>();
            else if (option == "--blocks") o.blocks = value.cast<std::vector<std::size_t>>();
            else if (option == "--p-in") o.p_in = value.cast<double>();
            else if (option == "--p-out") o.p_out = value.cast<double>();
            else if (option == "--k") o.k = value.cast<std::size_t>();
            else if (option == "--beta") o.beta = value.cast<double>();
            else if (option == "--m") o.m = value.cast<std::size_t>();
            else if (option == "--dims") o.dims = value.cast<std::vector<std::size_t>>();
            else if (option == "--radius") o.radius = value.cast<double>();
            else if (option == "--layers") o.layers = value.cast<std::vector<std::size_t>>();
            else throw usage_error("generate: unknown parameter '" + key.cast<std::string>() + "'");
            o.given.insert(option);
        }
        const auto g = cli::write_generated(o);
        return py::make_tuple(g.vertex_count(), g.edge_count());
    }, py::arg("kind"), py::arg("params"), py::arg("seed"), py::arg("path"), py::arg("name"),
       "Writes a synthetic graph as a METIS .graph file or a DNNC .xml network, as dnnc gen does; returns (vertices, edges).");

    py::class_<simulation>(m, "Simulation", "A network on a cluster (see dnnc.Simulation).")
        .def(py::init([](const std::string& text, const std::string& file, const std::string& snapshot, int nodes,
                         const std::string& cluster, const std::string& lead, int batch, const std::string& secret_file,
                         bool spikes, bool outputs, const std::string& log_level, double timeout) {
                 simulation::options o;
                 o.nodes = nodes;
                 o.cluster_file = cluster;
                 o.lead = lead;
                 o.batch = batch;
                 o.secret_file = secret_file;
                 o.spikes = spikes;
                 o.outputs = outputs;
                 o.log_level = log_level;
                 o.timeout_s = timeout;
                 model::document doc;
                 if (protocol::is_binary_snapshot_path(snapshot)) {
                     protocol::check_snapshot_file(snapshot);  // every state read and checked before anything is sent
                     doc = protocol::snapshot_reader(snapshot).doc();
                     o.binary_snapshot = snapshot;
                 } else {
                     doc = !snapshot.empty() ? protocol::load_snapshot(snapshot) : parse_checked(text, file);
                 }
                 py::gil_scoped_release release;
                 return std::make_unique<simulation>(std::move(doc), o);
             }),
             py::arg("text"), py::arg("file"), py::arg("snapshot"), py::arg("nodes"), py::arg("cluster"), py::arg("lead"),
             py::arg("batch"), py::arg("secret_file"), py::arg("spikes"), py::arg("outputs"), py::arg("log_level"), py::arg("timeout"))
        .def("run", &simulation::run, py::arg("ticks"), py::call_guard<py::gil_scoped_release>())
        .def("command", [](simulation& s, const std::string& name) {
            json reply;
            {
                py::gil_scoped_release release;
                reply = s.command(name);
            }
            return to_python(reply);
        })
        .def("grow", [](simulation& s, const std::string& population, std::int64_t add) {
            json reply;
            {
                py::gil_scoped_release release;
                reply = s.grow(population, add);
            }
            return to_python(reply);
        }, py::arg("population"), py::arg("add"))
        .def("rebalance", [](simulation& s, bool dry_run, std::optional<double> migration_weight, const std::map<std::string, double>& capacity) {
            json reply;
            {
                py::gil_scoped_release release;
                reply = s.rebalance({dry_run, migration_weight, capacity});
            }
            return to_python(reply);
        }, py::arg("dry_run"), py::arg("migration_weight"), py::arg("capacity"))
        .def("join", [](simulation& s, const std::string& node, double capacity, const std::vector<std::string>& links) {
            json reply;
            {
                py::gil_scoped_release release;
                reply = s.join(node, capacity, links);
            }
            return to_python(reply);
        }, py::arg("node"), py::arg("capacity"), py::arg("links"))
        .def("drain", [](simulation& s, const std::string& id) {
            json reply;
            {
                py::gil_scoped_release release;
                reply = s.drain(id);
            }
            return to_python(reply);
        }, py::arg("node"))
        .def("catch_up", &simulation::catch_up, py::call_guard<py::gil_scoped_release>())
        .def("tick", &simulation::tick, py::call_guard<py::gil_scoped_release>())
        .def("input", [](simulation& s, const std::vector<std::tuple<std::int64_t, std::string, float, std::int64_t>>& rows) {
            std::vector<protocol::input_row> list;
            list.reserve(rows.size());
            for (const auto& [tick, target, value, lane] : rows) list.push_back({tick, target, value, lane, {}});
            py::gil_scoped_release release;
            s.input(list);
        })
        .def("input_csv", [](simulation& s, const std::string& path) {
            const auto rows = protocol::read_input_csv(path);
            py::gil_scoped_release release;
            s.input(rows);
        })
        .def("outputs", &simulation::outputs)
        .def("output_ticks", &simulation::output_ticks)
        .def_property_readonly("output_columns", &simulation::output_columns)
        .def("spikes", &simulation::spikes)
        .def("recorded", &simulation::recorded)
        .def("rates", [](const simulation& s) { return to_python(s.rates()); })
        .def("status", [](simulation& s) {
            json st;
            {
                py::gil_scoped_release release;
                st = s.status();
            }
            return to_python(st);
        })
        .def("update", [](simulation& s, const std::string& text, const std::string& file) {
            model::document doc = parse_checked(text, file);
            json reply;
            {
                py::gil_scoped_release release;
                reply = s.update(std::move(doc));
            }
            return to_python(reply);
        }, py::arg("text"), py::arg("file"))
        .def("snapshot", &simulation::snapshot, py::arg("path"), py::call_guard<py::gil_scoped_release>())
        .def("weights", &simulation::weights, py::arg("projection"))
        .def("structure", &simulation::structure)
        .def("connections", &simulation::connections)
        .def("close", &simulation::close, py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("lead", &simulation::lead)
        .def_property_readonly("pids", &simulation::pids)
        .def_property_readonly("start", &simulation::start)
        .def_property_readonly("completed", &simulation::completed)
        .def_property_readonly("last_step_seconds", &simulation::last_step_seconds)
        .def_property_readonly("summary", [](const simulation& s) { return to_python(s.summary()); })
        .def_property_readonly("input_ids", &simulation::input_ids)
        .def_property_readonly("batch", &simulation::batch);
}
