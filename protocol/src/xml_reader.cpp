// Reading DNNC documents with Xerces-C++ SAX2, validating against the embedded schemas.
//
// Safety: the document is read from memory (never from a URL the document names); the
// grammar is preloaded and the parser may load no other; a DOCTYPE aborts the parse before
// its internal subset is read (no entity can be declared, so none can expand or point at a
// file); the entity resolver serves only the embedded schema files.
#include "dnnc/protocol/xml.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/csv.hpp"
#include "dnnc/protocol/rate.hpp"
#include "connection_list.hpp"
#include "text.hpp"

#include <xercesc/framework/MemBufInputSource.hpp>
#include <xercesc/internal/XMLScanner.hpp>
#include <xercesc/sax/Locator.hpp>
#include <xercesc/sax/SAXParseException.hpp>
#include <xercesc/sax2/Attributes.hpp>
#include <xercesc/sax2/DefaultHandler.hpp>
#include <xercesc/sax2/SAX2XMLReader.hpp>
#include <xercesc/sax2/XMLReaderFactory.hpp>
#include <xercesc/util/OutOfMemoryException.hpp>
#include <xercesc/util/PlatformUtils.hpp>
#include <xercesc/util/SecurityManager.hpp>
#include <xercesc/util/XMLException.hpp>
#include <xercesc/util/XMLUni.hpp>
#include <xercesc/validators/common/Grammar.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::schemas {
extern const std::string_view common_xsd;
extern const std::string_view network_xsd;
extern const std::string_view node_xsd;
extern const std::string_view signals_xsd;
}  // namespace dnnc::schemas

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes
namespace {

namespace xc = xercesc;

void ensure_xerces() {
    // Initialised once, never terminated: parsers are cached per thread until exit.
    static const bool initialised = [] {
        xc::XMLPlatformUtils::Initialize();
        return true;
    }();
    (void)initialised;
}

// UTF-16 (Xerces) to UTF-8.
void append_utf8(std::string& out, const XMLCh* s) {
    if (!s) return;
    for (; *s; ++s) {
        std::uint32_t c = *s;
        if (c >= 0xD800 && c <= 0xDBFF && s[1] >= 0xDC00 && s[1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (s[1] - 0xDC00);
            ++s;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
}

std::string utf8(const XMLCh* s) {
    std::string out;
    append_utf8(out, s);
    return out;
}

// Xerces quotes offending values whole; a 10 MB value would make a 10 MB message.
std::string shorten_quoted(const std::string& message) {
    constexpr std::size_t keep = 40;
    std::string out;
    std::size_t i = 0;
    while (i < message.size()) {
        const std::size_t open = message.find('\'', i);
        const std::size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
        if (close == std::string::npos) {
            // Xerces cuts long messages, sometimes inside a quoted value.
            if (open != std::string::npos && message.size() - open > 2 * keep)
                return out.append(message, i, open + 1 + keep - i).append("...");
            break;
        }
        out.append(message, i, open + 1 - i);
        const std::size_t length = close - open - 1;
        if (length > 2 * keep)
            out.append(message, open + 1, keep).append("... (" + std::to_string(length) + " characters)");
        else
            out.append(message, open + 1, length);
        out += '\'';
        i = close + 1;
    }
    return out.append(message, std::min(i, message.size()));
}

// Thrown out of the SAX callbacks to stop the parse at the first problem.
struct stop_parse {
    diagnostic problem;
};

// Turns Xerces' positions (just past an element's start tag, column in characters) into
// the position of the element's `<`, which is what a user looks for. `<` cannot occur
// inside attribute values, so the nearest one before the tag end starts the element.
class position_mapper {
public:
    explicit position_mapper(std::string_view text) : text_(text) {}

    std::pair<int, int> element_start(int line, int column) {
        const std::size_t end = offset_of(line, column);
        const std::size_t lt = end == 0 ? std::string_view::npos : text_.rfind('<', end - 1);
        if (lt == std::string_view::npos) return {line, column};
        // Step back from the tag's end to its `<`; both lie within one start tag.
        int newlines = 0;
        for (std::size_t i = lt; i < end; ++i)
            if (text_[i] == '\n') ++newlines;
        if (newlines == 0) return {cached_line_, cached_column_ - characters(lt, end)};
        const std::size_t line_begin = text_.rfind('\n', lt);
        const std::size_t from = line_begin == std::string_view::npos ? 0 : line_begin + 1;
        return {cached_line_ - newlines, 1 + characters(from, lt)};
    }

private:
    int characters(std::size_t from, std::size_t to) const {
        int n = 0;
        for (std::size_t i = from; i < to; ++i)
            if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++n;
        return n;
    }

    // Byte offset of (line, column), walking forward from the last answer when possible,
    // so a document on one long line costs linear time overall.
    std::size_t offset_of(int line, int column) {
        if (line < cached_line_ || (line == cached_line_ && column < cached_column_)) {
            cached_line_ = 1;
            cached_column_ = 1;
            cached_offset_ = 0;
        }
        std::size_t off = cached_offset_;
        int l = cached_line_, c = cached_column_;
        while (off < text_.size() && (l < line || (l == line && c < column))) {
            if (text_[off] == '\n') {
                ++l;
                c = 1;
            } else {
                ++c;
            }
            ++off;
            // Continuation bytes belong to the character just counted.
            while (off < text_.size() && (static_cast<unsigned char>(text_[off]) & 0xC0) == 0x80) ++off;
        }
        cached_line_ = l;
        cached_column_ = c;
        cached_offset_ = off;
        return off;
    }

    std::string_view text_;
    int cached_line_ = 1, cached_column_ = 1;
    std::size_t cached_offset_ = 0;
};

// Serves the embedded schema files (for xs:include) and nothing else.
class schema_resolver : public xc::EntityResolver {
public:
    xc::InputSource* resolveEntity(const XMLCh* /*public_id*/, const XMLCh* system_id) override {
        const std::string id = utf8(system_id);
        const std::string_view* text = nullptr;
        if (id == "common.xsd") text = &schemas::common_xsd;
        if (id == "network.xsd") text = &schemas::network_xsd;
        if (!text) throw stop_parse{{{}, "external entity '" + id + "' is not allowed"}};
        return new xc::MemBufInputSource(reinterpret_cast<const XMLByte*>(text->data()), text->size(),
                                         system_id, false);
    }
};

// The parts shared by the three document handlers: positions, errors, attributes.
class base_handler : public xc::DefaultHandler {
public:
    base_handler() = default;

    void begin(std::string_view text, const std::string& file) {
        file_ = file;
        positions_.emplace(text);
        depth_ = 0;
        children_.clear();
    }

    void setDocumentLocator(const xc::Locator* locator) override { locator_ = locator; }

    void startDTD(const XMLCh*, const XMLCh*, const XMLCh*) override {
        fail(here(), "DOCTYPE declarations are not allowed in DNNC documents");
    }

    void warning(const xc::SAXParseException&) override {}
    void error(const xc::SAXParseException& e) override { fail_at(e); }
    void fatalError(const xc::SAXParseException& e) override { fail_at(e); }

    [[noreturn]] void fail(source_location where, const std::string& message) const {
        throw stop_parse{{std::move(where), message}};
    }

    source_location here() const {
        source_location where{file_, 0, 0};
        if (locator_) {
            where.line = static_cast<int>(locator_->getLineNumber());
            where.column = static_cast<int>(locator_->getColumnNumber());
        }
        return where;
    }

protected:
    // Where the element being started begins.
    source_location element_location() {
        source_location where = here();
        if (where.line > 0 && positions_) {
            const auto [line, column] = positions_->element_start(where.line, where.column);
            where.line = line;
            where.column = column;
        }
        return where;
    }

    class attributes {
    public:
        attributes(const xc::Attributes& a, base_handler& h, source_location where)
            : attrs_(a), handler_(h), where_(std::move(where)) {}

        std::optional<std::string> get(const char* name) const {
            for (XMLSize_t i = 0, n = attrs_.getLength(); i < n; ++i) {
                if (equals(attrs_.getLocalName(i), name)) return utf8(attrs_.getValue(i));
            }
            return std::nullopt;
        }
        std::string text(const char* name, std::string fallback = {}) const {
            auto v = get(name);
            return v ? *v : fallback;
        }
        std::optional<double> real(const char* name) const {
            auto v = get(name);
            if (!v) return std::nullopt;
            auto d = text::to_double(*v);
            if (!d) handler_.fail(where_, std::string("attribute '") + name + "': not a number: '" + *v + "'");
            return d;
        }
        double real(const char* name, double fallback) const { return real(name).value_or(fallback); }
        // Bits per second (rate.hpp).
        std::optional<double> rate(const char* name) const {
            auto v = get(name);
            if (!v) return std::nullopt;
            auto r = parse_rate(*v);
            if (!r)
                handler_.fail(where_, std::string("attribute '") + name + "': not a rate: '" + *v +
                                          "' (a number and a unit: 100kbit, 10Mbit, 2.5Gbit, 50MB/s)");
            return r;
        }
        std::optional<std::int64_t> integer(const char* name) const {
            auto v = get(name);
            if (!v) return std::nullopt;
            auto i = text::to_int64(*v);
            if (!i) handler_.fail(where_, std::string("attribute '") + name + "': not an integer in range: '" + *v + "'");
            return i;
        }
        std::int64_t integer(const char* name, std::int64_t fallback) const {
            return integer(name).value_or(fallback);
        }
        std::int32_t int32(const char* name, std::int32_t fallback) const {
            const auto v = integer(name, fallback);
            if (v < INT32_MIN || v > INT32_MAX)
                handler_.fail(where_, std::string("attribute '") + name + "': out of range");
            return static_cast<std::int32_t>(v);
        }
        std::uint64_t uinteger(const char* name, std::uint64_t fallback) const {
            auto v = get(name);
            if (!v) return fallback;
            auto i = text::to_uint64(*v);
            if (!i) handler_.fail(where_, std::string("attribute '") + name + "': not an unsigned integer in range: '" + *v + "'");
            return *i;
        }
        bool boolean(const char* name, bool fallback) const {
            auto v = get(name);
            if (!v) return fallback;
            return *v == "true" || *v == "1";
        }
        std::vector<std::string> words(const char* name) const { return text::split_whitespace(text(name)); }
        // The names of the attributes given, in document order.
        std::vector<std::string> names() const {
            std::vector<std::string> out;
            for (XMLSize_t i = 0, n = attrs_.getLength(); i < n; ++i) out.push_back(utf8(attrs_.getLocalName(i)));
            return out;
        }
        std::vector<std::int64_t> integers(const char* name) const {
            std::vector<std::int64_t> values;
            for (const auto& w : words(name)) {
                auto i = text::to_int64(w);
                if (!i) handler_.fail(where_, std::string("attribute '") + name + "': not an integer: '" + w + "'");
                values.push_back(*i);
            }
            return values;
        }
        std::vector<double> reals(const char* name) const {
            std::vector<double> values;
            for (const auto& w : words(name)) {
                auto d = text::to_double(w);
                if (!d) handler_.fail(where_, std::string("attribute '") + name + "': not a number: '" + w + "'");
                values.push_back(*d);
            }
            return values;
        }
        const source_location& where() const { return where_; }
        [[noreturn]] void fail(const std::string& message) const { handler_.fail(where_, message); }

    private:
        static bool equals(const XMLCh* a, const char* b) {
            while (*a && *b && *a == static_cast<XMLCh>(*b)) ++a, ++b;
            return *a == 0 && *b == 0;
        }
        const xc::Attributes& attrs_;
        base_handler& handler_;
        source_location where_;
    };

    // Attributes that belong to some models only; naming one on another model is an error
    // at the element (see docs/document.md, "Model parameters").
    static bool not_nest(neuron_model m) { return !is_nest_model(m); }
    static bool is_izhikevich(neuron_model m) { return m == neuron_model::izhikevich; }
    static bool takes_a_and_b(neuron_model m) { return is_izhikevich(m) || is_adex(m); }
    static bool takes_membrane(neuron_model m) { return is_iaf(m) || is_hh(m); }
    static bool has_threshold(neuron_model m) { return is_nest_model(m) && !is_hh(m); }
    static void check_model_attributes(const attributes& a, neuron_model model) {
        struct owned {
            const char* name;
            bool (*applies)(neuron_model);
            const char* owner;
        };
        static const owned attributes_of[] = {
            {"threshold", not_nest, "the rate models and lif"},
            {"tau-m", not_nest, "lif (NEST's models take tau_m)"},
            {"v-rest", not_nest, "lif (NEST's models take E_L)"},
            {"v-reset", not_nest, "lif (NEST's models take V_reset)"},
            {"v-th", not_nest, "lif (NEST's models take V_th)"},
            {"refractory", not_nest, "lif (NEST's models take t_ref, in ms)"},
            {"tau-e", not_nest, "lif (iaf_psc_exp takes tau_syn_ex)"},
            {"tau-i", not_nest, "lif (iaf_psc_exp takes tau_syn_in)"},
            {"dt", not_nest, "lif (NEST's models step with the network's dt)"},
            {"v-init", is_spiking, "the spiking models"},
            {"v-init-max", is_spiking, "the spiking models"},
            {"v-init-std", is_spiking, "the spiking models"},
            {"C_m", takes_membrane, "iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta and NEST's conductance-based models"},
            {"tau_m", is_psc, "iaf_psc_exp, iaf_psc_alpha and iaf_psc_delta"},
            {"t_ref", takes_membrane, "iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta and NEST's conductance-based models"},
            {"E_L", takes_membrane, "iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta and NEST's conductance-based models"},
            {"V_th", has_threshold, "NEST's models but hh_cond_exp_traub (which takes V_T)"},
            {"V_reset", is_iaf, "iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta and NEST's conductance-based integrate-and-fire models"},
            {"I_e", is_nest_model, "NEST's models"},
            {"tau_syn_ex", has_synaptic_currents, "iaf_psc_exp, iaf_psc_alpha and NEST's conductance-based models"},
            {"tau_syn_in", has_synaptic_currents, "iaf_psc_exp, iaf_psc_alpha and NEST's conductance-based models"},
            {"g_L", has_conductances, "NEST's conductance-based models"},
            {"E_ex", has_conductances, "NEST's conductance-based models"},
            {"E_in", has_conductances, "NEST's conductance-based models"},
            {"a", takes_a_and_b, "izhikevich, aeif_cond_exp and aeif_cond_alpha"},
            {"b", takes_a_and_b, "izhikevich, aeif_cond_exp and aeif_cond_alpha"},
            {"Delta_T", is_adex, "aeif_cond_exp and aeif_cond_alpha"},
            {"tau_w", is_adex, "aeif_cond_exp and aeif_cond_alpha"},
            {"V_peak", is_adex, "aeif_cond_exp and aeif_cond_alpha"},
            {"g_Na", is_hh, "hh_cond_exp_traub"},
            {"g_K", is_hh, "hh_cond_exp_traub"},
            {"E_Na", is_hh, "hh_cond_exp_traub"},
            {"E_K", is_hh, "hh_cond_exp_traub"},
            {"V_T", is_hh, "hh_cond_exp_traub"},
            {"c", is_izhikevich, "izhikevich"},
            {"d", is_izhikevich, "izhikevich"},
            {"V_min", is_izhikevich, "izhikevich"},
            {"u-init", is_izhikevich, "izhikevich"},
            {"consistent_integration", is_izhikevich, "izhikevich"},
            {"tau_minus", is_spiking, "the spiking models (lif, iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta, izhikevich, iaf_cond_exp, iaf_cond_alpha, aeif_cond_exp, aeif_cond_alpha, hh_cond_exp_traub)"},
        };
        for (const auto& o : attributes_of)
            if (a.get(o.name) && !o.applies(model))
                a.fail(std::string("attribute '") + o.name + "' does not apply to model " + to_string(model) +
                       "; it belongs to " + o.owner);
    }

    static neuron_params read_params(const attributes& a) {
        neuron_params p;
        const std::string model = a.text("model", "linear");
        static const std::pair<const char*, neuron_model> models[] = {
            {"linear", neuron_model::linear}, {"step", neuron_model::step},
            {"sigmoid", neuron_model::sigmoid}, {"tanh", neuron_model::tanh},
            {"relu", neuron_model::relu}, {"lif", neuron_model::lif},
            {"iaf_psc_exp", neuron_model::iaf_psc_exp}, {"iaf_psc_delta", neuron_model::iaf_psc_delta},
            {"iaf_psc_alpha", neuron_model::iaf_psc_alpha}, {"izhikevich", neuron_model::izhikevich},
            {"iaf_cond_exp", neuron_model::iaf_cond_exp}, {"iaf_cond_alpha", neuron_model::iaf_cond_alpha},
            {"aeif_cond_exp", neuron_model::aeif_cond_exp}, {"aeif_cond_alpha", neuron_model::aeif_cond_alpha},
            {"hh_cond_exp_traub", neuron_model::hh_cond_exp_traub},
            {"spike-source", neuron_model::spike_source}};
        for (const auto& [name, value] : models)
            if (model == name) p.model = value;
        check_model_attributes(a, p.model);
        p.bias = a.real("bias", p.bias);
        p.threshold = a.real("threshold", p.threshold);
        p.tau_m = a.real("tau-m", p.tau_m);
        p.v_rest = a.real("v-rest", p.v_rest);
        p.v_reset = a.real("v-reset", p.v_reset);
        p.v_th = a.real("v-th", p.v_th);
        p.refractory = a.int32("refractory", p.refractory);
        p.tau_e = a.real("tau-e", p.tau_e);
        p.tau_i = a.real("tau-i", p.tau_i);
        p.dt = a.real("dt", p.dt);
        iaf_params& n = p.iaf;
        n = iaf_defaults(p.model);
        n.c_m = a.real("C_m", n.c_m);
        n.tau_m = a.real("tau_m", n.tau_m);
        n.tau_syn_ex = a.real("tau_syn_ex", n.tau_syn_ex);
        n.tau_syn_in = a.real("tau_syn_in", n.tau_syn_in);
        n.t_ref = a.real("t_ref", n.t_ref);
        n.e_l = a.real("E_L", n.e_l);
        izhikevich_params& z = p.izhikevich;
        if (p.model == neuron_model::izhikevich) z.v_th = a.real("V_th", z.v_th);
        else n.v_th = a.real("V_th", n.v_th);
        adex_params& x = p.adex;
        if (is_adex(p.model)) {
            x.a = a.real("a", x.a);
            x.b = a.real("b", x.b);
        } else {
            z.a = a.real("a", z.a);
            z.b = a.real("b", z.b);
        }
        x.delta_t = a.real("Delta_T", x.delta_t);
        x.tau_w = a.real("tau_w", x.tau_w);
        x.v_peak = a.real("V_peak", x.v_peak);
        z.c = a.real("c", z.c);
        z.d = a.real("d", z.d);
        z.v_min = a.real("V_min", z.v_min);
        z.consistent_integration = a.boolean("consistent_integration", z.consistent_integration);
        n.v_reset = a.real("V_reset", n.v_reset);
        n.i_e = a.real("I_e", n.i_e);
        n.g_l = a.real("g_L", n.g_l);
        n.e_ex = a.real("E_ex", n.e_ex);
        n.e_in = a.real("E_in", n.e_in);
        hh_params& h = p.hh;
        h.g_na = a.real("g_Na", h.g_na);
        h.g_k = a.real("g_K", h.g_k);
        h.e_na = a.real("E_Na", h.e_na);
        h.e_k = a.real("E_K", h.e_k);
        h.v_t = a.real("V_T", h.v_t);
        // One value; a population's list of one per member is read into population::v_inits.
        if (const auto v_init = a.reals("v-init"); v_init.size() == 1) p.v_init = v_init.front();
        p.v_init_max = a.real("v-init-max");
        p.v_init_std = a.real("v-init-std");
        p.u_init = a.real("u-init");
        p.tau_minus = a.real("tau_minus", p.tau_minus);
        return p;
    }

    static run_settings read_run(const attributes& a) {
        run_settings r;
        r.sync = a.text("sync", "lockstep") == "window" ? sync_mode::window : sync_mode::lockstep;
        r.send = a.text("send", "always") == "nonzero" ? send_mode::nonzero : send_mode::always;
        const auto compress = a.text("compress", "auto");
        r.compress = compress == "always" ? compress_mode::always : compress == "never" ? compress_mode::never : compress_mode::auto_;
        r.clock = a.text("clock");
        r.tick_period_ms = a.real("tick-period", r.tick_period_ms);
        r.checkpoint_every = a.integer("checkpoint-every", r.checkpoint_every);
        r.checkpoint_keep = a.int32("checkpoint-keep", r.checkpoint_keep);
        r.fan_out = a.int32("fan-out", r.fan_out);
        r.batch = a.int32("batch", r.batch);
        r.half_weights = a.text("weight-precision", "single") == "half";
        r.probes = a.int32("probes", r.probes);
        r.throughput_probes = a.int32("throughput-probes", r.throughput_probes);
        r.window_factor = a.real("window-factor", r.window_factor);
        r.window_margin_ms = a.real("window-margin", r.window_margin_ms);
        r.heartbeat_timeout_ms = a.real("heartbeat-timeout", r.heartbeat_timeout_ms);
        r.rebalance_auto = a.text("rebalance", "off") == "auto";
        r.rebalance_threshold = a.real("rebalance-threshold", r.rebalance_threshold);
        r.rebalance_after_ms = a.real("rebalance-after", r.rebalance_after_ms);
        r.rebalance_pause_share = a.real("rebalance-pause-share", r.rebalance_pause_share);
        r.where = a.where();
        return r;
    }

    // Whether the projection read last wrote its weight and its delay as attributes: then
    // a <weight> or <delay> child contradicts it.
    struct attributes_given {
        bool weight = false, delay = false;
        // The list projection whose <connections> child is open, and where that began.
        projection* listing = nullptr;
        source_location listing_at;
    };

    // The text of an open <connections> element (base64: ASCII), the only element with text.
    void characters(const XMLCh* const chars, const XMLSize_t length) override {
        if (!collecting_) return;
        const std::size_t at = text_.size();
        text_.resize(at + length);
        XMLCh seen = 0;
        for (XMLSize_t i = 0; i < length; ++i) {
            seen |= chars[i];
            text_[at + i] = static_cast<char>(chars[i]);
        }
        if (seen > 127) fail(here(), "<connections>: not base64 text");
    }
    // Starts collecting text when a <connections> element opened.
    void collect_connections(const attributes_given& given) { collecting_ = given.listing != nullptr; }
    // At </connections>: the collected text becomes the projection's list.
    void end_connections(const std::string& n, attributes_given& given) {
        if (n != "connections" || !given.listing) return;
        given.listing->connections = decode_connections(text_, given.listing_at);
        given.listing = nullptr;
        collecting_ = false;
        std::string().swap(text_);
    }

    // delay-ms, refused next to delay.
    static std::optional<double> read_delay_ms(const attributes& a) {
        const auto ms = a.real("delay-ms");
        if (ms && a.get("delay")) a.fail("delay given both in ticks (delay) and in ms (delay-ms)");
        return ms;
    }

    // The parameters of a <neuron> or <population>: spike sources have an element of their own.
    static neuron_params read_network_params(const attributes& a) {
        auto p = read_params(a);
        if (p.model == neuron_model::spike_source)
            a.fail("model 'spike-source' is not a neuron model; write <spike-source id=\"...\" size=\"...\">");
        return p;
    }

    // A listed spike at t_ms of member `index` of spike source p, as a tick of dt.
    static spike_time spike_of(double t_ms, std::int64_t index, const population& p, double dt, const source_location& where) {
        if (const auto why = spike_time_problem(t_ms, index, p.size, dt)) throw config_error(where, "spike source '" + p.id + "': " + *why);
        return {index, ticks_of_ms(t_ms, dt)};
    }

    // An element inside <network>.
    static void read_network_child(network& net, const std::string& n, const attributes& a, attributes_given& given) {
        if (n == "neuron") {
            if (a.get("v-init") && a.reals("v-init").size() != 1)
                throw config_error(a.where(), "neuron '" + a.text("id") + "': v-init takes one value (mV)");
            net.neurons.push_back({a.text("id"), read_network_params(a), a.where()});
        } else if (n == "population") {
            population p;
            p.id = a.text("id");
            p.size = a.integer("size", 0);
            p.seed = a.uinteger("seed", 0);
            p.params = read_network_params(a);
            if (a.get("v-init") && !p.params.v_init) p.v_inits = a.reals("v-init");
            p.where = a.where();
            p.tau_ca = a.real("tau_Ca", p.tau_ca);
            p.beta_ca = a.real("beta_Ca", p.beta_ca);
            net.populations.push_back(std::move(p));
        } else if (n == "synaptic-element") {
            // A child of the population just read (the schema allows it nowhere else); the
            // schema admits only growth_curve="gaussian", the one growth_curve holds.
            growth_curve c;
            c.growth_rate = a.real("growth_rate", c.growth_rate);
            c.eta = a.real("eta", c.eta);
            c.eps = a.real("eps", c.eps);
            c.continuous = a.boolean("continuous", c.continuous);
            c.tau_vacant = a.real("tau_vacant", c.tau_vacant);
            c.z = a.real("z", c.z);
            if (net.populations.empty()) a.fail("<synaptic-element> belongs inside a <population>");
            net.populations.back().synaptic_elements.push_back({a.text("name"), c, a.where()});
        } else if (n == "structural-plasticity") {
            if (net.structural)
                a.fail("a network has at most one <structural-plasticity> (the first is at line " +
                       std::to_string(net.structural->where.line) + ")");
            structural_plasticity sp;
            sp.update_interval_ms = a.real("structural_plasticity_update_interval", sp.update_interval_ms);
            sp.seed = a.uinteger("seed", 0);
            sp.where = a.where();
            net.structural = std::move(sp);
        } else if (n == "structural-synapse") {
            // A child of the <structural-plasticity> just read.
            if (!net.structural) a.fail("<structural-synapse> belongs inside a <structural-plasticity>");
            structural_synapse s;
            s.id = a.text("id");
            s.pre_element = a.text("pre_synaptic_element");
            s.post_element = a.text("post_synaptic_element");
            s.synapse_model = a.text("synapse-model");
            s.weight = a.real("weight", s.weight);
            s.delay = a.integer("delay", s.delay);
            s.delay_ms = read_delay_ms(a);
            s.where = a.where();
            net.structural->synapses.push_back(std::move(s));
        } else if (n == "spike-source") {
            population p;
            p.id = a.text("id");
            p.size = a.integer("size", 0);
            p.params.model = neuron_model::spike_source;
            p.spike_file = a.text("file");
            if (a.get("rate")) p.rates = a.reals("rate");
            p.seed = a.uinteger("seed", 0);
            p.start = a.real("start", 0.0);
            p.stop = a.real("stop");
            p.where = a.where();
            net.populations.push_back(std::move(p));
        } else if (n == "spike") {
            // A child of the spike source just read (the schema allows it nowhere else, but an
            // invalid document reaches here before the schema's verdict).
            if (net.populations.empty()) a.fail("<spike> belongs inside a <spike-source>");
            population& p = net.populations.back();
            if (!p.spike_file.empty()) a.fail("spike source '" + p.id + "' lists spikes both in a file and as <spike> children");
            p.spikes.push_back(spike_of(a.real("t-ms", 0.0), a.integer("index", 0), p, net.dt, a.where()));
        } else if (n == "synapse") {
            net.connection_order.push_back({connection_ref::type::synapse, net.synapses.size()});
            net.synapses.push_back({a.text("from"), a.text("to"), a.real("weight", 1.0), a.integer("delay", 1), a.where(),
                                    read_delay_ms(a), a.text("synapse-model")});
        } else if (n == "synapse-model") {
            synapse_model m{a.text("id"), a.text("model"), {}, a.where()};
            for (const auto& name : a.names())
                if (name != "id" && name != "model") m.params.emplace_back(name, *a.real(name.c_str()));
            net.synapse_models.push_back(std::move(m));
        } else if (n == "projection") {
            projection p;
            p.id = a.text("id");
            p.from = a.text("from");
            p.to = a.text("to");
            const std::string kind = a.text("kind");
            p.kind = kind == "all"          ? projection_kind::all
                     : kind == "one-to-one" ? projection_kind::one_to_one
                     : kind == "random"     ? projection_kind::random
                     : kind == "fixed-indegree" ? projection_kind::fixed_indegree
                     : kind == "fixed-outdegree" ? projection_kind::fixed_outdegree
                     : kind == "fixed-total-number" ? projection_kind::fixed_total_number
                     : kind == "list"               ? projection_kind::list
                                                    : projection_kind::dense;
            p.weight = a.real("weight", 1.0);
            p.delay = a.integer("delay", 1);
            p.delay_ms = read_delay_ms(a);
            p.p = a.real("p");
            p.seed = a.uinteger("seed", 0);
            p.autapses = a.boolean("autapses", true);
            p.indegree = a.integer("indegree");
            p.multapses = a.boolean("multapses", true);
            p.outdegree = a.integer("outdegree");
            p.total = a.integer("n");
            const std::string init = a.text("init");
            p.init = init == "normal"    ? dense_init::normal
                     : init == "uniform" ? dense_init::uniform
                     : init == "zeros"   ? dense_init::zeros
                                         : dense_init::none;
            p.scale = a.real("scale");
            p.weights_file = a.text("weights");
            p.rows = a.integer("rows");
            p.cols = a.integer("cols");
            p.split_rows = a.text("split", "none") == "rows";
            p.connections_file = a.text("connections");
            p.where = a.where();
            p.synapse_model = a.text("synapse-model");
            net.connection_order.push_back({connection_ref::type::projection, net.projections.size()});
            net.projections.push_back(std::move(p));
            given.weight = a.get("weight").has_value();
            given.delay = a.get("delay").has_value() || a.get("delay-ms").has_value();
        } else if (n == "connections") {
            // A child of the projection just read: its text is collected until its end tag.
            if (net.projections.empty()) a.fail("<connections> belongs inside a <projection>");
            projection& p = net.projections.back();
            if (!p.connections_file.empty())
                a.fail("projection from '" + p.from + "' to '" + p.to +
                       "': connections given both as a file and as a <connections> child");
            given.listing = &p;
            given.listing_at = a.where();
        } else if (n == "weight" || n == "delay") {
            // A child of the projection just read (the schema allows them nowhere else, but an
            // invalid document reaches here before the schema's verdict).
            if (net.projections.empty()) a.fail("<" + n + "> belongs inside a <projection>");
            projection& p = net.projections.back();
            if (n == "weight" ? given.weight : given.delay)
                a.fail(std::string("projection from '") + p.from + "' to '" + p.to + "': " + n +
                       " given both as an attribute and as a <" + n + "> child");
            distribution d;
            const std::string kind = a.text("distribution");
            d.kind = kind == "normal"      ? distribution_kind::normal
                     : kind == "uniform"   ? distribution_kind::uniform
                     : kind == "lognormal" ? distribution_kind::lognormal
                                           : distribution_kind::constant;
            d.value = a.real("value");
            d.mean = a.real("mean");
            d.std = a.real("std");
            d.mu = a.real("mu");
            d.sigma = a.real("sigma");
            d.min = a.real("min");
            d.max = a.real("max");
            d.where = a.where();
            (n == "weight" ? p.weight_distribution : p.delay_distribution) = std::move(d);
        } else if (n == "input" || n == "output") {
            auto& ports = n == "input" ? net.inputs : net.outputs;
            ports.push_back({a.text("id"), a.words("neurons"), a.where()});
        } else if (n == "poisson") {
            net.poisson.push_back({a.words("to"), a.real("rate", 0.0), a.real("weight", 1.0), a.uinteger("seed", 0), a.where()});
        } else if (n == "dc" || n == "ac" || n == "noise") {
            current_generator g;
            g.shape = n == "dc" ? current_shape::dc : n == "ac" ? current_shape::ac : current_shape::noise;
            g.to = a.words("to");
            g.amplitude = a.real("amplitude", 0.0);
            g.offset = a.real("offset", 0.0);
            g.frequency = a.real("frequency", 0.0);
            g.phase = a.real("phase", 0.0);
            g.mean = a.real("mean", 0.0);
            g.std = a.real("std", 0.0);
            g.interval_ms = a.real("dt-ms");
            g.seed = a.uinteger("seed", 0);
            g.start = a.real("start", 0.0);
            g.stop = a.real("stop");
            g.where = a.where();
            net.currents.push_back(std::move(g));
        } else if (n == "record") {
            recording r;
            if (a.get("neurons")) r.neurons = a.words("neurons");
            r.where = a.where();
            r.variables = a.words("variables");
            r.interval_ms = a.real("interval-ms");
            net.records.push_back(std::move(r));
        } else if (n == "grow") {
            net.grows.push_back({a.text("population"), a.integer("add", 0), a.real("at-ms", 0.0), a.boolean("applied", false), a.where()});
        }
    }

    void startElement(const XMLCh* const, const XMLCh* const local_name, const XMLCh* const,
                      const xc::Attributes& attrs) override {
        name_.clear();
        append_utf8(name_, local_name);
        attributes a(attrs, *this, element_location());
        if (!children_.empty()) children_.back()[name_] = a.where();
        children_.emplace_back();
        ++depth_;
        start(name_, depth_, a);
    }

    void endElement(const XMLCh* const, const XMLCh* const local_name, const XMLCh* const) override {
        name_.clear();
        append_utf8(name_, local_name);
        end(name_, depth_);
        --depth_;
        children_.pop_back();
    }

    // Called for every element with its depth (the root is 1).
    virtual void start(const std::string& name, int depth, const attributes& a) = 0;
    virtual void end(const std::string& /*name*/, int /*depth*/) {}

    std::string file_;

private:
    void fail_at(const xc::SAXParseException& e) {
        source_location where{file_, static_cast<int>(e.getLineNumber()),
                              static_cast<int>(e.getColumnNumber())};
        const std::string raw = utf8(e.getMessage());
        std::string message = shorten_quoted(raw);
        if (depth_ == 0 && message.rfind("no declaration found for element", 0) == 0)
            message += " (the root element must be in the DNNC namespace: xmlns=\"urn:dnnc:1\")";
        // A content-model error comes at the parent's end tag; the element at fault is the
        // last child of that name.
        const std::string misplaced = "element '";
        if (raw.rfind(misplaced, 0) == 0 && raw.find("' is not allowed for content model") != std::string::npos &&
            !children_.empty()) {
            const auto name = raw.substr(misplaced.size(), raw.find('\'', misplaced.size()) - misplaced.size());
            if (const auto child = children_.back().find(name); child != children_.back().end()) where = child->second;
        }
        fail(where, message);
    }

    const xc::Locator* locator_ = nullptr;
    std::optional<position_mapper> positions_;
    bool collecting_ = false;
    std::string text_;
    std::string name_;
    int depth_ = 0;
    // Per open element, where its last child of each name began.
    std::vector<std::map<std::string, source_location>> children_;
};

class document_handler final : public base_handler {
public:
    document result;

private:
    enum class section { none, network, cluster, state };

    void start(const std::string& n, int depth, const attributes& a) override {
        if (depth == 1) {
            result = document{};
            result.file = file_;
            return;
        }
        if (depth == 2) {
            if (n == "network") {
                result.net.emplace();
                result.net->name = a.text("name");
                result.net->dt = a.real("dt", 0.1);
                result.net->where = a.where();
                section_ = section::network;
            } else if (n == "cluster") {
                result.clu.emplace();
                result.clu->lead = a.text("lead");
                result.clu->where = a.where();
                section_ = section::cluster;
            } else if (n == "run") {
                result.run = read_run(a);
            } else if (n == "state") {
                result.state.emplace();
                result.state->tick = a.integer("tick", 0);
                result.state->where = a.where();
                section_ = section::state;
            }
            return;
        }
        switch (section_) {
        case section::network:
            read_network_child(*result.net, n, a, given_);
            collect_connections(given_);
            break;
        case section::cluster: start_cluster_child(n, a); break;
        case section::state: start_state_child(n, a); break;
        case section::none: break;
        }
    }

    void end(const std::string& n, int depth) override {
        end_connections(n, given_);
        if (depth == 2) section_ = section::none;
    }

    void start_cluster_child(const std::string& n, const attributes& a) {
        cluster& clu = *result.clu;
        if (n == "node") {
            clu.nodes.push_back({a.text("id"), a.text("host", "127.0.0.1"), a.int32("port", 0),
                                 a.real("capacity", 1.0), a.where()});
        } else if (n == "link") {
            clu.links.push_back({a.text("from"), a.text("to"), a.real("emulate-delay", 0.0), a.rate("bandwidth"), a.where()});
        }
    }

    void start_state_child(const std::string& n, const attributes& a) {
        if (n == "neuron") {
            result.state->neurons.push_back(
                {a.text("id"), a.real("output", 0.0), a.reals("state"), a.reals("history"), a.where(), {}, a.reals("synapses"),
                 a.reals("growth")});
        } else if (n == "trace" && !result.state->neurons.empty()) {
            result.state->neurons.back().traces.push_back(
                {a.real("tau", 0.0), a.boolean("post", false), a.integers("ticks"), a.reals("values")});
        }
    }

    section section_ = section::none;
    attributes_given given_;
};

class node_config_handler final : public base_handler {
public:
    node_config result;

private:
    void start(const std::string& n, int depth, const attributes& a) override {
        if (depth == 1 && n != "node-config") fail(a.where(), "expected a <node-config>, not <" + n + ">");
        if (n == "node-config") {
            node_config c;
            c.node = a.text("node");
            c.network = a.text("network");
            c.lead = a.text("lead");
            c.lead_host = a.text("lead-host", "127.0.0.1");
            c.lead_port = a.int32("lead-port", 0);
            c.lead_via = a.text("lead-via", "");
            c.host = a.text("host", "127.0.0.1");
            c.port = a.int32("port", 0);
            c.history = a.int32("history", 1);
            c.epoch = a.uinteger("epoch", 0);
            open_.push_back(std::move(c));
            return;
        }
        node_config& c = open_.back();
        // Xerces checks a parent's content model only at its end tag, so until then a
        // <node-config> may open inside a <network>, and its own children arrive here
        // while share_depth_ still belongs to the outer config, whose share it lacks. The
        // document is refused at that end tag; meanwhile nothing may touch a share absent.
        if (share_depth_ != 0 && depth > share_depth_ && c.share) {
            read_network_child(*c.share, n, a, given_);
            collect_connections(given_);
        } else if (n == "run") {
            c.run = read_run(a);
        } else if (n == "peer") {
            c.peers.push_back({a.text("id"), a.text("host", "127.0.0.1"), a.int32("port", 0), a.words("via"),
                               a.real("latency", 0.0), a.real("emulate-delay", 0.0), a.integers("sends"),
                               a.integers("receives"), a.boolean("compress", false)});
        } else if (n == "neuron") {
            c.neurons.push_back({a.text("id"), a.integer("index", 0), a.real("window", 0.0), a.uinteger("seed", 0),
                                 a.boolean("report", false), a.boolean("record", false), read_params(a)});
        } else if (n == "network") {
            c.share.emplace();
            c.share->name = a.text("name");
            c.share->dt = a.real("dt", 0.1);
            c.share->where = a.where();
            share_depth_ = depth;
        } else if (n == "dense") {
            dense_rows d{a.integers("sources"), a.integers("targets"), a.integer("delay", 1), {}, a.integers("rows"),
                         a.integer("projection-rows", 0)};
            for (double w : a.reals("weights")) d.weights.push_back(static_cast<float>(w));
            if (d.weights.size() != d.sources.size() * d.targets.size())
                fail(a.where(), "dense rows: " + std::to_string(d.weights.size()) + " weights for " +
                                    std::to_string(d.targets.size()) + " x " + std::to_string(d.sources.size()));
            if (!d.rows.empty() && d.rows.size() != d.targets.size())
                fail(a.where(), "dense rows: " + std::to_string(d.rows.size()) + " row indices for " +
                                    std::to_string(d.targets.size()) + " targets");
            c.dense.push_back(std::move(d));
        }
    }

    void end(const std::string& n, int depth) override {
        end_connections(n, given_);
        if (n == "network" && depth == share_depth_) share_depth_ = 0;
        if (n != "node-config") return;
        node_config done = std::move(open_.back());
        open_.pop_back();
        if (open_.empty())
            result = std::move(done);
        else
            open_.back().children.push_back(std::move(done));
    }

    // The configs whose elements are open, outermost first.
    std::vector<node_config> open_;
    int share_depth_ = 0;  // depth of the open <network>, 0 outside one
    attributes_given given_;
};

class signals_handler final : public base_handler {
public:
    signal_packet result;

private:
    void start(const std::string& n, int, const attributes& a) override {
        if (n == "signals") {
            result = signal_packet{};
            result.from = a.text("from");
            result.to = a.text("to");
            result.tick = a.integer("tick", 0);
            result.complete = a.boolean("complete", true);
        } else if (n == "s") {
            result.signals.push_back({a.text("n"), a.real("v", 0.0)});
        }
    }
};

// A validating reader with one schema's grammar loaded, reused for every parse of that
// kind on this thread (loading the grammar costs more than parsing a small document).
class validating_reader {
public:
    validating_reader(std::string_view schema, const char* schema_name) {
        ensure_xerces();
        reader_.reset(xc::XMLReaderFactory::createXMLReader());
        auto& r = *reader_;
        r.setFeature(xc::XMLUni::fgSAX2CoreNameSpaces, true);
        r.setFeature(xc::XMLUni::fgSAX2CoreValidation, true);
        r.setFeature(xc::XMLUni::fgXercesDynamic, false);
        r.setFeature(xc::XMLUni::fgXercesSchema, true);
        r.setFeature(xc::XMLUni::fgXercesSchemaFullChecking, false);
        r.setFeature(xc::XMLUni::fgXercesLoadExternalDTD, false);
        r.setFeature(xc::XMLUni::fgXercesLoadSchema, false);
        r.setFeature(xc::XMLUni::fgXercesUseCachedGrammarInParse, true);
        r.setFeature(xc::XMLUni::fgXercesCacheGrammarFromParse, false);
        r.setFeature(xc::XMLUni::fgXercesValidationErrorAsFatal, true);
        r.setFeature(xc::XMLUni::fgXercesDisableDefaultEntityResolution, true);
        r.setFeature(xc::XMLUni::fgXercesContinueAfterFatalError, false);
        security_.setEntityExpansionLimit(16);
        r.setProperty(xc::XMLUni::fgXercesSecurityManager, &security_);
        r.setEntityResolver(&resolver_);

        grammar_errors_.begin(schema, schema_name);
        r.setErrorHandler(&grammar_errors_);
        XMLCh* id = xc::XMLString::transcode(schema_name);
        xc::MemBufInputSource source(reinterpret_cast<const XMLByte*>(schema.data()), schema.size(), id);
        xc::XMLString::release(&id);
        try {
            if (!r.loadGrammar(source, xc::Grammar::SchemaGrammarType, true))
                throw error(std::string("cannot load the built-in schema ") + schema_name);
        } catch (const stop_parse& stop) {
            throw error("built-in schema " + format_located(stop.problem.where, stop.problem.message));
        }
    }

    void parse(std::string_view xml, const std::string& file, base_handler& handler) {
        if (xml.size() > max_document_bytes)
            throw config_error({file, 0, 0}, "document is larger than " +
                                                  std::to_string(max_document_bytes >> 20) + " MiB");
        handler.begin(xml, file);
        reader_->setContentHandler(&handler);
        reader_->setErrorHandler(&handler);
        reader_->setLexicalHandler(&handler);
        xc::MemBufInputSource source(reinterpret_cast<const XMLByte*>(xml.data()), xml.size(), "document");
        try {
            reader_->parse(source);
        } catch (const stop_parse& stop) {
            throw config_error(stop.problem.where, stop.problem.message);
        } catch (const xc::SAXParseException& e) {
            throw config_error({file, static_cast<int>(e.getLineNumber()), static_cast<int>(e.getColumnNumber())},
                               utf8(e.getMessage()));
        } catch (const xc::XMLException& e) {
            throw config_error(handler.here(), utf8(e.getMessage()));
        } catch (const xc::OutOfMemoryException&) {
            throw config_error(handler.here(), "document too large to parse");
        }
    }

private:
    struct grammar_error_handler final : base_handler {
        void start(const std::string&, int, const attributes&) override {}
    };
    std::unique_ptr<xc::SAX2XMLReader> reader_;
    xc::SecurityManager security_;
    schema_resolver resolver_;
    grammar_error_handler grammar_errors_;
};

validating_reader& reader_for(std::string_view schema, const char* name) {
    // One reader per schema per thread; Xerces readers are not thread-safe.
    thread_local std::vector<std::pair<const char*, std::unique_ptr<validating_reader>>> readers;
    for (auto& [n, r] : readers)
        if (n == name) return *r;
    readers.emplace_back(name, std::make_unique<validating_reader>(schema, name));
    return *readers.back().second;
}

}  // namespace

void check_file_access(const network& net, const std::string& document_file, const file_access& access) {
    if (access.any) return;
    namespace fs = std::filesystem;
    // Links and `..` resolved; a path that cannot be resolved is inside no folder.
    auto resolved = [](const fs::path& p) {
        std::error_code failed;
        fs::path r = fs::weakly_canonical(fs::absolute(p, failed), failed);
        if (!r.has_filename()) r = r.parent_path();  // "dir/" as "dir"
        return failed ? fs::path() : r;
    };
    std::vector<fs::path> folders;
    std::string listed;
    for (const auto& f : access.folders) {
        folders.push_back(resolved(f));
        listed += (listed.empty() ? "" : ", ") + folders.back().string();
    }
    auto check = [&](const std::string& named, const source_location& where, const std::string& what) {
        if (named.empty()) return;
        const fs::path path = resolved(file_named_by(document_file, named));
        for (const auto& folder : folders)
            if (!path.empty() && !folder.empty() &&
                std::mismatch(folder.begin(), folder.end(), path.begin(), path.end()).first == folder.end())
                return;
        throw config_error(where, what + ": the file '" + named + "' is not read here: only files inside the data folders (" +
                                      (listed.empty() ? std::string("none") : listed) + ") are");
    };
    for (const auto& p : net.populations) check(p.spike_file, p.where, "spike source '" + p.id + "'");
    for (const auto& p : net.projections) {
        check(p.weights_file, p.where, "dense projection from '" + p.from + "' to '" + p.to + "'");
        check(p.connections_file, p.where, "list projection from '" + p.from + "' to '" + p.to + "'");
    }
}

document parse_document(std::string_view xml, const std::string& file, const file_access& access) {
    document_handler handler;
    reader_for(schemas::network_xsd, "network.xsd").parse(xml, file, handler);
    if (handler.result.net) {
        check_file_access(*handler.result.net, file, access);
        load_spike_files(*handler.result.net, file);
        load_connection_files(*handler.result.net, file);
    }
    return std::move(handler.result);
}

void load_spike_files(network& net, const std::string& document_file) {
    for (auto& p : net.populations) {
        if (!p.spike_file.empty()) {
            const auto path = file_named_by(document_file, p.spike_file);
            if (!std::filesystem::is_regular_file(path))
                throw config_error(p.where, "spike source '" + p.id + "': cannot read the file '" + path.string() + "'");
            p.spikes = read_spike_times_csv(path.string(), p.size, net.dt);
        }
        sort_spikes(p.spikes);
    }
}

void load_connection_files(network& net, const std::string& document_file) {
    for (auto& p : net.projections)
        if (p.kind == projection_kind::list && !p.connections_file.empty())
            p.connections = read_connections_file(file_named_by(document_file, p.connections_file).string(), net.dt, p.where);
}

node_config parse_node_config(std::string_view xml, const std::string& file) {
    node_config_handler handler;
    reader_for(schemas::node_xsd, "node.xsd").parse(xml, file, handler);
    return std::move(handler.result);
}

signal_packet parse_signal_packet(std::string_view xml, const std::string& file) {
    signals_handler handler;
    reader_for(schemas::signals_xsd, "signals.xsd").parse(xml, file, handler);
    return std::move(handler.result);
}

document load_document(const std::string& path) {
    const std::string text = read_file(path, max_document_bytes);
    if (text.empty()) throw config_error({path, 1, 1}, "the file is empty");
    document doc = parse_document(text, path);
    check_document(doc);
    return doc;
}

}  // namespace dnnc::protocol
