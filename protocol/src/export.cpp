#include "dnnc/protocol/export.hpp"

#include "dnnc/core/half_weight.hpp"
#include "dnnc/model/rows.hpp"

#include "text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes
namespace {

// Collects output in a buffer and hands it to the stream in large pieces.
class sink {
public:
    explicit sink(std::ostream& out) : out_(out) { buffer_.reserve(flush_at + 4096); }
    std::string& buffer() { return buffer_; }
    void maybe_flush() {
        if (buffer_.size() >= flush_at) flush();
    }
    void flush() {
        out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        buffer_.clear();
        if (!out_) throw io_error("export: the output could not be written");
    }

private:
    static constexpr std::size_t flush_at = std::size_t{1} << 16;
    std::ostream& out_;
    std::string buffer_;
};

template <class T>
void append_integer(std::string& s, T value) {
    char digits[24];
    const auto r = std::to_chars(digits, digits + sizeof digits, value);
    s.append(digits, r.ptr);
}

// The shortest text that reads back to the same float (weights are float32).
void append_float(std::string& s, float value) {
    char digits[32];
    const auto r = std::to_chars(digits, digits + sizeof digits, value);
    s.append(digits, r.ptr);
}

// Four significant digits, for labels in pictures.
void append_short(std::string& s, double value) {
    char digits[32];
    const int n = std::snprintf(digits, sizeof digits, "%.4g", value);
    s.append(digits, static_cast<std::size_t>(n));
}

void append_xml_escaped(std::string& s, std::string_view text) {
    for (const char c : text) {
        switch (c) {
            case '&': s += "&amp;"; break;
            case '<': s += "&lt;"; break;
            case '>': s += "&gt;"; break;
            case '"': s += "&quot;"; break;
            case '\'': s += "&apos;"; break;
            default:
                // XML 1.0 cannot carry these control characters even as references.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') s += '?';
                else s += c;
        }
    }
}

// The body of a JSON string.
void append_json_escaped(std::string& s, std::string_view text) {
    for (const char c : text) {
        switch (c) {
            case '"': s += "\\\""; break;
            case '\\': s += "\\\\"; break;
            case '\n': s += "\\n"; break;
            case '\r': s += "\\r"; break;
            case '\t': s += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char code[8];
                    std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
                    s += code;
                } else {
                    s += c;
                }
        }
    }
}

void append_json_string(std::string& s, std::string_view text) {
    s += '"';
    append_json_escaped(s, text);
    s += '"';
}

// The body of a DOT double-quoted string.
void append_dot_escaped(std::string& s, std::string_view text) {
    for (const char c : text) {
        if (c == '"' || c == '\\') s += '\\';
        if (c == '\n') s += "\\n";
        else s += c;
    }
}

// JSON has no NaN or infinities: they become null.
void append_json_number(std::string& s, double value) {
    if (std::isfinite(value)) s += text::from_double(value);
    else s += "null";
}

// Neuron names, each group's id escaped once for the format: `a` or `pop[7]`.
class names {
public:
    template <class Escape>
    names(const expanded_network& net, Escape escape) : net_(net) {
        escaped_.reserve(net.groups.size());
        for (const auto& g : net.groups) {
            std::string e;
            escape(e, g.id);
            escaped_.push_back(std::move(e));
        }
    }
    void append(std::string& s, neuron_index i) const {
        const std::uint32_t g = net_.group_of[i];
        s += escaped_[g];
        if (!net_.groups[g].is_population) return;
        s += '[';
        append_integer(s, net_.groups[g].member + (i - net_.groups[g].first));
        s += ']';
    }
    const std::string& group(neuron_index i) const { return escaped_[net_.group_of[i]]; }

private:
    const expanded_network& net_;
    std::vector<std::string> escaped_;
};

// Calls f(from, to, weight, delay, dense) for every synapse: those of each neuron in
// canonical order, neuron by neuron, drawn from the rules as they are written (nothing is
// stored), with `half` their weights as half weights keep them; then the cells of the dense
// blocks row by row. Stops once f returns false.
template <class F>
void for_each_synapse(const expanded_network& net, const synapse_rows& rows, bool half, F f) {
    bool more = true;
    for (neuron_index to = 0; to < net.neuron_count() && more; ++to)
        rows.for_each(to, [&](neuron_index from, float weight, std::uint16_t delay, std::size_t) {
            more = more && f(from, to, half ? half_weight::as_kept(weight) : weight, delay, false);
        });
    if (!more) return;
    for (const auto& block : net.dense) {
        const std::size_t cols = block.sources.size();
        for (std::size_t r = 0; r < block.targets.size(); ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
                if (!f(block.sources[c], block.targets[r], block.weights[r * cols + c], block.delay, true)) return;
            }
        }
    }
}

std::uint64_t total_synapses(const expanded_network& net, const synapse_rows& rows) {
    std::uint64_t total = 0;
    for (neuron_index to = 0; to < net.neuron_count(); ++to) total += rows.count(to);
    for (const auto& block : net.dense) total += std::uint64_t{block.sources.size()} * block.targets.size();
    return total;
}

// What the writers know beyond the network, checked against it.
struct extras {
    const snapshot_state* state = nullptr;
    std::vector<const neuron_state*> value_of;  // per neuron; null when the state lacks it
    const node_assignment* nodes = nullptr;
    std::vector<std::string> variables;  // names of the state variables present, in key order
    bool half_weights = false;           // export_options::half_weights
};

extras check_extras(const expanded_network& net, const snapshot_state* state, const node_assignment* nodes) {
    extras x;
    x.state = state;
    x.nodes = nodes;
    if (nodes) {
        if (nodes->node_of.size() != net.neuron_count()) {
            throw usage_error("export: the node assignment covers " + std::to_string(nodes->node_of.size()) +
                              " neurons; the network has " + std::to_string(net.neuron_count()));
        }
        for (const std::uint32_t n : nodes->node_of) {
            if (n >= nodes->node_ids.size()) {
                throw usage_error("export: node index " + std::to_string(n) + " of the assignment is not one of its " +
                                  std::to_string(nodes->node_ids.size()) + " nodes");
            }
        }
    }
    if (!state) return x;
    x.value_of.assign(net.neuron_count(), nullptr);
    std::vector<diagnostic> problems;
    std::array<bool, static_cast<std::size_t>(neuron_model::spike_source) + 1> model_present{};
    for (const auto& s : state->neurons) {
        const auto i = net.find(s.id);
        if (!i) {
            problems.push_back({s.where, "state of '" + s.id + "': the network has no such neuron"});
            continue;
        }
        if (x.value_of[*i]) {
            problems.push_back({s.where, "state of '" + s.id + "' given twice"});
            continue;
        }
        const neuron_model model = net.params_of(*i).model;
        const auto& expected = state_variable_names(model);
        if (s.state.size() != expected.size()) {
            std::string list;
            for (const auto& name : expected) list += (list.empty() ? "" : ", ") + name;
            problems.push_back({s.where, "state of '" + s.id + "': a " + to_string(model) + " neuron has " +
                                             std::to_string(expected.size()) + " state variables" +
                                             (list.empty() ? "" : " (" + list + ")") + ", not " +
                                             std::to_string(s.state.size())});
            continue;
        }
        x.value_of[*i] = &s;
        model_present[static_cast<std::size_t>(model)] = true;
    }
    if (!problems.empty()) throw config_error(std::move(problems));
    for (std::size_t m = 0; m < model_present.size(); ++m) {
        if (!model_present[m]) continue;
        for (const auto& name : state_variable_names(static_cast<neuron_model>(m))) {
            if (std::find(x.variables.begin(), x.variables.end(), name) == x.variables.end()) x.variables.push_back(name);
        }
    }
    return x;
}

// The value of variable `name` of a neuron's state entry, if its model has one.
const double* variable(const expanded_network& net, neuron_index i, const neuron_state& s, const std::string& name) {
    const auto& names = state_variable_names(net.params_of(i).model);
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? nullptr : &s.state[static_cast<std::size_t>(it - names.begin())];
}

// GraphML: <key> declarations for every attribute used, then one <node> per neuron (id
// "n<index>", data: label = neuron id, index, model, group, node, output and state
// variables) and one directed <edge> per synapse (data: weight, delay, dense).
void write_graphml(sink& out, const expanded_network& net, const synapse_rows& rows, const extras& x) {
    std::string& s = out.buffer();
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\"\n"
         "         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
         "         xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
         "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n";
    auto key = [&s](const std::string& id, const char* domain, const char* type) {
        s += "  <key id=\"";
        append_xml_escaped(s, id);
        s += "\" for=\"";
        s += domain;
        s += "\" attr.name=\"";
        append_xml_escaped(s, id);
        s += "\" attr.type=\"";
        s += type;
        s += "\"/>\n";
    };
    key("network", "graph", "string");
    if (x.state) key("tick", "graph", "long");
    key("label", "node", "string");
    key("index", "node", "long");
    key("model", "node", "string");
    key("group", "node", "string");
    if (x.nodes) key("node", "node", "string");
    if (x.state) key("output", "node", "double");
    for (const auto& v : x.variables) key(v, "node", "double");
    key("weight", "edge", "double");
    key("delay", "edge", "int");
    if (!net.dense.empty()) {
        s += "  <key id=\"dense\" for=\"edge\" attr.name=\"dense\" attr.type=\"boolean\">"
             "<default>false</default></key>\n";
    }
    s += "  <graph id=\"network\" edgedefault=\"directed\">\n    <data key=\"network\">";
    append_xml_escaped(s, net.name);
    s += "</data>\n";
    if (x.state) {
        s += "    <data key=\"tick\">";
        append_integer(s, x.state->tick);
        s += "</data>\n";
    }

    const names name(net, append_xml_escaped);
    std::vector<std::string> node_ids;
    if (x.nodes) {
        for (const auto& id : x.nodes->node_ids) {
            node_ids.emplace_back();
            append_xml_escaped(node_ids.back(), id);
        }
    }
    auto data = [&s](const std::string& key_id) -> std::string& {
        s += "<data key=\"";
        s += key_id;
        s += "\">";
        return s;
    };
    for (neuron_index i = 0; i < net.neuron_count(); ++i) {
        s += "    <node id=\"n";
        append_integer(s, i);
        s += "\">";
        name.append(data("label"), i);
        s += "</data>";
        append_integer(data("index"), i);
        s += "</data>";
        data("model") += to_string(net.params_of(i).model);
        s += "</data>";
        data("group") += name.group(i);
        s += "</data>";
        if (x.nodes) {
            data("node") += node_ids[x.nodes->node_of[i]];
            s += "</data>";
        }
        if (x.state && x.value_of[i]) {
            const neuron_state& v = *x.value_of[i];
            data("output") += text::from_double(v.output);
            s += "</data>";
            for (const auto& var : x.variables) {
                if (const double* value = variable(net, i, v, var)) {
                    data(var) += text::from_double(*value);
                    s += "</data>";
                }
            }
        }
        s += "</node>\n";
        out.maybe_flush();
    }
    for_each_synapse(net, rows, x.half_weights, [&](neuron_index from, neuron_index to, float weight, std::uint16_t delay, bool dense) {
        s += "    <edge source=\"n";
        append_integer(s, from);
        s += "\" target=\"n";
        append_integer(s, to);
        s += "\">";
        if (std::isfinite(weight)) append_float(data("weight"), weight);
        else data("weight") += text::from_double(weight);
        s += "</data>";
        append_integer(data("delay"), delay);
        s += "</data>";
        if (dense) s += "<data key=\"dense\">true</data>";
        s += "</edge>\n";
        out.maybe_flush();
        return true;
    });
    s += "  </graph>\n</graphml>\n";
}

// Fill colours of the neurons of node (or, without an assignment, group) k, and the
// border and background of node k's cluster: ColorBrewer Set2 and Pastel2, repeating.
constexpr std::array<const char*, 8> strong_colour{"#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3",
                                                   "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3"};
constexpr std::array<const char*, 8> pale_colour{"#e0f3ec", "#fee6d8", "#e8ecf5", "#f8e4f0",
                                                 "#eef7dd", "#fff6c9", "#f7efe3", "#eeeeee"};

// Graphviz DOT: a digraph with one `subgraph cluster_<node>` per physical node holding its
// neurons (filled with the node's colour; labelled with id, model, output and state
// variables), and one edge per synapse labelled with its weight (and delay when > 1), the
// line as wide as the weight is large; negative weights red with a bar head, dense cells
// dashed. Without an assignment there are no clusters and neurons take their group's colour.
void write_dot(sink& out, const expanded_network& net, const synapse_rows& rows, const extras& x, std::uint64_t max_synapses) {
    std::string& s = out.buffer();
    const std::uint64_t total = total_synapses(net, rows);
    const std::uint64_t shown = max_synapses == 0 ? total : std::min(total, max_synapses);

    std::string title;
    append_dot_escaped(title, net.name);
    if (x.state) title += ", tick " + std::to_string(x.state->tick);
    if (shown < total) {
        title += "\\nfirst " + std::to_string(shown) + " of " + std::to_string(total) + " synapses shown";
        s += "// Only the first " + std::to_string(shown) + " of " + std::to_string(total) +
             " synapses are written (the synapse limit of the export).\n";
    }
    s += "digraph \"";
    append_dot_escaped(s, net.name);
    s += "\" {\n  graph [label=\"" + title +
         "\", labelloc=t, fontname=\"Helvetica\", nodesep=0.3, ranksep=0.8];\n"
         "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
         "  edge [fontname=\"Helvetica\", fontsize=9, arrowsize=0.7];\n";

    const names name(net, append_dot_escaped);
    auto neuron = [&](neuron_index i, const char* indent, const char* fill) {
        s += indent;
        s += '"';
        name.append(s, i);
        s += "\" [label=\"";
        name.append(s, i);
        s += "\\n";
        s += to_string(net.params_of(i).model);
        if (x.state && x.value_of[i]) {
            const neuron_state& v = *x.value_of[i];
            s += "\\ny=";
            append_short(s, v.output);
            const auto& vars = state_variable_names(net.params_of(i).model);
            for (std::size_t k = 0; k < vars.size(); ++k) {
                s += k == 0 ? "\\n" : " ";
                append_dot_escaped(s, vars[k]);
                s += '=';
                append_short(s, v.state[k]);
            }
        }
        s += "\", fillcolor=\"";
        s += fill;
        s += "\"];\n";
        out.maybe_flush();
    };

    if (x.nodes) {
        const std::size_t node_count = x.nodes->node_ids.size();
        // Neurons bucketed by node, in index order within each.
        std::vector<std::size_t> start(node_count + 1, 0);
        for (const std::uint32_t n : x.nodes->node_of) ++start[n + 1];
        for (std::size_t k = 0; k < node_count; ++k) start[k + 1] += start[k];
        std::vector<neuron_index> order(net.neuron_count());
        std::vector<std::size_t> next(start.begin(), start.end() - 1);
        for (neuron_index i = 0; i < net.neuron_count(); ++i) order[next[x.nodes->node_of[i]]++] = i;
        for (std::size_t k = 0; k < node_count; ++k) {
            const std::string& id = x.nodes->node_ids[k];
            const std::size_t count = start[k + 1] - start[k];
            s += "  subgraph \"cluster_";
            append_dot_escaped(s, id);
            s += "\" {\n    label=\"";
            append_dot_escaped(s, id);
            s += " (" + std::to_string(count) + (count == 1 ? " neuron)" : " neurons)");
            s += "\"; style=\"rounded,filled\"; color=\"";
            s += strong_colour[k % strong_colour.size()];
            s += "\"; fillcolor=\"";
            s += pale_colour[k % pale_colour.size()];
            s += "\"; penwidth=2;\n";
            for (std::size_t p = start[k]; p < start[k + 1]; ++p) {
                neuron(order[p], "    ", strong_colour[k % strong_colour.size()]);
            }
            s += "  }\n";
        }
    } else {
        for (neuron_index i = 0; i < net.neuron_count(); ++i) {
            neuron(i, "  ", strong_colour[net.group_of[i] % strong_colour.size()]);
        }
    }

    double largest = 0;
    std::uint64_t seen = 0;
    for_each_synapse(net, rows, x.half_weights, [&](neuron_index, neuron_index, float weight, std::uint16_t, bool) {
        if (std::isfinite(weight)) largest = std::max(largest, std::fabs(static_cast<double>(weight)));
        return ++seen < shown;
    });
    std::uint64_t written = 0;
    for_each_synapse(net, rows, x.half_weights, [&](neuron_index from, neuron_index to, float weight, std::uint16_t delay, bool dense) {
        s += "  \"";
        name.append(s, from);
        s += "\" -> \"";
        name.append(s, to);
        s += "\" [label=\"";
        append_short(s, weight);
        if (delay != 1) {
            s += ", d=";
            append_integer(s, delay);
        }
        s += "\", penwidth=";
        const double width = largest > 0 && std::isfinite(weight) ? 0.5 + 2.5 * std::fabs(static_cast<double>(weight)) / largest : 1.0;
        append_short(s, width);
        if (weight < 0) s += ", color=\"#d62728\", fontcolor=\"#d62728\", arrowhead=tee";
        if (dense) s += ", style=dashed";
        s += "];\n";
        out.maybe_flush();
        return ++written < shown;
    });
    s += "}\n";
}

// JSON: {"network", "tick", "neurons": [{id, index, model, group, node, output, state,
// history}], "synapses": [{from, to, weight, delay[, dense]}], "nodes": [{id, neurons}]};
// node, output, state (an object of named variables) and history are null when unknown,
// and so are NaN and infinite values.
void write_json(sink& out, const expanded_network& net, const synapse_rows& rows, const extras& x) {
    std::string& s = out.buffer();
    s += "{\n\"network\": ";
    append_json_string(s, net.name);
    s += ",\n\"tick\": ";
    if (x.state) append_integer(s, x.state->tick);
    else s += "null";
    s += ",\n\"neurons\": [";

    const names name(net, append_json_escaped);
    auto quoted_name = [&](neuron_index i) {
        s += '"';
        name.append(s, i);
        s += '"';
    };
    std::vector<std::string> node_ids;
    if (x.nodes) {
        for (const auto& id : x.nodes->node_ids) {
            node_ids.emplace_back();
            append_json_string(node_ids.back(), id);
        }
    }
    for (neuron_index i = 0; i < net.neuron_count(); ++i) {
        s += i == 0 ? "\n" : ",\n";
        s += "{\"id\": ";
        quoted_name(i);
        s += ", \"index\": ";
        append_integer(s, i);
        s += ", \"model\": \"";
        s += to_string(net.params_of(i).model);
        s += "\", \"group\": \"";
        s += name.group(i);
        s += "\", \"node\": ";
        s += x.nodes ? node_ids[x.nodes->node_of[i]] : std::string("null");
        const neuron_state* v = x.state ? x.value_of[i] : nullptr;
        if (v) {
            s += ", \"output\": ";
            append_json_number(s, v->output);
            s += ", \"state\": {";
            const auto& vars = state_variable_names(net.params_of(i).model);
            for (std::size_t k = 0; k < vars.size(); ++k) {
                if (k > 0) s += ", ";
                append_json_string(s, vars[k]);
                s += ": ";
                append_json_number(s, v->state[k]);
            }
            s += "}, \"history\": [";
            for (std::size_t k = 0; k < v->history.size(); ++k) {
                if (k > 0) s += ", ";
                append_json_number(s, v->history[k]);
            }
            s += "]}";
        } else {
            s += ", \"output\": null, \"state\": null, \"history\": null}";
        }
        out.maybe_flush();
    }
    s += "\n],\n\"synapses\": [";
    bool first = true;
    for_each_synapse(net, rows, x.half_weights, [&](neuron_index from, neuron_index to, float weight, std::uint16_t delay, bool dense) {
        s += first ? "\n" : ",\n";
        first = false;
        s += "{\"from\": ";
        quoted_name(from);
        s += ", \"to\": ";
        quoted_name(to);
        s += ", \"weight\": ";
        if (std::isfinite(weight)) append_float(s, weight);
        else s += "null";
        s += ", \"delay\": ";
        append_integer(s, delay);
        if (dense) s += ", \"dense\": true";
        s += '}';
        out.maybe_flush();
        return true;
    });
    s += "\n],\n\"nodes\": [";
    if (x.nodes) {
        std::vector<std::uint64_t> count(node_ids.size(), 0);
        for (const std::uint32_t n : x.nodes->node_of) ++count[n];
        for (std::size_t k = 0; k < node_ids.size(); ++k) {
            s += k == 0 ? "\n" : ",\n";
            s += "{\"id\": " + node_ids[k] + ", \"neurons\": ";
            append_integer(s, count[k]);
            s += '}';
        }
        s += '\n';
    }
    s += "]\n}\n";
}

}  // namespace

const char* to_string(export_format f) {
    switch (f) {
        case export_format::graphml: return "graphml";
        case export_format::dot: return "dot";
        case export_format::json: return "json";
    }
    return "?";
}

export_format parse_export_format(std::string_view name) {
    for (const auto f : {export_format::graphml, export_format::dot, export_format::json}) {
        if (name == to_string(f)) return f;
    }
    throw usage_error("unknown export format '" + std::string(name) + "' (graphml, dot or json)");
}

void export_network(std::ostream& out, const network& compact, const expanded_network& net, const snapshot_state* state,
                    const node_assignment* nodes, const export_options& options) {
    extras x = check_extras(net, state, nodes);
    x.half_weights = options.half_weights;
    const synapse_rows rows(compact);
    sink s(out);
    switch (options.format) {
        case export_format::graphml: write_graphml(s, net, rows, x); break;
        case export_format::dot: write_dot(s, net, rows, x, options.max_dot_synapses); break;
        case export_format::json: write_json(s, net, rows, x); break;
    }
    s.flush();
    if (!out.flush()) throw io_error("export: the output could not be written");
}

}  // namespace dnnc::protocol
