// The checkout's directory, for unit tests that read files of testdata/ or of the sources.
// Only main.cpp is compiled with its path (TT_SOURCE_DIR_PATH): every other object file stays the
// same in every checkout, so ccache shares them between clones (Note [ccache] in CMakeLists.txt).
#pragma once

const char* tt_test_source_dir();
#define TT_SOURCE_DIR tt_test_source_dir()
