// Builds the precompiled header that the tests share (tests/CMakeLists.txt); it holds no test.
