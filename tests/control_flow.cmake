# Scripted models with control flow (issue 6), included from the top-level CMakeLists.txt.
# scripts/gen_scripted_models.py scripts the models at test time into
# ${CMAKE_BINARY_DIR}/testmodels_scripted (reused while the script is unchanged), with several
# input sets per model that together take every branch. Labels: setup (the fixture), e2e and
# control_flow (each model through --verify and the generated Python on every input set; --fuse
# and --quant-prep on the scripted models with BatchNorm: torchvision's and a script/trace mix,
# which must also show the passes acted), badinput (a construct tinytrace cannot convert: exit 4
# naming the op and its source line).

set(TT_SC_PYTHON /usr/bin/python3)
set(TT_SC_GEN ${CMAKE_SOURCE_DIR}/scripts/gen_scripted_models.py)
set(TT_SC_DIR ${CMAKE_BINARY_DIR}/testmodels_scripted)
set(TT_SC_OUT ${CMAKE_BINARY_DIR}/e2e_scripted_out)
set(TT_SC_DRIVER ${CMAKE_SOURCE_DIR}/tests/e2e/run_scripted.py)
tt_generator_test(gen_models_scripted ${TT_SC_GEN} ${TT_SC_DIR} tt_models_scripted "setup;control_flow" 300)
# One test per line of `GEN --list` ("name kind [op]"): kind "unsupported" is a badinput test
# (exit 4 naming op), every other kind an e2e test through the driver; "torchvision" and "bn" also
# --fuse and --quant-prep (checked to have acted on BatchNorm), "fuse" also --fuse on a model
# without BatchNorm. LABELS are added to each test's own.
function(tt_scripted_tests gen dir out fixture labels)
  tt_script_list(lines ${gen})
  foreach(line IN LISTS lines)
    string(REPLACE " " ";" fields "${line}")
    list(GET fields 0 name)
    list(GET fields 1 kind)
    if(kind STREQUAL "unsupported")
      list(GET fields 2 op)
      add_test(NAME badinput_${name}
               COMMAND ${TT_SC_PYTHON} ${TT_SC_DRIVER} --expect-unsupported ${op}
                       $<TARGET_FILE:tinytrace> ${dir}/${name}.pt ${out}/${name})
      set_tests_properties(badinput_${name} PROPERTIES LABELS "badinput;${labels}" TIMEOUT 300
                           FIXTURES_REQUIRED ${fixture})
      continue()
    endif()
    add_test(NAME e2e_${name}
             COMMAND ${TT_SC_PYTHON} ${TT_SC_DRIVER} $<TARGET_FILE:tinytrace> ${dir}/${name}.pt
                     ${out}/${name})
    set_tests_properties(e2e_${name} PROPERTIES LABELS "e2e;${labels}" TIMEOUT 900
                         FIXTURES_REQUIRED ${fixture})
    if(kind STREQUAL "fuse")
      add_test(NAME e2e_fuse_${name}
               COMMAND ${TT_SC_PYTHON} ${TT_SC_DRIVER} $<TARGET_FILE:tinytrace> ${dir}/${name}.pt
                       ${out}/fuse_${name} --fuse --tolerance 1e-3 --any-model)
      set_tests_properties(e2e_fuse_${name} PROPERTIES LABELS "e2e;fuse;${labels}" TIMEOUT 900
                           FIXTURES_REQUIRED ${fixture})
    endif()
    if(kind STREQUAL "torchvision" OR kind STREQUAL "bn")
      # --fuse on a scripted model: BatchNorm folded inside the lifted graph, still equivalent.
      add_test(NAME e2e_fuse_${name}
               COMMAND ${TT_SC_PYTHON} ${TT_SC_DRIVER} $<TARGET_FILE:tinytrace>
                       ${dir}/${name}.pt ${out}/fuse_${name} --fuse --tolerance 1e-3)
      set_tests_properties(e2e_fuse_${name} PROPERTIES LABELS "e2e;fuse;${labels}" TIMEOUT 900
                           FIXTURES_REQUIRED ${fixture})
      # --quant-prep: the prepared float model (stubs, fused modules) still computes the same.
      add_test(NAME e2e_quant_${name}
               COMMAND ${TT_SC_PYTHON} ${TT_SC_DRIVER} $<TARGET_FILE:tinytrace>
                       ${dir}/${name}.pt ${out}/quant_${name} --quant-prep --tolerance 1e-3)
      set_tests_properties(e2e_quant_${name} PROPERTIES LABELS "e2e;quant;${labels}" TIMEOUT 900
                           FIXTURES_REQUIRED ${fixture})
    endif()
  endforeach()
endfunction()
tt_scripted_tests(${TT_SC_GEN} ${TT_SC_DIR} ${TT_SC_OUT} tt_models_scripted control_flow)
