# Black-box runs of the real attnviz executable (ninja's misc/output_test.py in spirit) and the
# PyTorch cross-check. Included by tests/CMakeLists.txt, in its scope: the targets attnviz and
# attnviz_tests exist. Outputs go to the build tree, never to the source tree.

set(ATTNVIZ_CLI_OUT ${CMAKE_CURRENT_BINARY_DIR}/cli_out)
file(MAKE_DIRECTORY ${ATTNVIZ_CLI_OUT})
set(ATTNVIZ_USE_LITE ${PROJECT_SOURCE_DIR}/data/use-lite/layer0.json)
set(ATTNVIZ_STORIES ${PROJECT_SOURCE_DIR}/data/stories260k/layer0.json)

# torch.nn.MultiheadAttention vs attnviz over random shapes (tests/torch_crosscheck.py).
# Exit code 77 = PyTorch not installed: reported as skipped, not passed.
add_test(NAME torch_crosscheck
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/torch_crosscheck.py $<TARGET_FILE:attnviz>)
set_tests_properties(torch_crosscheck PROPERTIES
  SKIP_RETURN_CODE 77
  PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed"
  FAIL_REGULAR_EXPRESSION "FAIL")

add_test(NAME cli_help COMMAND attnviz --help)
set_tests_properties(cli_help PROPERTIES
  PASS_REGULAR_EXPRESSION "dump.*heatmaps.*render.*compare")

add_test(NAME cli_dump_use_lite COMMAND attnviz dump ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/use_lite.json)
set_tests_properties(cli_dump_use_lite PROPERTIES
  PASS_REGULAR_EXPRESSION "4 heads x 14 queries x 14 keys")

add_test(NAME cli_dump_stories_rope
         COMMAND attnviz dump ${ATTNVIZ_STORIES} --causal --rope interleaved --rope-theta 10000 --rope-dim 8
                 -o ${ATTNVIZ_CLI_OUT}/stories_rope.json)
set_tests_properties(cli_dump_stories_rope PROPERTIES
  PASS_REGULAR_EXPRESSION "8 heads x 32 queries x 32 keys")

# --profile prints the four phases, in order, for every subcommand (compare once lacked load,
# render compute).
set(ATTNVIZ_PROFILE_REGEX "profile: load [0-9.]+ s\nprofile: compute [0-9.]+ s\nprofile: render [0-9.]+ s\nprofile: write [0-9.]+ s")
add_test(NAME cli_profile_dump COMMAND attnviz dump ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/profile.json --profile)
add_test(NAME cli_profile_heatmaps COMMAND attnviz heatmaps ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/profile --profile)
add_test(NAME cli_profile_render
         COMMAND attnviz render ${ATTNVIZ_CLI_OUT}/profile.json -o ${ATTNVIZ_CLI_OUT}/profile_render --profile)
add_test(NAME cli_profile_compare
         COMMAND attnviz compare ${ATTNVIZ_USE_LITE} --heads 0,1 -o ${ATTNVIZ_CLI_OUT}/profile.png --profile)
add_test(NAME cli_profile_compare_dumps
         COMMAND attnviz compare ${ATTNVIZ_CLI_OUT}/profile.json ${ATTNVIZ_CLI_OUT}/profile.json
                 -o ${ATTNVIZ_CLI_OUT}/profile2.png --profile)
set_tests_properties(cli_profile_dump cli_profile_heatmaps cli_profile_render cli_profile_compare
                     cli_profile_compare_dumps PROPERTIES PASS_REGULAR_EXPRESSION "${ATTNVIZ_PROFILE_REGEX}")
set_tests_properties(cli_profile_render cli_profile_compare_dumps PROPERTIES DEPENDS cli_profile_dump)

# Bad inputs: each is run twice, once for the exit code (WILL_FAIL) and once for the message
# (a PASS_REGULAR_EXPRESSION alone would ignore the exit code).
function(attnviz_bad_run name regex)
  add_test(NAME ${name}_fails COMMAND attnviz ${ARGN})
  set_tests_properties(${name}_fails PROPERTIES WILL_FAIL TRUE)
  add_test(NAME ${name}_message COMMAND attnviz ${ARGN})
  set_tests_properties(${name}_message PROPERTIES PASS_REGULAR_EXPRESSION "${regex}")
endfunction()

# A sentence file given as the weights file.
attnviz_bad_run(cli_sentence_as_weights "attnviz: error: .*fb_source\\.json: /W_Q"
  dump ${ATTNVIZ_USE_LITE} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/fb_source.json
  -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# RoPE rotates pairs of dimensions: an odd --rope-dim is refused, naming the option.
attnviz_bad_run(cli_rope_odd_dim "attnviz: error: .*--rope-dim.*7"
  dump ${ATTNVIZ_STORIES} --rope interleaved --rope-dim 7 -o ${ATTNVIZ_CLI_OUT}/never_written.json)

# Size and memory guards (BH-22, BH-23, a 2 GB file, a read-only place) and interrupted runs
# leaving no partial file: black-box, on generated input (issue #6).
add_test(NAME limits COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/limits_test.py $<TARGET_FILE:attnviz>)
add_test(NAME interrupt COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/interrupt_test.py $<TARGET_FILE:attnviz>)
# Pipes as inputs: read once, whatever the fast path's fallback or compare's sniff needs.
add_test(NAME pipes COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/pipes_test.py $<TARGET_FILE:attnviz>
         ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
set_tests_properties(limits interrupt pipes PROPERTIES
  PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed"
  RUN_SERIAL TRUE)

# Issue 14: the SVG pictures against the PNGs (xmllint, rsvg-convert) and the HTML report in
# headless chromium (tests/browser/). Both run the real executable.
add_test(NAME svg_pictures COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/svg_test.py $<TARGET_FILE:attnviz>)
add_test(NAME html_report_browser
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/report_test.py $<TARGET_FILE:attnviz>)
add_test(NAME html_report_firefox
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/firefox_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(html_report_browser html_report_firefox PROPERTIES TIMEOUT 300)
attnviz_bad_run(cli_format_unknown "attnviz: error: .*--format.*expected png, svg or html.*png,pdf"
  heatmaps ${ATTNVIZ_USE_LITE} --format png,pdf -o ${ATTNVIZ_CLI_OUT}/format_unknown)
attnviz_bad_run(cli_format_twice "attnviz: error: .*--format.*svg is named twice"
  render ${ATTNVIZ_USE_LITE} --format svg,html,svg -o ${ATTNVIZ_CLI_OUT}/format_twice)
