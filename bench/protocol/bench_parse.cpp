// Document loading benchmark.
//  1. A generated document with 1,000,000 explicit synapses: parse + validate + check
//     (load_document) against a bare Xerces SAX parse of the same file without validation,
//     measured in the same run. Limits: <= 3 s and <= 1.5 GB.
//  2. A compact 100k-neuron / 10M-synapse network: expansion into the model. Limit: <= 2 s.
// Every phase runs in a child process, so its peak memory (ru_maxrss) is its own.
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"

#include <xercesc/framework/LocalFileInputSource.hpp>
#include <xercesc/sax2/DefaultHandler.hpp>
#include <xercesc/sax2/SAX2XMLReader.hpp>
#include <xercesc/sax2/XMLReaderFactory.hpp>
#include <xercesc/util/PlatformUtils.hpp>
#include <xercesc/util/XMLString.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

namespace {

struct measurement {
    double seconds = 0;
    double peak_mb = 0;
    std::size_t count = 0;  // what the phase produced (elements, synapses)
};

// Runs `phase` in a child process and returns its wall time, peak RSS and count.
measurement in_child(const std::function<std::size_t()>& phase) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        measurement m;
        const auto start = std::chrono::steady_clock::now();
        m.count = phase();
        m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        m.peak_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
        if (write(fds[1], &m, sizeof m) != static_cast<ssize_t>(sizeof m)) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    measurement m;
    const bool ok = read(fds[0], &m, sizeof m) == static_cast<ssize_t>(sizeof m);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("benchmark phase failed");
    return m;
}

void write_explicit_document(const std::string& path, int neurons, int synapses) {
    std::ofstream out(path);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<dnnc xmlns=\"urn:dnnc:1\">\n  <network name=\"big\">\n";
    for (int i = 0; i < neurons; ++i) out << "    <neuron id=\"n" << i << "\" model=\"tanh\"/>\n";
    std::uint64_t state = 12345;
    auto next = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(neurons));
    };
    for (int s = 0; s < synapses; ++s)
        out << "    <synapse from=\"n" << next() << "\" to=\"n" << next() << "\" weight=\"0." << (s % 997)
            << "\" delay=\"" << 1 + s % 3 << "\"/>\n";
    out << "  </network>\n  <cluster lead=\"n0\">\n    <node id=\"n0\" port=\"7000\"/>\n  </cluster>\n</dnnc>\n";
}

class counting_handler : public xercesc::DefaultHandler {
public:
    void startElement(const XMLCh* const, const XMLCh* const, const XMLCh* const, const xercesc::Attributes&) override {
        ++elements;
    }
    std::size_t elements = 0;
};

std::size_t bare_xerces_parse(const std::string& path) {
    xercesc::XMLPlatformUtils::Initialize();
    std::size_t elements = 0;
    {
        std::unique_ptr<xercesc::SAX2XMLReader> reader(xercesc::XMLReaderFactory::createXMLReader());
        reader->setFeature(xercesc::XMLUni::fgSAX2CoreValidation, false);
        reader->setFeature(xercesc::XMLUni::fgXercesSchema, false);
        counting_handler handler;
        reader->setContentHandler(&handler);
        XMLCh* file = xercesc::XMLString::transcode(path.c_str());
        reader->parse(xercesc::LocalFileInputSource(file));
        xercesc::XMLString::release(&file);
        elements = handler.elements;
    }
    xercesc::XMLPlatformUtils::Terminate();
    return elements;
}

void report(const char* what, const measurement& m, const char* unit) {
    std::printf("  %-44s %8.3f s  %8.1f MB peak  (%zu %s)\n", what, m.seconds, m.peak_mb, m.count, unit);
}

}  // namespace

int main(int argc, char** argv) {
    const int synapses = argc > 1 ? std::stoi(argv[1]) : 1'000'000;
    const auto dir = std::filesystem::temp_directory_path() / ("dnnc-bench-parse-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string explicit_doc = (dir / "explicit.xml").string();
    write_explicit_document(explicit_doc, 10'000, synapses);
    std::printf("document with %d explicit synapses: %.1f MB\n", synapses,
                static_cast<double>(std::filesystem::file_size(explicit_doc)) / 1e6);

    const auto bare = in_child([&] { return bare_xerces_parse(explicit_doc); });
    const auto load = in_child([&] { return dnnc::protocol::load_document(explicit_doc).net->synapses.size(); });
    const auto load_expand = in_child([&] {
        const auto doc = dnnc::protocol::load_document(explicit_doc);
        return dnnc::model::expand(*doc.net, doc.file).synapse_count();
    });
    report("bare Xerces SAX parse, no validation (peer)", bare, "elements");
    report("load_document: parse + validate + check", load, "synapses");
    report("load_document + expand", load_expand, "synapses");
    std::printf("  ratio load/bare: %.2fx    limit 3 s: %s    limit 1.5 GB: %s\n", load.seconds / bare.seconds,
                load_expand.seconds <= 3.0 ? "met" : "MISSED", load_expand.peak_mb <= 1536 ? "met" : "MISSED");

    const std::string compact_doc = (dir / "compact.xml").string();
    std::ofstream(compact_doc) << R"(<dnnc xmlns="urn:dnnc:1"><network name="compact">
  <population id="P" size="100000" model="tanh"/>
  <projection from="P" to="P" kind="random" p="0.001" weight="0.01" seed="3"/>
</network></dnnc>
)";
    const auto compact_load = in_child([&] { return dnnc::protocol::load_document(compact_doc).net->projections.size(); });
    const auto expand_only = in_child([&] {
        const auto doc = dnnc::protocol::load_document(compact_doc);
        const auto start = std::chrono::steady_clock::now();
        const auto net = dnnc::model::expand(*doc.net, doc.file);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "  expand alone: %.3f s\n", seconds);
        return net.synapse_count();
    });
    std::printf("compact network: 100,000 neurons, random p = 0.001\n");
    report("load_document (compact)", compact_load, "projections");
    report("load_document + expand", expand_only, "synapses");
    std::printf("  limit 2 s for the expansion: %s\n", expand_only.seconds - compact_load.seconds <= 2.0 ? "met" : "MISSED");
    std::filesystem::remove_all(dir);
    return 0;
}
