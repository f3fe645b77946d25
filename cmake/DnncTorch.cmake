# LibTorch: Debian's libtorch-dev (CPU) by default; a CUDA build through -DTorch_DIR=...
# Only the targets that include LibTorch headers (the module sim/src/torch_module.cpp and
# bench_dense) compile with the standard it asks for: LibTorch 2.10 and later need C++20.
find_package(Torch REQUIRED)
set(DNNC_TORCH_CXX_STANDARD 17)
if(Torch_VERSION VERSION_GREATER_EQUAL 2.10)
  set(DNNC_TORCH_CXX_STANDARD 20)
endif()
