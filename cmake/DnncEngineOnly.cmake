# Included by the top CMakeLists.txt when DNNC_ENGINE_ONLY is on: the engine (core, model, schemas,
# protocol, sim) with its LibTorch module, the simulation tests and benchmarks, and nothing
# that needs Boost, MPI, CLI11 or pybind11. scripts/cuda-check.sh builds this against the
# CUDA LibTorch of a PyTorch install, on a GPU host that has no Debian packages to install.
find_package(Threads REQUIRED)
find_package(XercesC 3.2 REQUIRED)
find_package(TBB REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
include(cmake/DnncTorch.cmake)

add_subdirectory(core)
add_subdirectory(model)
add_subdirectory(dnnc_schemas)
add_subdirectory(protocol)
add_subdirectory(sim)
if(DNNC_BUILD_TESTS)
  enable_testing()
  add_subdirectory(tests)
endif()
if(DNNC_BUILD_BENCH)
  add_subdirectory(bench/sim)
endif()
