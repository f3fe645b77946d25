#include "dnnc/partitioner/metis_io.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <fstream>

namespace dnnc::partitioner {
namespace {

struct token {
    std::int64_t value;
    int column;
};

// Walks the text line by line, counting lines from 1 and skipping `%` comment lines.
class line_reader {
public:
    line_reader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

    // The next line that is not a comment; false at the end of the text.
    bool next(std::string_view& line) {
        while (pos_ < text_.size()) {
            const auto end = text_.find('\n', pos_);
            const auto stop = end == std::string_view::npos ? text_.size() : end;
            line = text_.substr(pos_, stop - pos_);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            pos_ = stop + 1;
            ++line_;
            if (line.empty() || line.front() != '%') return true;
        }
        return false;
    }

    [[noreturn]] void fail(int column, const std::string& message) const {
        throw config_error(source_location{file_, line_, column}, message);
    }
    [[noreturn]] void fail_at(int line, int column, const std::string& message) const {
        throw config_error(source_location{file_, line, column}, message);
    }
    int line() const { return line_; }

    // The whitespace-separated integers of `line`.
    void tokens(std::string_view line, std::vector<token>& out) const {
        out.clear();
        std::size_t i = 0;
        while (i < line.size()) {
            if (line[i] == ' ' || line[i] == '\t') {
                ++i;
                continue;
            }
            std::size_t j = i;
            while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
            std::int64_t value = 0;
            const auto* first = line.data() + i;
            const auto* last = line.data() + j;
            const auto [ptr, ec] = std::from_chars(first, last, value);
            const int column = static_cast<int>(i) + 1;
            if (ec != std::errc{} || ptr != last) {
                fail(column, "expected an integer, found '" + std::string(first, last) + "'");
            }
            out.push_back({value, column});
            i = j;
        }
    }

private:
    std::string_view text_;
    const std::string& file_;
    std::size_t pos_ = 0;
    int line_ = 0;
};

struct entry {
    vertex_id to;
    weight_t w;
    int column;
};

}  // namespace

graph parse_metis(std::string_view text, const std::string& file) {
    line_reader in(text, file);
    std::string_view line;
    std::vector<token> tok;

    // Header: the first line that is neither a comment nor blank.
    do {
        if (!in.next(line)) in.fail(0, "empty file: expected a header `n m [fmt [ncon]]`");
        in.tokens(line, tok);
    } while (tok.empty());
    const int header_line = in.line();
    if (tok.size() > 4) in.fail(tok[4].column, "header has more than 4 fields (n m fmt ncon)");
    if (tok.size() < 2) in.fail(1, "header needs at least `n m`");
    if (tok[0].value < 0 || tok[0].value >= std::int64_t{~vertex_id{0}}) {
        in.fail(tok[0].column, "vertex count " + std::to_string(tok[0].value) + " out of range");
    }
    if (tok[1].value < 0) in.fail(tok[1].column, "negative edge count");
    const auto n = static_cast<std::size_t>(tok[0].value);
    const auto m = static_cast<std::uint64_t>(tok[1].value);
    bool has_size = false, has_vweight = false, has_eweight = false;
    if (tok.size() >= 3) {
        const auto fmt = tok[2].value;
        if (fmt < 0 || fmt > 111 || fmt % 10 > 1 || fmt / 10 % 10 > 1) {
            in.fail(tok[2].column, "fmt must be up to three binary digits (0, 1, 10, 11, 100, ...), "
                                   "found " + std::to_string(fmt));
        }
        has_size = fmt >= 100;
        has_vweight = fmt / 10 % 10 == 1;
        has_eweight = fmt % 10 == 1;
    }
    if (tok.size() == 4 && tok[3].value != 1) {
        in.fail(tok[3].column, "only one vertex weight per vertex is supported (ncon = 1), found " +
                                   std::to_string(tok[3].value));
    }

    // Sizes come from the file, so they are bounded by its length before anything is
    // allocated: one line per vertex, two characters per listed neighbour.
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    if (n > lines) {
        in.fail_at(header_line, tok[0].column, "header announces " + std::to_string(n) +
                                                   " vertices but the file has only " +
                                                   std::to_string(lines) + " lines");
    }
    std::vector<std::uint64_t> begin{0};
    begin.reserve(n + 1);
    std::vector<entry> entries;
    entries.reserve(std::min<std::uint64_t>(2 * m, text.size() / 2 + 1));
    std::vector<int> line_of(n);
    std::vector<weight_t> vweight(n, 1);
    // The totals must fit a weight_t: the partitioner sums vertex weights into part weights
    // and edge weights into cuts and degrees.
    constexpr weight_t most = std::numeric_limits<weight_t>::max();
    weight_t vweight_total = 0, eweight_total = 0;  // edges counted from both ends
    const std::size_t head = (has_size ? 1 : 0) + (has_vweight ? 1 : 0);
    const std::size_t stride = has_eweight ? 2 : 1;
    for (std::size_t u = 0; u < n; ++u) {
        if (!in.next(line)) {
            in.fail(0, "the file ends after " + std::to_string(u) + " of " + std::to_string(n) +
                           " vertex lines");
        }
        line_of[u] = in.line();
        in.tokens(line, tok);
        if (tok.size() < head) {
            in.fail(1, "vertex " + std::to_string(u + 1) + ": missing its " +
                           (has_vweight ? "weight" : "size"));
        }
        if (has_size && tok[0].value < 0) in.fail(tok[0].column, "negative vertex size");
        if (has_vweight) {
            const auto& w = tok[head - 1];
            if (w.value < 0) in.fail(w.column, "negative vertex weight " + std::to_string(w.value));
            if (w.value > most - vweight_total) in.fail(w.column, "the vertex weights sum to more than 2^63 - 1");
            vweight_total += w.value;
            vweight[u] = w.value;
        }
        if ((tok.size() - head) % stride != 0) {
            in.fail(tok.back().column, "vertex " + std::to_string(u + 1) +
                                           ": a neighbour without its edge weight");
        }
        for (std::size_t i = head; i < tok.size(); i += stride) {
            const auto v = tok[i].value;
            if (v < 1 || static_cast<std::uint64_t>(v) > n) {
                in.fail(tok[i].column, "neighbour " + std::to_string(v) + " out of range 1.." +
                                           std::to_string(n));
            }
            if (static_cast<std::size_t>(v) == u + 1) {
                in.fail(tok[i].column, "self-loop on vertex " + std::to_string(u + 1));
            }
            weight_t w = 1;
            if (has_eweight) {
                w = tok[i + 1].value;
                if (w <= 0) {
                    in.fail(tok[i + 1].column, "edge weight must be positive, found " +
                                                   std::to_string(w));
                }
                if (w > most - eweight_total) {
                    in.fail(tok[i + 1].column, "the edge weights sum to more than 2^63 - 1 "
                                               "(each edge counted from both ends)");
                }
                eweight_total += w;
            }
            entries.push_back({static_cast<vertex_id>(v - 1), w, tok[i].column});
        }
        begin.push_back(entries.size());
    }
    while (in.next(line)) {
        in.tokens(line, tok);
        if (!tok.empty()) {
            in.fail(tok[0].column, "more vertex lines than the " + std::to_string(n) +
                                       " the header announces");
        }
    }

    const auto row = [&](std::size_t u) {
        return std::make_pair(entries.begin() + static_cast<std::ptrdiff_t>(begin[u]),
                              entries.begin() + static_cast<std::ptrdiff_t>(begin[u + 1]));
    };
    for (std::size_t u = 0; u < n; ++u) {
        auto [first, last] = row(u);
        std::sort(first, last, [](const entry& a, const entry& b) {
            return a.to < b.to || (a.to == b.to && a.column < b.column);
        });
        const auto dup = std::adjacent_find(first, last, [](const entry& a, const entry& b) {
            return a.to == b.to;
        });
        if (dup != last) {
            in.fail_at(line_of[u], (dup + 1)->column, "vertex " + std::to_string(u + 1) +
                                                          " lists neighbour " +
                                                          std::to_string(dup->to + 1) + " twice");
        }
    }
    for (std::size_t u = 0; u < n; ++u) {
        const auto [first, last] = row(u);
        for (auto e = first; e != last; ++e) {
            const auto [vfirst, vlast] = row(e->to);
            const auto back = std::lower_bound(vfirst, vlast, u, [](const entry& a, std::size_t x) {
                return a.to < x;
            });
            const auto us = std::to_string(u + 1);
            const auto vs = std::to_string(e->to + 1);
            if (back == vlast || back->to != u) {
                in.fail_at(line_of[u], e->column, "asymmetric edge: vertex " + us + " lists " + vs +
                                                      " but vertex " + vs + " does not list " + us);
            }
            if (back->w != e->w) {
                in.fail_at(line_of[u], e->column, "asymmetric edge: {" + us + ", " + vs +
                                                      "} has weight " + std::to_string(e->w) +
                                                      " here but " + std::to_string(back->w) +
                                                      " on line " +
                                                      std::to_string(line_of[e->to]));
            }
        }
    }
    if (entries.size() != 2 * m) {
        in.fail_at(header_line, 1, "header announces " + std::to_string(m) +
                                       " edges but the vertex lines hold " +
                                       std::to_string(entries.size() / 2));
    }

    graph_builder builder(n);
    for (std::size_t u = 0; u < n; ++u) {
        builder.set_vertex_weight(static_cast<vertex_id>(u), vweight[u]);
        const auto [first, last] = row(u);
        for (auto e = first; e != last; ++e) {
            if (e->to > u) builder.add_edge(static_cast<vertex_id>(u), e->to, e->w);
        }
    }
    return std::move(builder).build();
}

graph read_metis(const std::string& path) { return parse_metis(read_file(path), path); }

std::string to_metis(const graph& g) {
    const auto& vw = g.vertex_weights();
    const auto& ew = g.edge_weights();
    const bool vweights = std::any_of(vw.begin(), vw.end(), [](weight_t w) { return w != 1; });
    const bool eweights = std::any_of(ew.begin(), ew.end(), [](weight_t w) { return w != 1; });
    std::string out = std::to_string(g.vertex_count()) + ' ' + std::to_string(g.edge_count());
    if (vweights || eweights) {
        out += vweights ? " 1" : " 0";
        out += eweights ? "1" : "0";
    }
    out += '\n';
    char buf[24];
    const auto put = [&](std::int64_t x) {
        const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, x);
        out.append(buf, ptr);
    };
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
        bool first = true;
        if (vweights) {
            put(g.vertex_weight(v));
            first = false;
        }
        const weight_t* w = g.edge_weights_begin(v);
        for (const vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) {
            if (!first) out += ' ';
            first = false;
            put(std::int64_t{*u} + 1);
            if (eweights) {
                out += ' ';
                put(*w);
            }
        }
        out += '\n';
    }
    return out;
}

void write_metis(const graph& g, const std::string& path) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw io_error("cannot open " + path + " for writing");
    const auto text = to_metis(g);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw io_error("cannot write " + path);
}

}  // namespace dnnc::partitioner
