// Synapse models in a document: what the checks accept and what they refuse, beyond the
// bad-document corpus (one problem per file there): the sign rule against drawn weights, and
// plasticity against the run settings however they are given.
#include "dnnc/model/check.hpp"
#include "dnnc/model/synapse_models.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {

// A network of two spiking populations with `body` inside it, then `tail` after it.
document plastic_document(const std::string& body, const std::string& tail = "") {
    return parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="t">
  <population id="E" size="4" model="iaf_psc_exp"/>
  <population id="I" size="2" model="iaf_psc_exp" tau_minus="10"/>
)" + body + "\n</network>" + tail + "</dnnc>",
                          "t.xml");
}

// The first problem check_document finds ("" when none).
std::string first_problem(const document& doc) {
    try {
        check_document(doc);
    } catch (const config_error& e) {
        return e.problems().front().message;
    }
    return "";
}

}  // namespace

TEST_CASE("plastic weights on Wmax's side of zero are accepted, constant or drawn") {
    const char* const accepted[] = {
        R"(<projection from="E" to="I" kind="all" weight="0" synapse-model="stdp_synapse"/>)",
        R"(<projection from="E" to="I" kind="all" synapse-model="stdp_synapse"><weight distribution="normal" mean="5" std="2" min="0"/></projection>)",
        R"(<projection from="E" to="I" kind="all" synapse-model="stdp_synapse"><weight distribution="uniform" min="0" max="50"/></projection>)",
        R"(<projection from="E" to="I" kind="all" synapse-model="stdp_synapse"><weight distribution="lognormal" mu="0" sigma="1"/></projection>)",
        R"(<projection from="E" to="I" kind="all" synapse-model="stdp_synapse"><weight distribution="constant" value="7"/></projection>)",
        R"(<synapse-model id="inh" model="vogels_sprekeler_synapse" Wmax="-10"/>
           <projection from="I" to="E" kind="all" synapse-model="inh"><weight distribution="normal" mean="-5" std="2" max="0"/></projection>)",
        R"(<synapse-model id="inh" model="vogels_sprekeler_synapse" Wmax="-10"/><synapse from="I[0]" to="E[1]" weight="-3" synapse-model="inh"/>)",
        // tsodyks2_synapse scales a weight by u x >= 0: either sign, any distribution.
        R"(<projection from="I" to="E" kind="all" synapse-model="tsodyks2_synapse"><weight distribution="normal" mean="-5" std="2"/></projection>)",
        // A static synapse may have any weight, and the plastic rules accept a spike source.
        R"(<synapse-model id="s" model="static_synapse"/><projection from="I" to="E" kind="all" weight="-3" synapse-model="s"/>)",
        R"(<spike-source id="S" size="2"><spike t-ms="1" index="0"/></spike-source><projection from="S" to="E" kind="all" synapse-model="stdp_synapse"/>)",
    };
    for (const char* body : accepted) {
        INFO(body);
        CHECK(first_problem(plastic_document(body)).empty());
    }
}

TEST_CASE("drawn plastic weights that may cross zero are refused at the <weight>, saying which bound to give") {
    const auto negative = plastic_document(R"(<synapse-model id="inh" model="vogels_sprekeler_synapse" Wmax="-10"/>
<projection from="I" to="E" kind="all" synapse-model="inh">
  <weight distribution="uniform" min="-5" max="1"/>
</projection>)");
    try {
        check_document(negative);
        FAIL("accepted");
    } catch (const config_error& e) {
        REQUIRE(e.problems().size() == 1);
        CHECK(e.problems()[0].where.line == 6);  // the <weight>
        CHECK_THAT(e.problems()[0].message,
                   Catch::Contains("projection from 'I' to 'E': weight: uniform distribution may draw weights above 0: synapse-model "
                                   "'inh' (vogels_sprekeler_synapse) keeps its weights between 0 and Wmax -10; give max=\"0\""));
    }
    CHECK_THAT(first_problem(plastic_document(R"(<synapse-model id="inh" model="stdp_synapse" Wmax="-10"/>
<projection from="I" to="E" kind="all" synapse-model="inh"><weight distribution="lognormal" mu="0" sigma="1"/></projection>)")),
               Catch::Contains("lognormal distribution draws positive weights"));
    CHECK_THAT(first_problem(plastic_document(R"(<projection id="ie" from="I" to="E" kind="all" synapse-model="stdp_synapse">
<weight distribution="constant" value="-1"/></projection>)")),
               Catch::Contains("projection 'ie' from 'I' to 'E': weight: constant distribution: value -1 lies on the other side of 0"));
}

TEST_CASE("a plastic connection's source must spike, and its target be of a spiking model") {
    CHECK_THAT(first_problem(plastic_document(R"(<neuron id="r" model="relu"/><synapse from="r" to="E[0]" synapse-model="tsodyks2_synapse"/>)")),
               Catch::Contains("its sources must be of a spiking model (lif, iaf_psc_exp, iaf_psc_alpha, iaf_psc_delta, izhikevich, iaf_cond_exp, iaf_cond_alpha, aeif_cond_exp, aeif_cond_alpha, hh_cond_exp_traub) or a spike source"));
    // Static synapses between any models stay as they were.
    CHECK(first_problem(plastic_document(R"(<neuron id="r" model="relu"/><synapse from="r" to="E[0]" synapse-model="static_synapse"/>)")).empty());
}

TEST_CASE("a plastic network runs in lockstep with batch 1, whoever sets the run") {
    const std::string plastic = R"(<projection from="E" to="I" kind="all" synapse-model="stdp_synapse"/>
<projection id="late" from="I" to="E" kind="all" weight="-2" synapse-model="tsodyks2_synapse"/>)";
    CHECK(first_problem(plastic_document(plastic, R"(<run sync="lockstep" batch="1"/>)")).empty());
    // As `dnnc run --batch 4` and Simulation(batch=4) set it, on a document without <run>:
    // the problem is located at the first plastic connection.
    document doc = plastic_document(plastic);
    doc.run.emplace();
    doc.run->batch = 4;
    try {
        check_document(doc);
        FAIL("accepted");
    } catch (const config_error& e) {
        CHECK(e.problems().front().where.line == 4);
        CHECK_THAT(e.problems().front().message,
                   Catch::Contains("projection from 'E' to 'I': stdp_synapse is plastic, and the run has batch 4"));
    }
    // A static network keeps every run setting.
    CHECK(first_problem(plastic_document(R"(<projection from="E" to="I" kind="all" synapse-model="static_synapse"/>)",
                                         R"(<run sync="window" batch="8"/>)"))
              .empty());
}

TEST_CASE("each problem of a synapse model is reported once, and connections naming it add none") {
    const auto doc = plastic_document(R"(<synapse-model id="m" model="stdp_synapse" tau_plus="0" lambda="-1" Wmax="0"/>
<projection from="E" to="I" kind="all" weight="-4" synapse-model="m"/>)");
    try {
        check_document(doc);
        FAIL("accepted");
    } catch (const config_error& e) {
        REQUIRE(e.problems().size() == 3);
        CHECK_THAT(e.problems()[0].message, Catch::Contains("tau_plus must be > 0 (ms), not 0"));
        CHECK_THAT(e.problems()[1].message, Catch::Contains("lambda must be >= 0, not -1"));
        CHECK_THAT(e.problems()[2].message, Catch::Contains("Wmax must not be 0"));
    }
}

TEST_CASE("more plastic connection elements than an engine's classes hold are refused at the first beyond them") {
    std::string within;
    for (std::size_t k = 0; k < max_plastic_elements; ++k)
        within += R"(<synapse from="E[0]" to="I[1]" synapse-model="stdp_synapse"/>)" "\n";
    within += R"(<synapse from="E[1]" to="I[0]"/>)" "\n";  // static: no class of its own
    CHECK(first_problem(plastic_document(within)).empty());
    const auto beyond = plastic_document(within + R"(<synapse from="E[2]" to="I[0]" synapse-model="stdp_synapse"/>)");
    CHECK(first_problem(beyond) == "synapse from 'E[2]' to 'I[0]': the network's plastic connection elements (<projection>s and "
                                   "<synapse>s with a plastic synapse model) exceed 255, the most a node runs; give many plastic "
                                   "synapses as one kind=\"list\" projection");
    try {
        check_document(beyond);
    } catch (const config_error& e) {
        CHECK(e.problems().front().where.line == 4 + max_plastic_elements + 1);
    }
}
