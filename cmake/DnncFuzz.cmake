# Included by the top CMakeLists.txt when DNNC_FUZZ is on: the fuzz build (scripts/fuzz.sh).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "DNNC_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++-14")
endif()

# Everything is instrumented for coverage and checked by the sanitizers; a UBSan report
# aborts like an ASan one, so libFuzzer records it as a crash.
set(DNNC_SANITIZE -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
# -O2 for speed, -g for the reports' stacks; scripts/fuzz.sh configures a Debug build, so
# assertions stay on.
add_compile_options(-fsanitize=fuzzer-no-link ${DNNC_SANITIZE} -O2 -g)

find_package(Threads REQUIRED)
find_package(XercesC 3.2 REQUIRED)
find_package(TBB REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json 3 REQUIRED)  # the control plane's codecs (protocol)

add_subdirectory(core)
add_subdirectory(model)
add_subdirectory(dnnc_schemas)
add_subdirectory(protocol)
add_subdirectory(partitioner)
add_subdirectory(tests/fuzz)
