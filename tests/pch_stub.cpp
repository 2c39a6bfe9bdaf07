// The source of the tests' precompiled header (tests/CMakeLists.txt): it compiles nothing else.
