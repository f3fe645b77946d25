#pragma once
// The incoming synapses of single target neurons, drawn from the compact network: the one
// implementation of the connection rules. expand() stores, for each neuron, exactly what
// synapse_rows::for_each gives it; a node builds only its own rows from its share.
//
// Canonical order of a row: connection elements in document order (net.connection_order),
// and within a projection its sources in index order (parallel synapses of one source
// together). Rows are independent: a random projection draws each target row from its own
// stream (the projection's seed mixed with the row), so rows may be generated in any order
// and in parallel from one const object. Two rules are not drawn row by row:
// fixed-outdegree draws each source's targets from the source's own stream, so its rows are
// drawn at construction, for the targets asked for only (every source visited, in
// parallel); fixed-total-number splits its total over the targets down a fixed binary tree
// of target ranges (a binomial draw per tree node, keyed by the node), so a row finds its
// count with O(log n) draws and then draws its sources as fixed-indegree does.
// Weights and delays drawn from a distribution come from a stream per (projection, row),
// consumed along the row in canonical order. A list projection's rows are its list's entries
// for the target, which the list holds sorted by target (model.hpp, connection_list); the
// object refers to the network's lists, which must outlive it.
//
// Grown populations (model.hpp, population_growth): a projection's groups are extents of
// members; rows count positions in member order, so a row keeps its stream and its draws as
// members are added. An all-to-all or random row reaches every source there is (a random
// row's skips run on past the old end), a fixed in-degree row draws from the sources there
// were when its target was added (the source extents born no later), a fixed-outdegree
// source from the targets there were when it was added; one-to-one pairs equal positions. A
// fixed-total-number projection is a block per pair of extents: the written pair's n, and for
// each other pair n in proportion to its pairs, split down a tree of its own (total_block).
// Dense projections take no grown groups (check.cpp).
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/model/draws.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/model/resolve.hpp"
#include "dnnc/model/synapse_models.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace dnnc::model {

using neuron_index = std::uint32_t;


// The weight and delay that every synapse of a connection element has.
struct uniform_synapse {
    float weight = 1;
    std::uint16_t delay = 1;
};

class synapse_rows {
public:
    // O(elements + explicit synapses), plus the fixed-outdegree draws of every source;
    // throws config_error (located) on a reference to no neuron. Every target's row.
    explicit synapse_rows(const network& net);
    // Only the rows of `targets` (any order) are whole: fixed-outdegree projections give no
    // synapse to any other target (count() says 0). With no targets nothing is drawn up
    // front, for counting the other rules' rows.
    synapse_rows(const network& net, std::vector<neuron_index> targets);

    std::size_t neuron_count() const { return neurons_; }
    // net.connection_order.size().
    std::size_t element_count() const { return elements_.size(); }

    // f(neuron_index source, float weight, std::uint16_t delay, std::size_t element) for every
    // incoming synapse of `target`, in canonical order. Dense projections are skipped.
    // Without `weights`, drawn weights are not drawn (f is given 0 instead): for a row kept
    // without them (row_weights draws them again).
    template <bool weights = true, class F>
    void for_each(neuron_index target, F&& f) const {
        elements_of(target, [&](std::size_t e) { each_of<weights>(elements_[e], target, e, f); });
    }

    // f as for_each, for the synapses of connection element `element` only (drawing no other
    // element's).
    template <class F>
    void for_each_of(neuron_index target, std::size_t element, F&& f) const {
        elements_of(target, [&](std::size_t e) {
            if (e == element) each_of(elements_[e], target, e, f);
        });
    }

    // How many synapses for_each would give (random projections draw their skips only,
    // fixed-total-number its tree, and nothing draws a weight or a delay).
    std::uint64_t count(neuron_index target) const {
        std::uint64_t n = 0;
        elements_of(target, [&](std::size_t e) { n += count_of(elements_[e], target); });
        return n;
    }
    // How many of them come from connection element `element`.
    std::uint64_t count(neuron_index target, std::size_t element) const;
    // The synapses of a fixed-outdegree element over all its targets, without drawing: K
    // for each source that has a target to draw from. 0 for the other rules.
    std::uint64_t outdegree_synapses(std::size_t element) const;

    // f(std::size_t element, std::uint64_t synapses) for each element that gives `target` at
    // least one synapse, in canonical order.
    template <class F>
    void for_each_element(neuron_index target, F&& f) const {
        elements_of(target, [&](std::size_t e) {
            if (const auto n = count_of(elements_[e], target)) f(e, n);
        });
    }

    // The weight and delay of every synapse of connection element `element`, when they are
    // the same for all (an explicit synapse is an element of one synapse); nullopt for
    // projections with a weight or delay distribution, for list projections, and for dense
    // projections (which give no synapses here).
    std::optional<uniform_synapse> uniform(std::size_t element) const;
    // Whether the element is a dense projection.
    bool is_dense(std::size_t element) const { return elements_[element].kind == rule::dense; }
    // The synapse models the elements name, static_synapse first, each once (by id); the
    // element's index into them.
    const std::vector<resolved_synapse_model>& synapse_models() const { return models_; }
    std::uint32_t synapse_model(std::size_t element) const { return elements_[element].model; }
    // The element's source neurons: its source group's extents (one unless it grew).
    const std::vector<member_extent>& sources(std::size_t element) const { return elements_[element].from_x; }
    // Where the element stands in its document.
    const source_location& where(std::size_t element) const { return *elements_[element].where; }

    // `k` positions in [0, size) less `skipped` (size: none skipped), ascending, from the
    // stream seeded `seed`: independent draws with multapses, distinct ones (Floyd) without.
    static void draw_positions(std::uint64_t seed, std::uint64_t size, std::uint64_t skipped, std::uint64_t k,
                               bool multapses, std::vector<std::uint64_t>& positions);

private:
    enum class rule : std::uint8_t { synapse, all, one_to_one, random, fixed_indegree, fixed_outdegree, fixed_total_number, dense, list };
    static constexpr std::uint32_t none = ~std::uint32_t{0};
    struct compiled {
        rule kind = rule::synapse;
        bool autapses = true;
        std::uint16_t delay = 1;
        float weight = 1;
        // The groups: their first neuron and their members, in extents (one unless it grew).
        std::uint64_t from_first = 0, from_size = 0, to_first = 0, to_size = 0;
        std::vector<member_extent> from_x, to_x;
        std::uint64_t seed = 0;
        double p = 0, log_q = 0;  // random: probability and log(1 - p)
        std::uint64_t degree = 0;  // fixed_indegree, fixed_outdegree: K; fixed_total_number: n
        bool multapses = true;
        std::uint32_t drawn = none;  // fixed_outdegree: its rows in drawn_
        std::optional<value_draw> weight_draw, delay_draw;
        double dt = 0.1;              // for drawn delays (ms)
        std::uint16_t delay_cap = 1;  // the longest drawn delay
        const source_location* where = nullptr;
        std::uint32_t model = 0;  // into models_
        const connection_list* list = nullptr;  // list: the projection's connections
    };

    // The neuron at position k of a group (resolve.hpp).
    static neuron_index neuron_at(const std::vector<member_extent>& x, std::uint64_t k) {
        return static_cast<neuron_index>(model::neuron_at(x, k));
    }
    // Where `neuron` stands in a group: its position and the extent's birth (resolve.hpp), or
    // false when it is not a member.
    static bool place_in(const std::vector<member_extent>& x, std::uint64_t neuron, std::uint64_t& position, std::uint32_t& born) {
        std::uint64_t before = 0;
        for (const auto& e : x) {
            if (neuron >= e.first && neuron < e.first + e.size) {
                position = before + (neuron - e.first);
                born = e.born;
                return true;
            }
            before += e.size;
        }
        return false;
    }
    static std::uint64_t position_in(const std::vector<member_extent>& x, neuron_index neuron) {
        std::uint64_t position = 0;
        std::uint32_t born = 0;
        place_in(x, neuron, position, born);
        return position;
    }
    // The members of a group's extents born no later than `born`: a prefix of its positions.
    static std::uint64_t members_by(const std::vector<member_extent>& x, std::uint32_t born) {
        std::uint64_t n = 0;
        for (const auto& e : x)
            if (e.born <= born) n += e.size;
        return n;
    }

    // A list projection's connections into `target`: [first, last) of its list.
    static std::pair<std::size_t, std::size_t> listed_row(const compiled& r, neuron_index target) {
        const auto& targets = r.list->targets;
        const auto position = static_cast<std::uint32_t>(position_in(r.to_x, target));
        const auto [first, last] = std::equal_range(targets.begin(), targets.end(), position);
        return {static_cast<std::size_t>(first - targets.begin()), static_cast<std::size_t>(last - targets.begin())};
    }

    // The rows of a fixed-outdegree projection for the targets asked for: CSR over them.
    struct drawn_rows {
        std::vector<neuron_index> targets;    // ascending
        std::vector<std::uint64_t> begin;     // targets.size() + 1
        std::vector<std::uint32_t> sources;   // positions in the source group, ascending per row
        // The row of `target`: [first, last) of sources, empty if it was not asked for.
        std::pair<const std::uint32_t*, const std::uint32_t*> row(neuron_index target) const;
    };

    void compile(const network& net, const std::vector<neuron_index>* targets);
    // Throws config_error (located) for a list its rows cannot be read from, between groups
    // of `sources` and `targets` neurons.
    static void check_list(const projection& p, std::uint64_t sources, std::uint64_t targets);
    void draw_outdegree_rows(compiled& r, const std::vector<neuron_index>* targets);

    // g(element) for every element with `target` in its target range, in element order:
    // the projections covering its interval merged with its explicit synapses.
    template <class G>
    void elements_of(neuron_index target, G&& g) const {
        const auto [cover, cover_end] = covering(target);
        auto [own, own_end] = explicit_of(target);
        for (auto c = cover; c != cover_end; ++c) {
            for (; own != own_end && own->second < *c; ++own) g(own->second);
            g(*c);
        }
        for (; own != own_end; ++own) g(own->second);
    }
    std::pair<const std::uint32_t*, const std::uint32_t*> covering(neuron_index target) const;
    using explicit_entry = std::pair<neuron_index, std::uint32_t>;  // (target, element)
    std::pair<const explicit_entry*, const explicit_entry*> explicit_of(neuron_index target) const;

    std::uint64_t count_of(const compiled& r, neuron_index target) const;

    // The seed of the stream of row (or source) `position` of a projection seeded `seed`.
    static std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t position) {
        return splitmix64(seed ^ (0xD1B54A32D192ED03ULL * (position + 1))).next();
    }

    // A random projection's row: the positions k of its sources, ascending, drawn with
    // geometric skips from the row's own stream.
    class random_row {
    public:
        random_row(const compiled& r, neuron_index target)
            : rng_(stream_seed(r.seed, position_in(r.to_x, target))), size_(r.from_size), p_(r.p), log_q_(r.log_q) {}
        // The next source position, or false when the row is done.
        bool next(std::uint64_t& k) {
            if (started_) ++k_;
            started_ = true;
            if (p_ < 1) {
                const double skip = std::floor(std::log1p(-rng_.uniform()) / log_q_);
                if (skip >= static_cast<double>(size_ - k_)) return false;
                k_ += static_cast<std::uint64_t>(skip);
            }
            if (k_ >= size_) return false;
            k = k_;
            return true;
        }

    private:
        splitmix64 rng_;
        std::uint64_t size_, k_ = 0;
        double p_, log_q_;
        bool started_ = false;
    };

    // A fixed in-degree or fixed-total-number row: the positions of its sources in the
    // source group, ascending, drawn from the row's own stream (see rows.cpp).
    static void drawn_row(const compiled& r, neuron_index target, std::uint64_t k, std::vector<std::uint64_t>& positions);
    static std::pair<std::uint64_t, std::uint64_t> indegree_pool(const compiled& r, neuron_index target);
    // One block of a fixed-total-number projection: the sources of one extent of its source
    // group, [from_first, + from_size), onto the targets of one extent of its target group,
    // with its synapses and the seed of its streams.
    struct total_block {
        std::uint64_t from_first, from_size, to_first, to_size, n, seed;
    };
    static total_block block_of(const compiled& r, const member_extent& from, const member_extent& to);
    // A row's synapse count in a block: its share of the block's n down the tree of target ranges.
    static std::uint64_t total_number_count(const compiled& r, const total_block& b, std::uint64_t position);
    // f(source extent's first position in the group, block, the target's position in it)
    // for each block of the row of `target`, in source order.
    template <class F>
    static void total_number_blocks(const compiled& r, neuron_index target, F&& f) {
        for (const auto& to : r.to_x) {
            if (target < to.first || target >= to.first + to.size) continue;
            std::uint64_t offset = 0;
            for (const auto& from : r.from_x) {
                f(offset, block_of(r, from, to), target - to.first);
                offset += from.size;
            }
        }
    }
    static std::uint64_t total_number_count(const compiled& r, neuron_index target) {
        std::uint64_t n = 0;
        total_number_blocks(r, target, [&](std::uint64_t, const total_block& b, std::uint64_t position) { n += total_number_count(r, b, position); });
        return n;
    }
    // A fixed-total-number row: its sources' positions in the group, ascending.
    static void total_number_row(const compiled& r, neuron_index target, std::vector<std::uint64_t>& positions);

    // Drawn weights and delays along one row of one projection: each the next value of the
    // row's own stream, drawn several at a time (value_draw::draw_rounded). A row's stream
    // serves only its row, so values drawn past its end change nothing; the batches grow
    // 1, 1, 2, 4, ... up to 64, so a row never draws more than twice its synapses.
    class row_values {
    public:
        row_values(const compiled& r, neuron_index target)
            : r_(r), weights_(r_.weight_draw, stream_seed(r.seed ^ weight_salt, position_in(r.to_x, target))),
              delays_(r_.delay_draw, stream_seed(r.seed ^ delay_salt, position_in(r.to_x, target))) {}
        float weight() {
            if (!r_.weight_draw) return r_.weight;
            return weights_.next(as_float{});
        }
        // Passes over the next n weights: without drawing them where each takes a fixed number
        // of the stream's draws (value_draw::draws_per_value), else drawn and dropped.
        void skip_weights(std::uint64_t n) {
            if (n == 0 || !r_.weight_draw) return;
            if (const auto each = r_.weight_draw->draws_per_value())
                weights_.skip(n, *each);
            else
                for (; n > 0; --n) weights_.next(as_float{});
        }
        std::uint16_t delay() {
            if (!r_.delay_draw) return r_.delay;
            return delays_.next(tick_rounding{r_.dt, r_.delay_cap});
        }

    private:
        static constexpr std::uint64_t weight_salt = 0x5745494748545321ULL, delay_salt = 0x44454C4159532121ULL;
        struct as_float {
            float operator()(double x) const { return static_cast<float>(x); }
        };
        template <class T>
        class drawn_ahead {
        public:
            drawn_ahead(const std::optional<value_draw>& draw, std::uint64_t seed) : draw_(draw), stream_(seed) {}
            template <class Round>
            T next(Round&& round) {
                if (next_ == size_) {
                    size_ = std::min(most, std::max<std::size_t>(1, drawn_));
                    draw_->draw_rounded(stream_, values_, size_, round);
                    drawn_ += size_;
                    next_ = 0;
                }
                return values_[next_++];
            }
            // Passes over the next n values, each `each` of the stream's draws: those drawn
            // ahead first, then the stream itself (the values are the same however they are
            // batched, so the next batch starts where the skipped ones end).
            void skip(std::uint64_t n, std::uint64_t each) {
                const std::uint64_t ahead = size_ - next_;
                if (n <= ahead) {
                    next_ += static_cast<std::size_t>(n);
                    return;
                }
                stream_.skip((n - ahead) * each);
                drawn_ += static_cast<std::size_t>(n - ahead);
                next_ = size_ = 0;
            }

        private:
            static constexpr std::size_t most = 64;
            const std::optional<value_draw>& draw_;
            splitmix64 stream_;
            T values_[most];
            std::size_t next_ = 0, size_ = 0, drawn_ = 0;
        };
        const compiled& r_;
        drawn_ahead<float> weights_;
        drawn_ahead<std::uint16_t> delays_;
    };

public:
    // The weights of the synapses connection element `element` gives `target`, one at a
    // time in canonical order: for_each's, without drawing a source or a delay (a drawn
    // weight comes from a stream of its own, above), so a node can draw them again instead of
    // keeping them.
    class row_weights {
    public:
        row_weights(const synapse_rows& rows, neuron_index target, std::size_t element)
            : r_(rows.elements_[element]), values_(r_, target),
              listed_(r_.kind == rule::list ? listed_row(r_, target).first : 0) {}
        float next() { return r_.kind == rule::list ? r_.list->weights[listed_++] : values_.weight(); }
        // Passes over the next n weights (without drawing them where that is exact:
        // row_values::skip_weights).
        void skip(std::uint64_t n) {
            if (r_.kind == rule::list)
                listed_ += static_cast<std::size_t>(n);
            else
                values_.skip_weights(n);
        }

    private:
        const compiled& r_;
        row_values values_;
        std::size_t listed_;
    };

private:
    template <bool weights = true, class F>
    void each_of(const compiled& r, neuron_index target, std::size_t e, F& f) const {
        if (r.kind == rule::list) {
            const auto [first, last] = listed_row(r, target);
            for (auto k = first; k < last; ++k)
                f(neuron_at(r.from_x, r.list->sources[k]), r.list->weights[k], r.list->delays[k], e);
            return;
        }
        if (!r.weight_draw && !r.delay_draw) {
            each_source(r, target, [&](neuron_index source) { f(source, r.weight, r.delay, e); });
            return;
        }
        row_values values(r, target);
        each_source(r, target, [&](neuron_index source) {
            const float weight = weights ? values.weight() : 0.0f;
            f(source, weight, values.delay(), e);
        });
    }

    // g(source) for every synapse of element `r` into `target`, in canonical order.
    template <class G>
    void each_source(const compiled& r, neuron_index target, G&& g) const {
        switch (r.kind) {
        case rule::synapse: g(static_cast<neuron_index>(r.from_first)); break;
        case rule::all:
            for (const auto& x : r.from_x)
                for (std::uint64_t s = x.first; s < x.first + x.size; ++s)
                    if (r.autapses || s != target) g(static_cast<neuron_index>(s));
            break;
        case rule::one_to_one: {
            const auto position = position_in(r.to_x, target);
            if (position >= r.from_size) break;  // the source side has not grown that far
            const auto source = neuron_at(r.from_x, position);
            if (r.autapses || source != target) g(source);
            break;
        }
        case rule::random: {
            if (r.p <= 0 || r.from_size == 0) break;
            random_row row(r, target);
            for (std::uint64_t k = 0; row.next(k);)
                if (const auto source = neuron_at(r.from_x, k); r.autapses || source != target) g(source);
            break;
        }
        case rule::fixed_indegree:
        case rule::fixed_total_number: {
            thread_local std::vector<std::uint64_t> positions;
            if (r.kind == rule::fixed_indegree)
                drawn_row(r, target, r.degree, positions);
            else
                total_number_row(r, target, positions);
            for (const auto k : positions) g(neuron_at(r.from_x, k));
            break;
        }
        case rule::fixed_outdegree: {
            const auto [first, last] = drawn_[r.drawn].row(target);
            for (auto k = first; k != last; ++k) g(neuron_at(r.from_x, *k));
            break;
        }
        case rule::dense:
        case rule::list: break;  // each_of reads a list's rows itself
        }
    }

    std::size_t neurons_ = 0;
    std::vector<compiled> elements_;
    // Projections by target interval: interval i is [bounds_[i], bounds_[i + 1]) and is
    // covered by cover_[cover_begin_[i] ... cover_begin_[i + 1]), ascending.
    std::vector<std::uint64_t> bounds_;
    std::vector<std::size_t> cover_begin_;
    std::vector<std::uint32_t> cover_;
    std::vector<explicit_entry> explicit_;  // sorted by target, then element
    std::vector<drawn_rows> drawn_;
    std::vector<resolved_synapse_model> models_;
};

}  // namespace dnnc::model
