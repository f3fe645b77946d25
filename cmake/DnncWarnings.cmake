# dnnc_warnings: an interface target every project target links to get the warning set.
add_library(dnnc_warnings INTERFACE)
target_compile_options(dnnc_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
