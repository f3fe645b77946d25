#include "dnnc/model/check.hpp"

#include "dnnc/model/resolve.hpp"
#include "dnnc/model/synapse_models.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace dnnc::model {
namespace {

constexpr std::int64_t max_delay = 65535;
constexpr std::uint64_t max_neurons = 100'000'000;
constexpr double max_synapses = 2e9;

// Collects problems in document order and throws them together.
class problems {
public:
    void add(const source_location& where, std::string message) {
        list_.push_back({where, std::move(message)});
    }
    void throw_if_any() {
        if (list_.empty()) return;
        std::stable_sort(list_.begin(), list_.end(), [](const diagnostic& a, const diagnostic& b) {
            return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
        });
        throw config_error(std::move(list_));
    }

private:
    std::vector<diagnostic> list_;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }
// The neuron or population a reference (`a`, `P`, `P[3]`, `P[2:5]`) names.
std::string_view group_of(const std::string& reference) { return std::string_view(reference).substr(0, reference.find('[')); }
std::string text_of(double v) {
    std::ostringstream text;
    text << v;
    return text.str();
}

// Ids unique among their kind: each repeat is a problem, located at the repeat.
class id_register {
public:
    explicit id_register(problems& out) : out_(out) {}
    // Whether `id` is new; `kind` names its kind in the message ("", "input ", ...).
    bool add(const std::string& id, const source_location& where, const std::string& kind) {
        const auto [it, fresh] = seen_.emplace(id, &where);
        if (!fresh)
            out_.add(where, "duplicate " + kind + "id " + quote(id) + " (first defined at line " +
                                std::to_string(it->second->line) + ")");
        return fresh;
    }

private:
    problems& out_;
    std::unordered_map<std::string_view, const source_location*> seen_;
};

std::string projection_name(const projection& p) {
    return "projection " + (p.id.empty() ? "" : quote(p.id) + " ") + "from " + quote(p.from) + " to " + quote(p.to);
}
std::string synapse_name(const synapse& s) { return "synapse from " + quote(s.from) + " to " + quote(s.to); }

// The aeif models' adaptation and spike parameters, as NEST's aeif_cond_exp checks them:
// V_peak >= V_th, V_reset < V_peak, Delta_T >= 0, and an exponential term that cannot
// overflow a double at V_peak (with NEST's margin of 1e20).
void check_adex(problems& out, const iaf_params& n, const adex_params& x, const source_location& where, const std::string& what) {
    if (!(std::isfinite(x.tau_w) && x.tau_w > 0)) out.add(where, what + ": tau_w must be a positive number");
    if (!std::isfinite(x.a)) out.add(where, what + ": a must be a finite number");
    if (!std::isfinite(x.b)) out.add(where, what + ": b must be a finite number");
    if (!std::isfinite(x.v_peak)) out.add(where, what + ": V_peak must be a finite number");
    if (!(std::isfinite(x.delta_t) && x.delta_t >= 0)) out.add(where, what + ": Delta_T must be a number >= 0 (mV)");
    if (!std::isfinite(x.v_peak) || !std::isfinite(n.v_th) || !std::isfinite(n.v_reset) || !std::isfinite(x.delta_t)) return;
    if (!(x.v_peak >= n.v_th)) out.add(where, what + ": V_peak must not lie below V_th");
    if (!(n.v_reset < x.v_peak)) out.add(where, what + ": V_reset must lie below V_peak");
    const double largest_exponent = std::log(std::numeric_limits<double>::max() / 1e20);
    if (x.delta_t > 0 && (x.v_peak - n.v_th) / x.delta_t >= largest_exponent)
        out.add(where, what + ": (V_peak - V_th) / Delta_T must stay below ln(DBL_MAX / 1e20) = 663.7, or the exponential "
                           "term overflows at V_peak");
}

void check_params(problems& out, const neuron_params& p, const source_location& where, const std::string& what) {
    auto positive = [&](double v, const char* name) {
        if (!(std::isfinite(v) && v > 0)) out.add(where, what + ": " + name + " must be a positive number");
    };
    auto finite = [&](double v, const char* name) {
        if (!std::isfinite(v)) out.add(where, what + ": " + name + " must be a finite number");
    };
    finite(p.bias, "bias");
    finite(p.threshold, "threshold");
    finite(p.v_rest, "v-rest");
    finite(p.v_reset, "v-reset");
    finite(p.v_th, "v-th");
    positive(p.tau_m, "tau-m");
    positive(p.tau_e, "tau-e");
    positive(p.tau_i, "tau-i");
    positive(p.dt, "dt");
    positive(p.tau_minus, "tau_minus");
    if (p.refractory < 0) out.add(where, what + ": refractory must be >= 0 ticks");
    if (is_iaf(p.model) || is_hh(p.model)) {
        const iaf_params& n = p.iaf;
        positive(n.c_m, "C_m");
        if (is_psc(p.model)) positive(n.tau_m, "tau_m");
        if (has_conductances(p.model)) {
            positive(n.g_l, "g_L");
            finite(n.e_ex, "E_ex");
            finite(n.e_in, "E_in");
        }
        if (has_synaptic_currents(p.model)) {
            positive(n.tau_syn_ex, "tau_syn_ex");
            positive(n.tau_syn_in, "tau_syn_in");
        }
        if (!(std::isfinite(n.t_ref) && n.t_ref >= 0)) out.add(where, what + ": t_ref must be a number >= 0 (ms)");
        finite(n.e_l, "E_L");
        finite(n.i_e, "I_e");
    }
    if (is_iaf(p.model)) {
        const iaf_params& n = p.iaf;
        finite(n.v_th, "V_th");
        finite(n.v_reset, "V_reset");
        if (is_adex(p.model)) check_adex(out, n, p.adex, where, what);
        else if (std::isfinite(n.v_th) && std::isfinite(n.v_reset) && !(n.v_reset < n.v_th))
            out.add(where, what + ": V_reset must lie below V_th");
    }
    if (is_hh(p.model)) {
        const hh_params& h = p.hh;
        if (!(std::isfinite(h.g_na) && h.g_na >= 0)) out.add(where, what + ": g_Na must be a number >= 0 (nS)");
        if (!(std::isfinite(h.g_k) && h.g_k >= 0)) out.add(where, what + ": g_K must be a number >= 0 (nS)");
        finite(h.e_na, "E_Na");
        finite(h.e_k, "E_K");
        finite(h.v_t, "V_T");
    }
    if (p.model == neuron_model::izhikevich) {
        const izhikevich_params& z = p.izhikevich;
        finite(z.a, "a");
        finite(z.b, "b");
        finite(z.c, "c");
        finite(z.d, "d");
        finite(z.v_th, "V_th");
        finite(p.iaf.i_e, "I_e");
        if (std::isnan(z.v_min) || z.v_min == HUGE_VAL) out.add(where, what + ": V_min must be a number or -INF");
        else if (std::isfinite(z.v_th) && !(z.v_min < z.v_th)) out.add(where, what + ": V_min must lie below V_th");
    }
    if (p.v_init) finite(*p.v_init, "v-init");
    if (p.u_init) finite(*p.u_init, "u-init");
    if (p.v_init_std) {
        if (!(std::isfinite(*p.v_init_std) && *p.v_init_std >= 0))
            out.add(where, what + ": v-init-std must be a number >= 0");
        if (p.v_init_max) out.add(where, what + ": v-init-std and v-init-max exclude each other");
    }
    if (p.v_init_max) {
        finite(*p.v_init_max, "v-init-max");
        if (!p.v_init)
            out.add(where, what + ": v-init-max needs v-init (the lower end of the range)");
        else if (!(*p.v_init_max > *p.v_init))
            out.add(where, what + ": v-init-max must be greater than v-init");
    }
}

void check_delay(problems& out, std::int64_t delay, const source_location& where, const std::string& what) {
    if (delay < 1) out.add(where, what + ": delay must be at least 1 tick (got " + std::to_string(delay) + ")");
    if (delay > max_delay)
        out.add(where, what + ": delay " + std::to_string(delay) + " exceeds the limit of " +
                           std::to_string(max_delay) + " ticks");
}

// A delay in ticks, or in ms (delay-ms) rounded to ticks of dt.
void check_delay(problems& out, std::int64_t ticks, const std::optional<double>& ms, double dt, const source_location& where,
                 const std::string& what) {
    if (!ms) return check_delay(out, ticks, where, what);
    if (!std::isfinite(*ms)) return out.add(where, what + ": delay-ms must be a finite number");
    const auto rounded = ticks_of_ms(*ms, dt);
    if (rounded < 1)
        return out.add(where, what + ": delay-ms " + text_of(*ms) + " is a delay below one tick (dt " + text_of(dt) + " ms)");
    check_delay(out, rounded, where, what);
}

// A <weight> or <delay> child: its kind's parameters, present and finite, and nothing else.
void check_distribution(problems& out, const distribution& d, const std::string& what, double dt) {
    const std::string at = what + ": " + to_string(d.kind) + " distribution";
    const std::pair<const char*, const std::optional<double>*> all[] = {
        {"value", &d.value}, {"mean", &d.mean}, {"std", &d.std}, {"mu", &d.mu}, {"sigma", &d.sigma}, {"min", &d.min}, {"max", &d.max}};
    std::vector<const char*> needs, allows;
    switch (d.kind) {
    case distribution_kind::constant: needs = {"value"}; break;
    case distribution_kind::normal: needs = {"mean", "std"}, allows = {"min", "max"}; break;
    case distribution_kind::uniform: needs = {"min", "max"}; break;
    case distribution_kind::lognormal: needs = {"mu", "sigma"}, allows = {"min", "max"}; break;
    }
    const auto listed = [](const std::vector<const char*>& names, const char* name) {
        return std::any_of(names.begin(), names.end(), [&](const char* n) { return std::string_view(n) == name; });
    };
    bool sound = true;
    for (const auto& [name, value] : all) {
        if (listed(needs, name) && !*value) {
            out.add(d.where, at + " needs " + name);
            sound = false;
        } else if (*value && !listed(needs, name) && !listed(allows, name)) {
            out.add(d.where, at + ": " + name + " does not apply");
            sound = false;
        } else if (*value && !std::isfinite(**value)) {
            out.add(d.where, at + ": " + name + " must be a finite number");
            sound = false;
        }
    }
    if (!sound) return;
    const auto low = d.min.value_or(-HUGE_VAL), high = d.max.value_or(HUGE_VAL);
    if (d.std && *d.std < 0) out.add(d.where, at + ": std must be >= 0");
    if (d.sigma && *d.sigma < 0) out.add(d.where, at + ": sigma must be >= 0");
    if (d.kind == distribution_kind::uniform ? low > high : low >= high)
        out.add(d.where, at + ": min must be " + (d.kind == distribution_kind::uniform ? "<=" : "<") + " max");
    if (d.kind == distribution_kind::lognormal && d.min && *d.min <= 0)
        out.add(d.where, at + ": min must be > 0 (lognormal values are positive)");
    if (d.kind == distribution_kind::lognormal && d.max && *d.max <= 0)
        out.add(d.where, at + ": max must be > 0 (lognormal values are positive)");
    if (what.find("delay") == std::string::npos) return;
    // Delays: in ms, at most the delay limit; a constant at least one tick.
    const double top = d.kind == distribution_kind::constant ? *d.value : d.max.value_or(-HUGE_VAL);
    if (top != -HUGE_VAL && ticks_of_ms(top, dt) > max_delay)
        out.add(d.where, at + ": " + text_of(top) + " ms exceeds the limit of " + std::to_string(max_delay) + " ticks");
    if (d.kind == distribution_kind::constant && ticks_of_ms(*d.value, dt) < 1)
        out.add(d.where, at + ": value " + text_of(*d.value) + " ms is a delay below one tick (dt " + text_of(dt) + " ms)");
}

// A fixed-outdegree or fixed-total-number count `k` drawn from `pool` choices (`noun`s of
// `pool_group`), distinct ones without multapses.
void check_degree(problems& out, const projection& p, const std::string& what, const char* name, const std::optional<std::int64_t>& k,
                  std::uint64_t pool, const char* noun, const std::string& pool_group) {
    if (!k) return out.add(p.where, what + ": kind '" + to_string(p.kind) + "' needs " + name);
    if (*k < 0) return out.add(p.where, what + ": " + name + " must be >= 0 (got " + std::to_string(*k) + ")");
    const auto n = static_cast<std::uint64_t>(*k);
    if (!p.multapses && n > pool)
        out.add(p.where, what + ": " + name + " " + std::to_string(n) + " without multapses needs as many distinct " +
                             noun + "; " + quote(pool_group) + " offers " + std::to_string(pool));
    else if (pool == 0 && n > 0)
        out.add(p.where, what + ": " + name + " " + std::to_string(n) + " but there is nothing to draw from");
}

void check_projection(problems& out, const symbol_table& symbols, const projection& p, double dt, double& expected_synapses) {
    const std::string what = projection_name(p);
    const auto from = symbols.group(p.from);
    const auto to = symbols.group(p.to);
    if (auto* why = std::get_if<std::string>(&from)) out.add(p.where, what + ": " + *why);
    if (auto* why = std::get_if<std::string>(&to)) out.add(p.where, what + ": " + *why);
    if (!std::isfinite(p.weight)) out.add(p.where, what + ": weight must be a finite number");
    check_delay(out, p.delay, p.delay_ms, dt, p.where, what);
    const bool dense = p.kind == projection_kind::dense;
    if (p.weight_distribution) check_distribution(out, *p.weight_distribution, what + ": weight", dt);
    if (p.delay_distribution) check_distribution(out, *p.delay_distribution, what + ": delay", dt);
    if (dense && (p.weight_distribution || p.delay_distribution || p.delay_ms))
        out.add(p.where, what + ": a dense projection takes no weight or delay distribution and no delay-ms");
    if (p.kind != projection_kind::fixed_outdegree && p.outdegree)
        out.add(p.where, what + ": outdegree applies only to kind 'fixed-outdegree'");
    if (p.kind != projection_kind::fixed_total_number && p.total)
        out.add(p.where, what + ": n applies only to kind 'fixed-total-number'");
    if (p.kind == projection_kind::random) {
        if (!p.p)
            out.add(p.where, what + ": kind 'random' needs a probability p");
        else if (!(*p.p >= 0 && *p.p <= 1))
            out.add(p.where, what + ": p must lie in [0, 1]");
    } else if (p.p) {
        out.add(p.where, what + ": p applies only to kind 'random'");
    }
    if (p.kind == projection_kind::fixed_indegree) {
        if (!p.indegree)
            out.add(p.where, what + ": kind 'fixed-indegree' needs an indegree");
        else if (*p.indegree < 0)
            out.add(p.where, what + ": indegree must be >= 0 (got " + std::to_string(*p.indegree) + ")");
    } else if (p.indegree) {
        out.add(p.where, what + ": indegree applies only to kind 'fixed-indegree'");
    }
    if (!dense && (p.init != dense_init::none || p.scale || !p.weights_file.empty() || p.rows || p.cols || p.split_rows))
        out.add(p.where, what + ": init, scale, weights, rows, cols and split apply only to kind 'dense'");
    const bool list = p.kind == projection_kind::list;
    if (!list && (!p.connections_file.empty() || p.connections.size() > 0))
        out.add(p.where, what + ": connections apply only to kind 'list'");
    if (list && (p.weight != 1 || p.delay != 1 || p.delay_ms || p.weight_distribution || p.delay_distribution))
        out.add(p.where, what + ": a list projection takes each connection's weight and delay from its list: no weight, delay, "
                                "delay-ms, <weight> or <delay>");
    if (dense) {
        if ((p.init != dense_init::none) == !p.weights_file.empty())
            out.add(p.where, what + ": a dense projection needs exactly one of init=\"...\" and weights=\"FILE\"");
        if (p.scale && !(std::isfinite(*p.scale) && *p.scale >= 0))
            out.add(p.where, what + ": scale must be a finite number >= 0");
    }
    using extents = std::vector<member_extent>;
    if (!std::holds_alternative<extents>(from) || !std::holds_alternative<extents>(to)) return;
    // The rules are checked on the members written (the first extent): members a <grow> adds
    // only widen a pool (a target draws from the sources there are when it is added).
    const neuron_range f{std::get<extents>(from).front().first, std::get<extents>(from).front().size};
    const neuron_range t{std::get<extents>(to).front().first, std::get<extents>(to).front().size};
    const auto a = f.size, b = t.size;
    const auto members = [](const extents& x) { return x.back().member + x.back().size - x.front().member; };
    if (dense) {
        if (p.rows && static_cast<std::uint64_t>(*p.rows) != b)
            out.add(p.where, what + ": rows=" + std::to_string(*p.rows) + " but " + quote(p.to) + " has " +
                                 std::to_string(b) + " neurons");
        if (p.cols && static_cast<std::uint64_t>(*p.cols) != a)
            out.add(p.where, what + ": cols=" + std::to_string(*p.cols) + " but " + quote(p.from) + " has " +
                                 std::to_string(a) + " neurons");
        return;
    }
    switch (p.kind) {
    case projection_kind::list: {
        // Positions past the groups' ends: the first such connection, in canonical order.
        const connection_list& l = p.connections;
        const auto sources = members(std::get<extents>(from)), targets = members(std::get<extents>(to));
        for (std::size_t k = 0; k < l.size(); ++k)
            if (l.sources[k] >= sources || l.targets[k] >= targets) {
                const bool source = l.sources[k] >= sources;
                out.add(p.where, what + ": the connection from source " + std::to_string(l.sources[k]) + " to target " +
                                     std::to_string(l.targets[k]) + (p.connections_file.empty() ? "" : " (in " + quote(p.connections_file) + ")") +
                                     ": " + (source ? "source " : "target ") + std::to_string(source ? l.sources[k] : l.targets[k]) +
                                     " lies outside " + quote(source ? p.from : p.to) + ", which has " + std::to_string(source ? sources : targets) +
                                     " neurons");
                break;
            }
        expected_synapses += static_cast<double>(l.size());
        break;
    }
    case projection_kind::one_to_one:
        if (a != b)
            out.add(p.where, what + ": one-to-one needs groups of equal size (" + std::to_string(a) + " and " +
                                 std::to_string(b) + ")");
        expected_synapses += static_cast<double>(a);
        break;
    case projection_kind::all: expected_synapses += static_cast<double>(a) * static_cast<double>(b); break;
    case projection_kind::random:
        expected_synapses += static_cast<double>(a) * static_cast<double>(b) * p.p.value_or(0);
        break;
    case projection_kind::fixed_indegree: {
        const auto k = static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.indegree.value_or(0)));
        // Without autapses a target inside the source group draws from the others.
        const bool overlap = f.first < t.first + t.size && t.first < f.first + f.size;
        const std::uint64_t pool = a - (!p.autapses && overlap ? 1 : 0);
        if (!p.multapses && k > pool)
            out.add(p.where, what + ": indegree " + std::to_string(k) + " without multapses needs as many distinct sources; " +
                                 quote(p.from) + " offers " + std::to_string(pool));
        else if (pool == 0 && k > 0)
            out.add(p.where, what + ": indegree " + std::to_string(k) + " but there is no source to draw from");
        expected_synapses += static_cast<double>(k) * static_cast<double>(b);
        break;
    }
    case projection_kind::fixed_outdegree:
    case projection_kind::fixed_total_number: {
        const std::uint64_t overlap = p.autapses ? 0
                                                 : std::max(f.first, t.first) < std::min(f.first + f.size, t.first + t.size)
                                                       ? std::min(f.first + f.size, t.first + t.size) - std::max(f.first, t.first)
                                                       : 0;
        if (p.kind == projection_kind::fixed_outdegree) {
            // A source inside the target group draws from the others.
            check_degree(out, p, what, "outdegree", p.outdegree, b - (overlap > 0 ? 1 : 0), "targets", p.to);
            expected_synapses += static_cast<double>(std::max<std::int64_t>(0, p.outdegree.value_or(0))) * static_cast<double>(a);
        } else {
            check_degree(out, p, what, "n", p.total, a * b - overlap, "pairs", p.from + " x " + p.to);
            expected_synapses += static_cast<double>(std::max<std::int64_t>(0, p.total.value_or(0)));
        }
        break;
    }
    case projection_kind::dense: break;
    }
}

void check_port(problems& out, const symbol_table& symbols, const port& p, const char* kind) {
    if (p.neurons.empty()) out.add(p.where, std::string(kind) + " " + quote(p.id) + ": names no neurons");
    for (const auto& ref : p.neurons) {
        const auto g = symbols.group(ref);
        if (auto* why = std::get_if<std::string>(&g)) out.add(p.where, std::string(kind) + " " + quote(p.id) + ": " + *why);
    }
}

void check_targets(problems& out, const symbol_table& symbols, const std::vector<std::string>& to, const source_location& where,
                   const std::string& what) {
    if (to.empty()) out.add(where, what + ": names no neurons");
    for (const auto& ref : to) {
        const auto g = symbols.group(ref);
        if (auto* why = std::get_if<std::string>(&g)) out.add(where, what + ": " + *why);
    }
}

// A generator's window in ms: start <= t * dt < stop.
void check_window(problems& out, double start, const std::optional<double>& stop, const source_location& where,
                  const std::string& what) {
    if (!(std::isfinite(start) && start >= 0)) out.add(where, what + ": start must be a finite number >= 0 (ms)");
    if (stop && !(std::isfinite(*stop) && *stop >= start)) out.add(where, what + ": stop must be a finite number >= start (ms)");
}

// Is `ms` a positive whole number of ticks of `dt` (to a relative 1e-9)?
bool whole_ticks(double ms, double dt) {
    if (!(std::isfinite(ms) && ms > 0)) return false;
    const double ticks = ms / dt;
    return ticks >= 1 - 1e-9 && std::abs(ticks - std::round(ticks)) <= 1e-9 * ticks;
}

// A Poisson spike source: one rate, or one per member, each finite and >= 0 (Hz); no listed spikes.
void check_poisson_source(problems& out, const population& p, const std::string& what) {
    if (p.rates.size() != 1 && p.rates.size() != static_cast<std::uint64_t>(std::max<std::int64_t>(p.size, 0)))
        out.add(p.where, what + ": rate must be one value or one per member (" + std::to_string(p.size) + "), got " +
                             std::to_string(p.rates.size()));
    for (const double r : p.rates)
        if (!(std::isfinite(r) && r >= 0)) {
            out.add(p.where, what + ": rate must be finite numbers >= 0 (Hz)");
            break;
        }
    if (!p.spike_file.empty() || !p.spikes.empty())
        out.add(p.where, what + ": a Poisson spike source (rate) lists no spikes (no file, no <spike> children)");
    check_window(out, p.start, p.stop, p.where, what);
}

void check_generators(problems& out, const symbol_table& symbols, const network& net) {
    for (const auto& g : net.poisson) {
        const std::string what = "poisson generator";
        check_targets(out, symbols, g.to, g.where, what);
        if (!(std::isfinite(g.rate) && g.rate >= 0)) out.add(g.where, what + ": rate must be a finite number >= 0 (Hz)");
        if (!std::isfinite(g.weight)) out.add(g.where, what + ": weight must be a finite number");
    }
    for (const auto& g : net.currents) {
        const std::string what = std::string(element_name(g.shape)) + " generator";
        check_targets(out, symbols, g.to, g.where, what);
        auto finite = [&](double value, const char* name, const char* unit = "") {
            if (!std::isfinite(value)) out.add(g.where, what + ": " + name + " must be a finite number" + unit);
        };
        finite(g.amplitude, "amplitude");
        finite(g.offset, "offset");
        finite(g.phase, "phase", " (degrees)");
        finite(g.mean, "mean");
        if (!(std::isfinite(g.frequency) && g.frequency >= 0)) out.add(g.where, what + ": frequency must be a finite number >= 0 (Hz)");
        if (!(std::isfinite(g.std) && g.std >= 0)) out.add(g.where, what + ": std must be a finite number >= 0");
        if (g.interval_ms && !whole_ticks(*g.interval_ms, net.dt)) {
            std::ostringstream message;
            message << what << ": dt-ms must be a positive whole number of ticks of " << net.dt << " ms (got " << *g.interval_ms << ")";
            out.add(g.where, message.str());
        }
        check_window(out, g.start, g.stop, g.where, what);
    }
}

// A sampling <record>: every variable one each named neuron's model records, an interval of
// at least one tick.
void check_sampling(problems& out, const recording& r, const std::unordered_map<std::string_view, neuron_model>& model_of,
                    double dt) {
    if (r.interval_ms && !(std::isfinite(*r.interval_ms) && ticks_of_ms(*r.interval_ms, dt) >= 1))
        out.add(r.where, "record: interval-ms must be a finite number of ms, at least one tick (the network's dt)");
    std::vector<std::pair<std::string, neuron_model>> named;
    if (r.neurons)
        for (const auto& ref : *r.neurons) {
            const auto model = model_of.find(group_of(ref));
            if (model != model_of.end()) named.emplace_back(ref, model->second);
        }
    for (const auto& ref_model : named) {
        const auto& known = recordable_variables(ref_model.second);
        std::string list;
        for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
        for (const auto& v : r.variables)
            if (std::find(known.begin(), known.end(), v) == known.end())
                out.add(r.where, "record: " + quote(ref_model.first) + " is a " + to_string(ref_model.second) + " neuron, which has no variable " +
                                     quote(v) + (list.empty() ? std::string(" (it records none)") : " (it records " + list + ")"));
    }
}

// A <record>'s references: groups that exist, of spiking models or spike sources (only
// their spikes are recorded) unless it samples variables. `model_of` maps a neuron or population id to its model.
void check_record(problems& out, const symbol_table& symbols, const recording& r,
                  const std::unordered_map<std::string_view, neuron_model>& model_of) {
    if (r.variables.empty() && r.interval_ms) out.add(r.where, "record: interval-ms needs variables (it samples them)");
    if (!r.variables.empty() && !r.neurons) out.add(r.where, "record: variables need neurons (the ones to sample)");
    if (!r.neurons) return;
    if (r.neurons->empty()) out.add(r.where, "record: names no neurons");
    for (const auto& ref : *r.neurons) {
        const auto g = symbols.group(ref);
        if (auto* why = std::get_if<std::string>(&g)) {
            out.add(r.where, "record: " + *why);
            continue;
        }
        const auto model = model_of.find(group_of(ref));
        if (r.variables.empty() && model != model_of.end() && !emits_spikes(model->second))
            out.add(r.where, "record: " + quote(ref) + " is a " + to_string(model->second) +
                                 " neuron; only neurons of spiking models (lif, iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta, izhikevich, iaf_cond_exp, iaf_cond_alpha, aeif_cond_exp, aeif_cond_alpha, hh_cond_exp_traub) and spike sources spike");
    }
}

std::string synapse_model_names() {
    std::string names;
    for (const auto& m : synapse_model_catalog()) names += (names.empty() ? "" : ", ") + std::string(m.name);
    return names;
}

// Why `value` lies outside parameter p's range, or nothing.
std::optional<std::string> out_of_range(const synapse_parameter& p, double value) {
    using range = synapse_parameter::range;
    const std::string unit = std::string_view(p.unit) == "ms" ? " (ms)" : "";
    if (!std::isfinite(value)) return std::string("must be a finite number");
    switch (p.allowed) {
    case range::any: break;
    case range::positive:
        if (!(value > 0)) return "must be > 0" + unit + ", not " + text_of(value);
        break;
    case range::non_negative:
        if (!(value >= 0)) return "must be >= 0" + unit + ", not " + text_of(value);
        break;
    case range::unit_interval:
        if (!(value >= 0 && value <= 1)) return "must lie in [0, 1], not " + text_of(value);
        break;
    case range::nonzero:
        if (value == 0) return std::string("must not be 0 (it bounds the weights, which take its sign)");
        break;
    }
    return std::nullopt;
}

// The <synapse-model>s: ids of their own, unique and not a model's name; known models; the
// model's own parameters within their ranges. Returns the ids of those at fault, whose
// connections are not checked against them.
std::unordered_set<std::string_view> check_synapse_models(problems& out, const network& net) {
    id_register ids(out);
    std::unordered_set<std::string_view> faulty;
    for (const auto& m : net.synapse_models) {
        const std::string what = "synapse-model " + quote(m.id);
        bool sound = ids.add(m.id, m.where, "synapse-model ");
        if (find_synapse_model(m.id)) {
            out.add(m.where, what + ": that is the name of a synapse model; give the <synapse-model> an id of its own");
            sound = false;
        }
        const synapse_model_info* info = find_synapse_model(m.model);
        if (!info) {
            out.add(m.where, what + ": unknown synapse model " + quote(m.model) + " (the models are " + synapse_model_names() + ")");
            faulty.insert(m.id);
            continue;
        }
        const auto& parameters = info->parameters;
        for (const auto& [name, value] : m.params) {
            const std::string& wanted = name;  // a lambda may not name a structured binding in C++17 (clang)
            const auto p = std::find_if(parameters.begin(), parameters.end(), [&](const synapse_parameter& q) { return wanted == q.name; });
            if (p == parameters.end()) {
                std::string takes;
                for (const auto& q : parameters) takes += (takes.empty() ? "" : ", ") + std::string(q.name);
                out.add(m.where, what + ": " + info->name + " has no parameter " + quote(name) + " (it takes " +
                                     (takes.empty() ? std::string("none") : takes) + ")");
                sound = false;
            } else if (const auto why = out_of_range(*p, value)) {
                out.add(m.where, what + ": " + name + " " + *why);
                sound = false;
            }
        }
        if (!sound) faulty.insert(m.id);
    }
    return faulty;
}

// A connection element as its synapse model sees it.
struct connection_view {
    std::string what;
    const std::string& model;  // the element's synapse-model
    const source_location& where;
    const std::string &from, &to;
    double weight;
    const distribution* drawn;  // the <weight> child, if any
    bool dense;
    const connection_list* listed;  // a list projection's connections, else null
};

// A connection's synapse model: a reference that resolves. A plastic model needs a sparse
// connection from neurons that spike to neurons of a spiking model, and, when it bounds its
// weights by Wmax, weights on Wmax's side of 0 (the rule keeps them between 0 and Wmax).
void check_connection_model(problems& out, const network& net, const std::unordered_set<std::string_view>& faulty,
                            const std::unordered_map<std::string_view, neuron_model>& model_of, const connection_view& c) {
    if (c.model.empty() || faulty.count(c.model)) return;
    const bool own = std::any_of(net.synapse_models.begin(), net.synapse_models.end(),
                                 [&](const synapse_model& m) { return m.id == c.model; });
    if (!own && !find_synapse_model(c.model))
        return out.add(c.where, c.what + ": synapse-model " + quote(c.model) + " names no <synapse-model> and no synapse model (" +
                                    synapse_model_names() + ")");
    const auto model = resolve_synapse_model(net, c.model, c.where);
    if (!model.info->plastic) return;
    const std::string rule = own ? "synapse-model " + quote(c.model) + " (" + model.info->name + ")" : std::string(model.info->name);
    if (c.dense)
        return out.add(c.where, c.what + ": a dense projection's weights are one fixed matrix; it cannot use " + rule +
                                    ", which is plastic");
    for (const bool source : {true, false}) {
        const std::string& end = source ? c.from : c.to;
        const auto m = model_of.find(group_of(end));
        if (m == model_of.end() || (source ? emits_spikes(m->second) : is_spiking(m->second))) continue;
        out.add(c.where, c.what + ": " + rule + " learns from spikes, and " + quote(end) + " is a " + to_string(m->second) +
                             " neuron; its " + (source ? "sources" : "targets") + " must be of a spiking model (lif, iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta, izhikevich, iaf_cond_exp, iaf_cond_alpha, aeif_cond_exp, aeif_cond_alpha, hh_cond_exp_traub)" +
                             (source ? " or a spike source" : ""));
    }
    if (!model.info->weight_bound) return;
    const std::string bound_name = model.info->weight_bound;
    const double bound = model.value(model.info->weight_bound);
    const std::string because = ": " + rule + " keeps its weights between 0 and " + bound_name + " " + text_of(bound);
    // A weight that is not finite has its own problem.
    const auto other_side = [&](double w) { return std::isfinite(w) && w != 0 && (w > 0) != (bound > 0); };
    if (c.listed) {
        const connection_list& l = *c.listed;
        const auto k = static_cast<std::size_t>(
            std::find_if(l.weights.begin(), l.weights.end(), [&](float w) { return other_side(static_cast<double>(w)); }) - l.weights.begin());
        if (k < l.size())
            out.add(c.where, c.what + ": the connection from source " + std::to_string(l.sources[k]) + " to target " +
                                 std::to_string(l.targets[k]) + " has weight " + text_of(static_cast<double>(l.weights[k])) +
                                 ", on the other side of 0" + because + "; give weights of " + bound_name + "'s sign, or 0");
        return;
    }
    if (!c.drawn) {
        if (other_side(c.weight))
            out.add(c.where, c.what + ": weight " + text_of(c.weight) + " lies on the other side of 0" + because +
                                 "; give a weight of " + bound_name + "'s sign, or 0");
        return;
    }
    const distribution& d = *c.drawn;
    const std::string at = c.what + ": weight: " + to_string(d.kind) + " distribution";
    switch (d.kind) {
    case distribution_kind::constant:
        if (d.value && other_side(*d.value))
            out.add(d.where, at + ": value " + text_of(*d.value) + " lies on the other side of 0" + because);
        break;
    case distribution_kind::lognormal:
        if (bound < 0) out.add(d.where, at + " draws positive weights" + because);
        break;
    case distribution_kind::normal:
    case distribution_kind::uniform:
        if (d.kind == distribution_kind::uniform && (!d.min || !d.max)) break;  // reported with the distribution
        if (bound > 0 && !(d.min && *d.min >= 0))
            out.add(d.where, at + " may draw weights below 0" + because + "; give min=\"0\" (or a min >= 0)");
        if (bound < 0 && !(d.max && *d.max <= 0))
            out.add(d.where, at + " may draw weights above 0" + because + "; give max=\"0\" (or a max <= 0)");
        break;
    }
}

// Whether a connection's synapse-model `model` names a plastic model; false for one that
// names nothing or a faulty <synapse-model> (reported with the connection or the model).
bool names_plastic_model(const network& net, const std::unordered_set<std::string_view>& faulty, const std::string& model,
                         const source_location& where) {
    if (model.empty() || faulty.count(model)) return false;
    const bool own = std::any_of(net.synapse_models.begin(), net.synapse_models.end(), [&](const synapse_model& m) { return m.id == model; });
    if (!own && !find_synapse_model(model)) return false;
    return resolve_synapse_model(net, model, where).info->plastic;
}

// An engine keeps each plastic connection element (a <projection> or <synapse> with a
// plastic synapse model) as a class of its own, at most max_plastic_elements of them.
void check_plastic_element_count(problems& out, const network& net, const std::unordered_set<std::string_view>& faulty) {
    std::size_t plastic = 0;
    for (const auto& ref : net.connection_order) {
        const bool synapse = ref.kind == connection_ref::type::synapse;
        const std::string& model = synapse ? net.synapses[ref.index].synapse_model : net.projections[ref.index].synapse_model;
        const source_location& where = synapse ? net.synapses[ref.index].where : net.projections[ref.index].where;
        if (!names_plastic_model(net, faulty, model, where) || ++plastic <= max_plastic_elements) continue;
        return out.add(where, (synapse ? synapse_name(net.synapses[ref.index]) : projection_name(net.projections[ref.index])) +
                                  ": the network's plastic connection elements (<projection>s and <synapse>s with a plastic "
                                  "synapse model) exceed " + std::to_string(max_plastic_elements) +
                                  ", the most a node runs; give many plastic synapses as one kind=\"list\" projection");
    }
}

// A plastic synapse needs every spike, in order, at the tick it is due (lockstep: window sync
// drops late signals), one state per synapse (batch 1: lanes would each learn their own) and
// a weight its rule can change by small steps (32 bits): the first plastic connection of a
// run with other settings is at fault.
void check_plastic_run(const network& net, const run_settings& run) {
    if (run.sync == sync_mode::lockstep && run.batch == 1 && !run.half_weights) return;
    for (const auto& ref : net.connection_order) {
        const bool explicit_synapse = ref.kind == connection_ref::type::synapse;
        const synapse* s = explicit_synapse ? &net.synapses[ref.index] : nullptr;
        const projection* p = explicit_synapse ? nullptr : &net.projections[ref.index];
        const source_location& where = s ? s->where : p->where;
        const auto model = resolve_synapse_model(net, s ? s->synapse_model : p->synapse_model, where);
        if (!model.info->plastic) continue;
        const std::string name = (s ? synapse_name(*s) : projection_name(*p)) + ": " + model.info->name + " is plastic, and the run has ";
        if (run.sync == sync_mode::lockstep && run.batch == 1)
            throw config_error(where, name + "weight-precision=\"half\": a rule's weight changes need 32-bit weights (weight-precision=\"single\")");
        const std::string setting = run.sync == sync_mode::window ? "sync=\"window\"" : "batch " + std::to_string(run.batch);
        throw config_error(where, name + setting + ": plasticity needs every spike in order, in lockstep, and one lane (sync=\"lockstep\", batch 1)");
    }
}

// NEST's Gaussian growth curve: finite values, a curve of nonzero width (eta != eps), a
// fraction of vacant elements lost per update in (0, 1], and a start of z >= 0 elements.
void check_growth_curve(problems& out, const growth_curve& c, const source_location& where, const std::string& what) {
    const std::pair<const char*, double> values[] = {
        {"growth_rate", c.growth_rate}, {"eta", c.eta}, {"eps", c.eps}, {"tau_vacant", c.tau_vacant}, {"z", c.z}};
    bool finite = true;
    for (const auto& [name, value] : values)
        if (!std::isfinite(value)) {
            out.add(where, what + ": " + name + " must be a finite number");
            finite = false;
        }
    if (!finite) return;
    if (c.eta == c.eps)
        out.add(where, what + ": eta and eps must differ (the growth curve's width zeta = (eta - eps) / (2 sqrt(ln 2)) would be 0)");
    if (!(c.tau_vacant > 0 && c.tau_vacant <= 1)) out.add(where, what + ": tau_vacant must lie in (0, 1], not " + text_of(c.tau_vacant));
    if (!(c.z >= 0)) out.add(where, what + ": z must be >= 0, not " + text_of(c.z));
}

// Structural plasticity: the populations' calcium and synaptic elements, and the
// <structural-plasticity> that pairs them. Elements and <structural-plasticity> come
// together; every element is named by some <structural-synapse> and every name a
// <structural-synapse> gives is some population's element.
void check_structural(problems& out, const network& net, const std::unordered_set<std::string_view>& faulty) {
    std::unordered_set<std::string_view> declared;
    for (const auto& p : net.populations) {
        const std::string what = (p.params.model == neuron_model::spike_source ? "spike source " : "population ") + quote(p.id);
        if (!(std::isfinite(p.tau_ca) && p.tau_ca > 0)) out.add(p.where, what + ": tau_Ca must be a positive number (ms)");
        if (!(std::isfinite(p.beta_ca) && p.beta_ca > 0)) out.add(p.where, what + ": beta_Ca must be a positive number");
        if (p.synaptic_elements.empty()) continue;
        if (!is_spiking(p.params.model))
            out.add(p.synaptic_elements.front().where,
                    what + " is of model " + to_string(p.params.model) +
                        "; only populations of spiking models (lif, iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta, izhikevich, iaf_cond_exp, "
                        "iaf_cond_alpha, aeif_cond_exp, aeif_cond_alpha, hh_cond_exp_traub) have synaptic elements");
        if (!net.structural)
            out.add(p.synaptic_elements.front().where,
                    what + " has synaptic elements, and the network has no <structural-plasticity> to grow synapses from them");
        std::unordered_map<std::string_view, const source_location*> names;
        for (const auto& e : p.synaptic_elements) {
            const std::string element = what + ": synaptic element " + quote(e.name);
            const auto [first, fresh] = names.emplace(e.name, &e.where);
            if (!fresh)
                out.add(e.where, element + " is declared twice (first at line " + std::to_string(first->second->line) + ")");
            check_growth_curve(out, e.curve, e.where, element);
            declared.insert(e.name);
        }
    }
    if (!net.structural) return;
    const structural_plasticity& sp = *net.structural;
    if (declared.empty())
        out.add(sp.where, "structural-plasticity: no population has a <synaptic-element> to grow synapses from");
    if (!whole_ticks(sp.update_interval_ms, net.dt)) {
        std::ostringstream message;
        message << "structural-plasticity: structural_plasticity_update_interval must be a positive whole number of ticks of "
                << net.dt << " ms (got " << sp.update_interval_ms << ")";
        out.add(sp.where, message.str());
    }
    id_register ids(out);
    std::unordered_set<std::string_view> used;
    for (const auto& s : sp.synapses) {
        const std::string what = "structural-synapse " + quote(s.id);
        ids.add(s.id, s.where, "structural-synapse ");
        for (const auto& [attribute, element] : {std::pair<const char*, const std::string*>{"pre_synaptic_element", &s.pre_element},
                                                 {"post_synaptic_element", &s.post_element}}) {
            used.insert(*element);
            if (!declared.count(*element))
                out.add(s.where, what + ": " + attribute + " " + quote(*element) + " is declared by no population (no <synaptic-element name=\"" +
                                     *element + "\">)");
        }
        if (!std::isfinite(s.weight)) out.add(s.where, what + ": weight must be a finite number");
        check_delay(out, s.delay, s.delay_ms, net.dt, s.where, what);
        if (s.synapse_model.empty() || faulty.count(s.synapse_model)) continue;
        const bool own = std::any_of(net.synapse_models.begin(), net.synapse_models.end(),
                                     [&](const synapse_model& m) { return m.id == s.synapse_model; });
        if (!own && !find_synapse_model(s.synapse_model)) {
            out.add(s.where, what + ": synapse-model " + quote(s.synapse_model) + " names no <synapse-model> and no synapse model (" +
                                 synapse_model_names() + ")");
            continue;
        }
        const auto model = resolve_synapse_model(net, s.synapse_model, s.where);
        if (model.info->plastic)
            out.add(s.where, what + ": synapse-model " + quote(s.synapse_model) + " (" + model.info->name +
                                 ") is plastic; structural synapses are static for now (static_synapse)");
    }
    for (const auto& p : net.populations)
        for (const auto& e : p.synaptic_elements)
            if (!used.count(e.name))
                out.add(e.where, "element " + quote(e.name) + " of population " + quote(p.id) + " is used by no <structural-synapse>");
}

// The <grow>s: each adds at least one member to a <population> whose rules can take new
// members, at an at-ms >= 0 (rounded to a tick) that never decreases, applied ones before
// scheduled ones; with all of them the network stays within max_neurons (`neurons`: its
// count without them). A population cannot grow while its spikes are given (a spike
// source) or while it is an end of a dense projection whose weights come from a file (a
// matrix of its ends' sizes as written).
void check_grows(problems& out, const network& net, std::uint64_t neurons) {
    if (net.grows.empty()) return;
    std::unordered_map<std::string_view, const population*> populations;
    for (const auto& p : net.populations) populations.emplace(p.id, &p);
    std::unordered_set<std::string_view> single_neurons;
    for (const auto& n : net.neurons) single_neurons.insert(n.id);
    // Why each population that may not grow is held at its size, one reason per element.
    std::unordered_map<std::string_view, std::vector<std::string>> held;
    for (const auto& p : net.projections) {
        if (p.kind != projection_kind::dense || p.weights_file.empty()) continue;
        const std::string why = "is an end of " + projection_name(p) + " (line " + std::to_string(p.where.line) +
                                "), which is dense with weights from " + p.weights_file + ": the file has none for new members";
        held[group_of(p.from)].push_back(why);
        if (group_of(p.to) != group_of(p.from)) held[group_of(p.to)].push_back(why);
    }

    const population_growth* latest = nullptr;           // the one with the largest at-ms so far
    const population_growth* first_scheduled = nullptr;  // the first not applied
    std::uint64_t total = neurons;
    bool over_limit = false;
    for (const auto& g : net.grows) {
        const std::string what = "grow of " + quote(g.population);
        const auto p = populations.find(g.population);
        if (single_neurons.count(g.population))
            out.add(g.where, what + ": " + quote(g.population) + " is a <neuron>; only a <population> grows");
        else if (p == populations.end())
            out.add(g.where, what + ": no population " + quote(g.population));
        else if (p->second->params.model == neuron_model::spike_source)
            out.add(g.where, what + ": " + quote(g.population) + " is a spike source; growing a spike source is not supported: its spikes are given");
        else if (!p->second->v_inits.empty())
            out.add(g.where, what + ": " + quote(g.population) + " gives v-init per member, which a grown member would lack; " +
                                 "give v-init as one value or a range (v-init-max, v-init-std)");
        if (const auto reasons = held.find(g.population); reasons != held.end())
            for (const auto& why : reasons->second) out.add(g.where, what + ": " + quote(g.population) + " " + why);
        if (g.add < 1) out.add(g.where, what + ": add must be at least 1 (got " + std::to_string(g.add) + ")");
        if (!(std::isfinite(g.at_ms) && g.at_ms >= 0))
            out.add(g.where, what + ": at-ms must be a finite number >= 0 (ms)");
        else if (ticks_of_ms(g.at_ms, net.dt) > max_state_tick)
            out.add(g.where, what + ": at-ms " + text_of(g.at_ms) + " lies past the latest tick a network reaches (" +
                                 std::to_string(max_state_tick) + ")");
        else if (latest && g.at_ms < latest->at_ms)
            out.add(g.where, what + ": at-ms " + text_of(g.at_ms) + " comes before the at-ms " + text_of(latest->at_ms) +
                                 " of the <grow> at line " + std::to_string(latest->where.line) + "; grows are listed in time order");
        if (std::isfinite(g.at_ms) && (!latest || g.at_ms > latest->at_ms)) latest = &g;
        if (g.applied && first_scheduled)
            out.add(g.where, what + ": an applied <grow> after the scheduled one at line " + std::to_string(first_scheduled->where.line) +
                                 "; applied grows come first");
        if (!g.applied && !first_scheduled) first_scheduled = &g;
        // Counted up to the first grow past the limit: the sum (at most the limit plus one
        // int64) cannot wrap.
        if (g.add < 1 || over_limit) continue;
        total += static_cast<std::uint64_t>(g.add);
        if (total <= max_neurons) continue;
        over_limit = true;
        out.add(g.where, what + " brings the network to " + std::to_string(total) + " neurons; the limit is " + std::to_string(max_neurons));
    }
}

// Structural plasticity rewires the one network a run holds: lanes would each need their own.
void check_structural_run(const network& net, const run_settings& run) {
    if (!net.structural) return;
    if (run.batch != 1)
        throw config_error(net.structural->where, "structural-plasticity: the run has batch " + std::to_string(run.batch) +
                                                      "; structural plasticity rewires one network, so it runs with batch 1");
    // Every node keeps the same picture of the grown synapses from the outputs it sees: a
    // window that closes without a packet would make nodes disagree.
    if (run.sync != sync_mode::lockstep)
        throw config_error(net.structural->where, "structural-plasticity: the run has sync=\"" + std::string(to_string(run.sync)) +
                                                      "\"; structural plasticity runs in lockstep, where every node sees every output");
}

// v-init given per member (the reader admits it on spiking models only): one finite value
// (mV) per member, and no rule besides.
void check_listed_potentials(problems& out, const population& p, const std::string& what) {
    if (p.v_inits.size() != static_cast<std::uint64_t>(std::max<std::int64_t>(p.size, 0)))
        out.add(p.where, what + ": v-init must be one value or one per member (" + std::to_string(p.size) + "), got " +
                             std::to_string(p.v_inits.size()));
    for (const double v : p.v_inits)
        if (!std::isfinite(v)) {
            out.add(p.where, what + ": v-init must be finite numbers (mV)");
            break;
        }
    if (p.params.v_init_max || p.params.v_init_std)
        out.add(p.where, what + ": v-init given per member takes neither v-init-max nor v-init-std");
}
}  // namespace

void check_network(const network& net) {
    problems out;
    id_register ids(out);
    std::uint64_t total = 0;
    for (const auto& n : net.neurons) {
        ids.add(n.id, n.where, "");
        check_params(out, n.params, n.where, "neuron " + quote(n.id));
        ++total;
    }
    for (const auto& p : net.populations) {
        ids.add(p.id, p.where, "");
        const std::string what = (p.params.model == neuron_model::spike_source ? "spike source " : "population ") + quote(p.id);
        neuron_params rules = p.params;
        if (!p.v_inits.empty()) rules.v_init_max.reset(), rules.v_init_std.reset();  // check_listed_potentials says why
        check_params(out, rules, p.where, what);
        if (!p.rates.empty()) check_poisson_source(out, p, what);
        if (!p.v_inits.empty()) check_listed_potentials(out, p, what);
        if (p.size < 1)
            out.add(p.where, what + ": size must be at least 1 (got " + std::to_string(p.size) + ")");
        else  // saturating: sizes up to 2^63 - 1 would wrap the sum past the limit check
            total += std::min(static_cast<std::uint64_t>(p.size), UINT64_MAX - total);
    }
    if (total > max_neurons)
        out.add(net.where, "network has " + std::to_string(total) + (total == UINT64_MAX ? " or more" : "") +
                               " neurons; the limit is " + std::to_string(max_neurons));
    if (total == 0) out.add(net.where, "network " + quote(net.name) + " has no neurons");
    out.throw_if_any();  // references below need a sound symbol table

    const symbol_table symbols(net);
    std::unordered_map<std::string_view, neuron_model> model_of;
    for (const auto& n : net.neurons) model_of.emplace(n.id, n.params.model);
    for (const auto& p : net.populations) model_of.emplace(p.id, p.params.model);
    // A spike source's output is its listed spikes alone: nothing may feed it.
    auto no_spike_source = [&](const std::vector<std::string>& refs, const source_location& where, const std::string& what) {
        for (const auto& ref : refs) {
            const auto model = model_of.find(group_of(ref));
            if (model != model_of.end() && model->second == neuron_model::spike_source)
                out.add(where, what + ": " + quote(ref) + " is a spike source, which takes no input");
        }
    };
    for (const auto& s : net.synapses) no_spike_source({s.to}, s.where, synapse_name(s));
    for (const auto& p : net.projections) no_spike_source({p.to}, p.where, projection_name(p));
    for (const auto& g : net.poisson) no_spike_source(g.to, g.where, "poisson generator");
    for (const auto& g : net.currents) no_spike_source(g.to, g.where, std::string(element_name(g.shape)) + " generator");
    for (const auto& p : net.inputs) no_spike_source(p.neurons, p.where, "input " + quote(p.id));
    double expected_synapses = static_cast<double>(net.synapses.size());
    for (const auto& s : net.synapses) {
        const std::string what = synapse_name(s);
        for (const auto* end : {&s.from, &s.to}) {
            const auto r = symbols.single(*end);
            if (auto* why = std::get_if<std::string>(&r)) out.add(s.where, what + ": " + *why);
        }
        if (!std::isfinite(s.weight)) out.add(s.where, what + ": weight must be a finite number");
        check_delay(out, s.delay, s.delay_ms, net.dt, s.where, what);
    }
    // The synapse limit is checked from the rules' counts (expected for random), before
    // anything is expanded, and reported at the projection that crosses it.
    bool over_limit = expected_synapses > max_synapses;
    if (over_limit)
        out.add(net.where, "network has " + std::to_string(net.synapses.size()) + " explicit synapses; the limit is " +
                               std::to_string(static_cast<std::uint64_t>(max_synapses)));
    for (const auto& p : net.projections) {
        check_projection(out, symbols, p, net.dt, expected_synapses);
        if (over_limit || expected_synapses <= max_synapses) continue;
        over_limit = true;
        out.add(p.where, projection_name(p) + " brings the network to about " +
                             std::to_string(static_cast<std::uint64_t>(expected_synapses)) + " synapses; the limit is " +
                             std::to_string(static_cast<std::uint64_t>(max_synapses)));
    }

    const auto faulty = check_synapse_models(out, net);
    id_register projection_ids(out);
    for (const auto& p : net.projections) {
        if (!p.id.empty()) projection_ids.add(p.id, p.where, "projection ");
        check_connection_model(out, net, faulty, model_of,
                               {projection_name(p), p.synapse_model, p.where, p.from, p.to, p.weight,
                                p.weight_distribution ? &*p.weight_distribution : nullptr, p.kind == projection_kind::dense,
                                p.kind == projection_kind::list ? &p.connections : nullptr});
    }
    for (const auto& s : net.synapses)
        check_connection_model(out, net, faulty, model_of,
                               {synapse_name(s), s.synapse_model, s.where, s.from, s.to, s.weight, nullptr, false, nullptr});
    check_plastic_element_count(out, net, faulty);
    check_structural(out, net, faulty);
    check_grows(out, net, total);

    check_generators(out, symbols, net);

    id_register port_ids(out);
    for (const auto* ports : {&net.inputs, &net.outputs}) {
        const char* kind = ports == &net.inputs ? "input" : "output";
        for (const auto& p : *ports) {
            port_ids.add(p.id, p.where, std::string(kind) + " ");
            check_port(out, symbols, p, kind);
        }
    }
    for (const auto& r : net.records) {
        check_record(out, symbols, r, model_of);
        if (!r.variables.empty()) check_sampling(out, r, model_of, net.dt);
    }
    out.throw_if_any();
}

void check_cluster(const cluster& clu) {
    problems out;
    std::unordered_map<std::string_view, std::size_t> index;
    std::unordered_map<std::string, const source_location*> endpoints;
    for (std::size_t i = 0; i < clu.nodes.size(); ++i) {
        const auto& n = clu.nodes[i];
        const std::string what = "node " + quote(n.id);
        if (!index.emplace(n.id, i).second) out.add(n.where, "duplicate node id " + quote(n.id));
        if (!(std::isfinite(n.capacity) && n.capacity > 0))
            out.add(n.where, what + ": capacity must be a positive number");
        if (n.port < 1 || n.port > 65535) out.add(n.where, what + ": port must lie in 1..65535");
        if (n.host.empty()) out.add(n.where, what + ": host must not be empty");
        auto [it, fresh] = endpoints.emplace(n.host + ":" + std::to_string(n.port), &n.where);
        if (!fresh)
            out.add(n.where, what + ": address " + n.host + ":" + std::to_string(n.port) +
                                 " is already used by the node at line " + std::to_string(it->second->line));
    }
    if (clu.nodes.empty()) out.add(clu.where, "cluster has no nodes");
    if (!clu.nodes.empty() && !index.count(clu.lead))
        out.add(clu.where, "cluster lead " + quote(clu.lead) + ": no such node");

    std::vector<std::vector<std::size_t>> adjacent(clu.nodes.size());
    for (const auto& l : clu.links) {
        const std::string what = "link from " + quote(l.from) + " to " + quote(l.to);
        const auto a = index.find(l.from), b = index.find(l.to);
        if (a == index.end()) out.add(l.where, what + ": no node " + quote(l.from));
        if (b == index.end()) out.add(l.where, what + ": no node " + quote(l.to));
        if (l.from == l.to) out.add(l.where, what + ": a link must join two different nodes");
        if (!(std::isfinite(l.emulate_delay_ms) && l.emulate_delay_ms >= 0))
            out.add(l.where, what + ": emulate-delay must be a number >= 0 (ms)");
        if (l.bandwidth_bps && !(std::isfinite(*l.bandwidth_bps) && *l.bandwidth_bps > 0))
            out.add(l.where, what + ": bandwidth must be a finite rate > 0");
        if (a != index.end() && b != index.end()) {
            adjacent[a->second].push_back(b->second);
            adjacent[b->second].push_back(a->second);
        }
    }
    out.throw_if_any();

    // Every node must be reachable from the lead over links.
    std::vector<bool> seen(clu.nodes.size(), false);
    std::queue<std::size_t> frontier;
    frontier.push(index.at(clu.lead));
    seen[frontier.front()] = true;
    while (!frontier.empty()) {
        const auto v = frontier.front();
        frontier.pop();
        for (auto w : adjacent[v])
            if (!seen[w]) seen[w] = true, frontier.push(w);
    }
    for (std::size_t i = 0; i < clu.nodes.size(); ++i)
        if (!seen[i])
            out.add(clu.nodes[i].where, "node " + quote(clu.nodes[i].id) + " is not connected to the lead " +
                                            quote(clu.lead) + " by any chain of links");
    out.throw_if_any();
}

void check_run(const run_settings& run, const cluster* clu) {
    problems out;
    const auto& w = run.where;
    if (clu && !run.clock.empty()) {
        const bool found = std::any_of(clu->nodes.begin(), clu->nodes.end(),
                                       [&](const cluster_node& n) { return n.id == run.clock; });
        if (!found) out.add(w, "run clock " + quote(run.clock) + ": no such node in the cluster");
    }
    const auto up_to = [](double most) { return std::to_string(static_cast<std::int64_t>(most)); };
    if (!(run.tick_period_ms >= 0 && run.tick_period_ms <= max_setting_ms))
        out.add(w, "run: tick-period must lie in 0.." + up_to(max_setting_ms) + " ms");
    if (run.checkpoint_every < 0 || run.checkpoint_every > max_tick_count)
        out.add(w, "run: checkpoint-every must lie in 0.." + std::to_string(max_tick_count) + " ticks");
    if (run.checkpoint_keep < 1) out.add(w, "run: checkpoint-keep must be at least 1");
    if (run.fan_out < 1) out.add(w, "run: fan-out must be at least 1");
    if (run.batch < 1 || run.batch > max_batch) out.add(w, "run: batch must lie in 1.." + std::to_string(max_batch));
    if (run.batch > 1 && run.checkpoint_every > 0)
        out.add(w, "run: checkpoint-every needs batch 1 (snapshots of a batched run are not supported)");
    if (run.probes < 1 || run.probes > 10000) out.add(w, "run: probes must lie in 1..10000");
    if (run.throughput_probes < 0 || run.throughput_probes > 100) out.add(w, "run: throughput-probes must lie in 0..100");
    if (!(run.window_factor >= 1 && run.window_factor <= max_window_factor))
        out.add(w, "run: window-factor must lie in 1.." + up_to(max_window_factor));
    if (!(run.window_margin_ms >= 0 && run.window_margin_ms <= max_setting_ms))
        out.add(w, "run: window-margin must lie in 0.." + up_to(max_setting_ms) + " ms");
    if (!(run.heartbeat_timeout_ms > 0 && run.heartbeat_timeout_ms <= max_setting_ms))
        out.add(w, "run: heartbeat-timeout must be > 0 and at most " + up_to(max_setting_ms) + " ms");
    if (!(run.rebalance_threshold > 1 && run.rebalance_threshold <= 100))
        out.add(w, "run: rebalance-threshold must be > 1 and at most 100 (the slowest node's compute time per tick over the mean)");
    if (!(run.rebalance_after_ms > 0 && run.rebalance_after_ms <= max_setting_ms))
        out.add(w, "run: rebalance-after must be > 0 and at most " + up_to(max_setting_ms) + " ms");
    if (!(run.rebalance_pause_share > 0 && run.rebalance_pause_share <= 1))
        out.add(w, "run: rebalance-pause-share must be > 0 and at most 1 (the share of the run its moves may pause it for)");
    out.throw_if_any();
}

void check_state_values(const neuron_state& n, std::int64_t tick, std::vector<diagnostic>& problems) {
    // Values are float32 in the engine: one that is not a finite float32 would poison every
    // tick after it.
    auto finite = [](double x) { return std::isfinite(x) && std::abs(x) <= static_cast<double>(std::numeric_limits<float>::max()); };
    if (!finite(n.output) || !std::all_of(n.state.begin(), n.state.end(), finite) ||
        !std::all_of(n.history.begin(), n.history.end(), finite) || !std::all_of(n.synapses.begin(), n.synapses.end(), finite))
        problems.push_back({n.where, "state of " + quote(n.id) + ": every value must be a finite number (float32)"});
    if (!std::all_of(n.growth.begin(), n.growth.end(), [](double v) { return std::isfinite(v); }))
        problems.push_back({n.where, "state of " + quote(n.id) + ": every growth value must be a finite number"});
    for (const auto& t : n.traces) {
        const bool ordered = std::is_sorted(t.ticks.begin(), t.ticks.end()) &&
                             (t.ticks.empty() || (t.ticks.front() >= 0 && t.ticks.back() < tick));
        if (t.ticks.size() != t.values.size() || !ordered || !(std::isfinite(t.tau) && t.tau >= 0) ||
            !std::all_of(t.values.begin(), t.values.end(), [](double v) { return std::isfinite(v); }))
            problems.push_back({n.where, "state of " + quote(n.id) + ": a trace needs a time constant >= 0 and as many finite values as "
                                         "ticks, ascending and before the state's tick"});
    }
}

void check_state(const snapshot_state& state, const network& net) {
    problems out;
    if (state.tick < 0 || state.tick > max_state_tick)
        out.add(state.where, "state: tick " + std::to_string(state.tick) + " cannot be continued; it must be 0.." +
                                 std::to_string(max_state_tick));
    const symbol_table symbols(net);
    std::unordered_set<std::uint64_t> seen;
    for (const auto& n : state.neurons) {
        std::vector<diagnostic> found;
        check_state_values(n, state.tick, found);
        for (auto& d : found) out.add(d.where, std::move(d.message));
        const auto r = symbols.single(n.id);
        if (auto* why = std::get_if<std::string>(&r)) {
            out.add(n.where, "state of " + quote(n.id) + ": " + *why);
            continue;
        }
        if (!seen.insert(std::get<std::uint64_t>(r)).second) out.add(n.where, "state of " + quote(n.id) + " given twice");
    }
    out.throw_if_any();
}

void check_document(const document& doc) {
    if (doc.net) check_network(*doc.net);
    if (doc.clu) check_cluster(*doc.clu);
    if (doc.run) check_run(*doc.run, doc.clu ? &*doc.clu : nullptr);
    if (doc.net && doc.run) {
        check_plastic_run(*doc.net, *doc.run);
        check_structural_run(*doc.net, *doc.run);
    }
    if (doc.state) {
        if (!doc.net) throw config_error({doc.file, 0, 0}, "a <state> needs the <network> it belongs to");
        check_state(*doc.state, *doc.net);
        if (doc.run && doc.run->batch > 1)
            throw config_error(doc.run->where, "run: a <state> holds one lane, so a snapshot runs with batch 1");
    }
    if (!doc.net && !doc.clu && !doc.run)
        throw config_error({doc.file, 1, 1}, "the document is empty: it has no <network>, <cluster> or <run>");
}

}  // namespace dnnc::model
