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

# The whole-model path against an independent float64 forward pass (scripts/reference_forward.py),
# on the bundled stories260K GGUF and its F16/BF16 copies in tests/data/stories260k/quantized.
add_test(NAME model_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/model_reference_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(model_reference PROPERTIES PASS_REGULAR_EXPRESSION "3 passed, 0 failed")
# --activations names hook points; an unknown one is refused naming it (and the valid ones).
attnviz_bad_run(cli_activations_unknown "attnviz: error: .*--activations.*\"residual\".*resid_pre, resid_mid"
  dump --model ${PROJECT_SOURCE_DIR}/data/stories260k/stories260K.gguf --token-ids 1,403 --activations resid_pre,residual
  -o ${ATTNVIZ_CLI_OUT}/never_written.safetensors)
# A safetensors dump is a file: standard output takes JSON only.
attnviz_bad_run(cli_safetensors_stdout "attnviz: error: .*standard output.*JSON only"
  dump ${ATTNVIZ_STORIES} --format safetensors -o -)
# dump -o FILE.safetensors against the JSON dump of the same run, read by a reader written from
# the format's description (issue 36): stories260K, qwen2, gpt2, aren-translit, --activations.
add_test(NAME safetensors_dump
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/safetensors_dump_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(safetensors_dump PROPERTIES PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed")
# Every decoder family's synthetic model (tests/data/families) against llama.cpp's own attention
# and logits, against the float64 reference, and as a Hugging Face folder (issue 25), with the
# GGUF-only variants of each family's local RoPE and GELU (issue 37).
add_test(NAME family_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/family_reference_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(family_reference PROPERTIES PASS_REGULAR_EXPRESSION "65 passed, 0 failed")

# --measure norms|alti and --flow against an independent float64 reference (scripts/measures_reference.py,
# networkx's max-flow), issue 20: single layers (stories260K, USE-Lite), the whole stories260K model
# and every block of aren-translit.
add_test(NAME measures_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/measures_reference_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(measures_reference PROPERTIES PASS_REGULAR_EXPRESSION "24 passed, 0 failed")

# Head attribution (issue 20 §3) against an independent float64 reference
# (scripts/reference_attribution.py): DLA within 1e-5, ablation within 1e-4, on stories260K.
add_test(NAME attribution_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/attribution_reference_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(attribution_reference PROPERTIES PASS_REGULAR_EXPRESSION "3 passed, 0 failed")

set(ATTNVIZ_STORIES_GGUF ${PROJECT_SOURCE_DIR}/data/stories260k/stories260K.gguf)
add_test(NAME cli_attribute
         COMMAND attnviz attribute --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --target "," -o ${ATTNVIZ_CLI_OUT}/attribute)
set_tests_properties(cli_attribute PROPERTIES PASS_REGULAR_EXPRESSION
  "wrote attribution.json and attribution.png to .*attribute/\ntarget \",\" \\(id 432\\) at position 4")
attnviz_bad_run(cli_attribute_target_split "attnviz: error: --target: \" upon a\" is 2 tokens, not one: .*--target-id 407"
  attribute --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --target " upon a" -o ${ATTNVIZ_CLI_OUT}/never_written)
add_test(NAME cli_model_heatmaps
         COMMAND attnviz heatmaps --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" -o ${ATTNVIZ_CLI_OUT}/model)
set_tests_properties(cli_model_heatmaps PROPERTIES
  PASS_REGULAR_EXPRESSION "wrote 46 PNG files to .*model/ \\(5 attention blocks.*overview.png")
# A model dump formats each layer as it is computed; --profile counts that as render (issue 11:
# compute is the load, forward pass and capture), and the message counts the blocks.
add_test(NAME cli_profile_model_dump
         COMMAND attnviz dump --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" -o ${ATTNVIZ_CLI_OUT}/model_profile.json --profile)
set_tests_properties(cli_profile_model_dump PROPERTIES PASS_REGULAR_EXPRESSION
  "5 attention blocks of stories260K over 5 tokens\nprofile: compute [0-9.]+ s\nprofile: render [0-9.]+ s\nprofile: write [0-9.]+ s")
add_test(NAME cli_tokenize COMMAND attnviz tokenize --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time")
set_tests_properties(cli_tokenize PROPERTIES
  PASS_REGULAR_EXPRESSION "\"token_ids\":\\[1,403,407,261,378\\]")
# A --layers range far beyond a CTranslate2 model is refused at once (it was a 10^9-entry list:
# 30 s and 4 GB first).
attnviz_bad_run(cli_ct2_huge_layers "attnviz: error: --layers: layer 999999999 does not exist \\(this model has layers 0-5\\)"
  dump --model ${PROJECT_SOURCE_DIR}/data/aren-translit/model --text mcdonald --layers 0-999999999
  -o ${ATTNVIZ_CLI_OUT}/never_written.json)
set_tests_properties(cli_ct2_huge_layers_fails cli_ct2_huge_layers_message PROPERTIES TIMEOUT 10)
# -o naming the model itself (or a file of a model folder) is refused before any work, and the
# model is left as it was (bug: the dump replaced the GGUF, the translation model's model.bin).
add_test(NAME cli_model_copy COMMAND ${CMAKE_COMMAND} -E copy ${ATTNVIZ_STORIES_GGUF} ${ATTNVIZ_CLI_OUT}/own_model.gguf)
attnviz_bad_run(cli_model_as_output "attnviz: error: .*own_model\\.gguf: cannot write: is an input of this run"
  dump --model ${ATTNVIZ_CLI_OUT}/own_model.gguf --text "a" -o ${ATTNVIZ_CLI_OUT}/own_model.gguf)
attnviz_bad_run(cli_census_over_model "attnviz: error: .*own_model\\.gguf: cannot write: is an input of this run"
  compare --model ${ATTNVIZ_CLI_OUT}/own_model.gguf --text "a" --census ${ATTNVIZ_CLI_OUT}/own_model.gguf
  -o ${ATTNVIZ_CLI_OUT}/never_written.png)
add_test(NAME cli_model_as_output_unchanged
         COMMAND ${CMAKE_COMMAND} -E compare_files ${ATTNVIZ_STORIES_GGUF} ${ATTNVIZ_CLI_OUT}/own_model.gguf)
# A fixture, not only an order: `ctest -R census` alone also copies the model first.
set_tests_properties(cli_model_copy PROPERTIES FIXTURES_SETUP own_model)
set_tests_properties(cli_model_as_output_fails cli_model_as_output_message cli_census_over_model_fails
                     cli_census_over_model_message PROPERTIES DEPENDS cli_model_copy FIXTURES_REQUIRED own_model)
set_tests_properties(cli_model_as_output_unchanged PROPERTIES
  DEPENDS "cli_model_as_output_fails;cli_model_as_output_message;cli_census_over_model_fails;cli_census_over_model_message")
add_test(NAME cli_ct2_copy COMMAND ${CMAKE_COMMAND} -E copy_directory ${PROJECT_SOURCE_DIR}/data/aren-translit/model
                                    ${ATTNVIZ_CLI_OUT}/own_ct2)
attnviz_bad_run(cli_ct2_model_bin_as_output "attnviz: error: .*own_ct2/model\\.bin: cannot write: is an input of this run"
  dump --model ${ATTNVIZ_CLI_OUT}/own_ct2 --text mcdonald -o ${ATTNVIZ_CLI_OUT}/own_ct2/model.bin)
set_tests_properties(cli_ct2_model_bin_as_output_fails cli_ct2_model_bin_as_output_message PROPERTIES DEPENDS cli_ct2_copy)
# --max-memory counts every layer's dump text and report values, held until the files are
# written (bug: a 2048-token dump peaked at 3.4x the limit).
attnviz_bad_run(cli_model_dump_memory "needs about [0-9]+ MiB, over the limit of 300 MiB"
  dump --model ${ATTNVIZ_STORIES_GGUF} --text "a" --generate 1000 --max-memory 300 -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# (The report goes head by head, its heads max-pooled past 512 tokens a side: 188 MiB here.)
attnviz_bad_run(cli_model_report_memory "needs about [0-9]+ MiB, over the limit of 150 MiB"
  heatmaps --model ${ATTNVIZ_STORIES_GGUF} --text "a" --generate 1000 --format html --max-memory 150
  -o ${ATTNVIZ_CLI_OUT}/never_written)
# A GGUF that is not one, and a sentence file given as a model.
attnviz_bad_run(cli_model_not_gguf "attnviz: error: .*layer0\\.json: not a GGUF file"
  dump --model ${ATTNVIZ_STORIES} --text "a" -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# Issue 15, command line and messages. Exact messages, each with its exit code.
set(ATTNVIZ_FIXTURES ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
# Runs attnviz with ARGN and passes only if it exits with `code` and its output (stdout then
# stderr, trailing newline stripped) matches `regex` (CTest's properties cannot check both at
# once; cli_expect.cmake does). ';' travels as "@@" (in arguments and regex), since add_test
# splits on it. A multi-byte character such as '·' is matched by '..' (the regex sees bytes).
function(attnviz_expect name code regex)
  string(REPLACE ";" "@@" joined "${ARGN}")
  string(REPLACE ";" "@@" joined_regex "${regex}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DATTNVIZ=$<TARGET_FILE:attnviz> -DEXPECTED_CODE=${code}
                   "-DEXPECTED_REGEX=${joined_regex}" "-DARGS=${joined}" -P ${CMAKE_CURRENT_SOURCE_DIR}/cli_expect.cmake)
endfunction()

# Only V overflows: V alone is named, and the weights are fine without --outputs.
attnviz_expect(cli_v_overflow_named_alone 1
  "^attnviz: error: [^ ]*v_overflow\\.json: the projection V \\(X..W_V \\+ b_V\\) overflows float32 \\(\\|x\\| > 3\\.4e38\\) with these embeddings and weights; only --outputs needs it, the attention weights do not: run without --outputs$"
  dump ${ATTNVIZ_FIXTURES}/v_overflow.json --outputs -o ${ATTNVIZ_CLI_OUT}/never_written.json)
attnviz_expect(cli_v_overflow_weights_fine 0 "^wrote [^ ]*v_overflow.json: 1 head x 1 query x 1 key$"
  dump ${ATTNVIZ_FIXTURES}/v_overflow.json -o ${ATTNVIZ_CLI_OUT}/v_overflow.json)

# One value per --font, repeatable: the argument after it is never taken as a second font.
set(ATTNVIZ_DEJAVU ${ATTNVIZ_DEFAULT_FONT})
attnviz_expect(cli_font_before_sentence 0 "^wrote 5 PNG files to "
  heatmaps --font ${ATTNVIZ_DEJAVU} ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/font_before)
attnviz_expect(cli_font_before_weights 0 "^wrote 5 PNG files to "
  heatmaps ${ATTNVIZ_USE_LITE} --font ${ATTNVIZ_DEJAVU} ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/font_between)
attnviz_expect(cli_font_repeated 0 "^wrote 5 PNG files to "
  heatmaps ${ATTNVIZ_USE_LITE} --font ${ATTNVIZ_DEJAVU} --font ${ATTNVIZ_DEJAVU} -o ${ATTNVIZ_CLI_OUT}/font_twice)
# A word that is no command: said so, with the nearest command (exit 109, an unexpected argument).
attnviz_expect(cli_unknown_command 109
  "^attnviz: error: unknown command \"heatmap\"; did you mean \"heatmaps\"\\? \\(commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve\\)$"
  heatmap ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/never)
attnviz_expect(cli_unknown_command_far 109
  "^attnviz: error: unknown command \"plot\" \\(commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve\\)$"
  plot ${ATTNVIZ_USE_LITE})
attnviz_expect(cli_help_command 109
  "^attnviz: error: unknown command \"help\": for help run attnviz --help, or attnviz COMMAND --help \\(commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve\\)$"
  help)
attnviz_expect(cli_no_command 106 "^attnviz: error: A subcommand is required")
# heatmaps -o out.png: refused, no folder made (the in-process test checks the folder).
attnviz_expect(cli_heatmaps_png_output 1
  "^attnviz: error: -o: \"[^\"]*/out\\.png\" names a \\.png file, but heatmaps writes a folder \\(grid\\.png and head_<h>\\.png\\); give a folder name, e.g\\. -o [^ ]*/out$"
  heatmaps ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/out.png)
# Missing output folders are created, for every command and output.
attnviz_expect(cli_dump_creates_folders 0 "^wrote [^ ]*/new/deep/use_lite\\.json: "
  dump ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/new/deep/use_lite.json)
attnviz_expect(cli_compare_creates_folders 0 "wrote [^ ]*/new2/compare\\.png and [^ ]*/new3/stats\\.csv$"
  compare ${ATTNVIZ_USE_LITE} --heads 0,1 -o ${ATTNVIZ_CLI_OUT}/new2/compare.png --stats ${ATTNVIZ_CLI_OUT}/new3/stats.csv)
# The hidden COMMAND positional (for unknown commands) is not shown as "[]" in the usage line.
attnviz_expect(cli_help_usage 0 "Usage: attnviz \\[OPTIONS\\] SUBCOMMAND" --help)
# The whole model at a glance (issue 13), through the real command line: --rollout and
# --rollout-residual parsed, overview.png and rollout.png written; --census and L<l>H<h> heads.
set(ATTNVIZ_STORIES_MODEL ${PROJECT_SOURCE_DIR}/data/stories260k/stories260K.gguf)
add_test(NAME cli_model_overview_rollout
         COMMAND attnviz heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "Lily saw a cat." --rollout
                 --rollout-residual 0.3 -o ${ATTNVIZ_CLI_OUT}/stories_model)
set_tests_properties(cli_model_overview_rollout PROPERTIES PASS_REGULAR_EXPRESSION "overview.png, rollout.png")
add_test(NAME cli_model_census
         COMMAND attnviz compare --model ${ATTNVIZ_STORIES_MODEL} --text "Lily saw a cat. Lily saw a cat."
                 --census ${ATTNVIZ_CLI_OUT}/census.json -o ${ATTNVIZ_CLI_OUT}/census.png)
set_tests_properties(cli_model_census PROPERTIES PASS_REGULAR_EXPRESSION "top previous-token mass: L1H6 0.665")
add_test(NAME cli_model_compare_heads
         COMMAND attnviz compare --model ${ATTNVIZ_STORIES_MODEL} --text "Lily saw a cat." --heads L0H3,L4H1
                 -o ${ATTNVIZ_CLI_OUT}/model_heads.png)
set_tests_properties(cli_model_compare_heads PROPERTIES PASS_REGULAR_EXPRESSION "L0H3 .*L4H1 ")
# An encoder-decoder's census and heads name their block (enc., dec., cross.); a plain L0H3 is
# ambiguous there and refused with every form listed; malformed block names are refused by the
# parser (105) with the forms.
set(ATTNVIZ_CT2_MODEL ${PROJECT_SOURCE_DIR}/data/aren-translit/model)
attnviz_expect(cli_ct2_census 0
  "top previous-token mass: dec\\.L3H5 0\\.464.*top induction score: dec\\.L4H5 0\\.579, dec\\.L5H4 0\\.523, enc\\.L5H3 0\\.359.*144 heads"
  compare --model ${ATTNVIZ_CT2_MODEL} --text "ماكدونالد" --census ${ATTNVIZ_CLI_OUT}/ct2_census.csv
  -o ${ATTNVIZ_CLI_OUT}/ct2_census.png)
attnviz_expect(cli_ct2_heads_named 0 "enc\\.L0H3 .*enc\\.L1H1 .*wrote"
  compare --model ${ATTNVIZ_CT2_MODEL} --text "ماكدونالد" --heads enc.L0H3,enc.L1H1 -o ${ATTNVIZ_CLI_OUT}/ct2_enc.png)
attnviz_expect(cli_ct2_heads_ambiguous 1
  "^attnviz: error: --heads: L0H3 is ambiguous: this encoder-decoder model has a head L0H3 in each kind of block; name one: enc\\.L0H3 \\(encoder self-attention\\), dec\\.L0H3 \\(decoder self-attention\\) or cross\\.L0H3 \\(decoder cross-attention\\)$"
  compare --model ${ATTNVIZ_CT2_MODEL} --text "ماكدونالد" --heads L0H3,L1H1 -o ${ATTNVIZ_CLI_OUT}/never.png)
attnviz_expect(cli_heads_unknown_block 105
  "--heads: expected heads named L<layer>H<head> .*enc\\.L0H3, dec\\.L0H3 or cross\\.L0H3\\); got \"self\\.L0H3\""
  compare --model ${ATTNVIZ_CT2_MODEL} --text "ماكدونالد" --heads self.L0H3 -o ${ATTNVIZ_CLI_OUT}/never.png)
# heatmaps and render --heads (issue 34): head numbers drawn in every layer; the whole model's
# L<layer>H<head> names are compare's, and the layers are --layers; a head past the record's
# is refused naming the valid ones; alti has no heads.
attnviz_expect(cli_heatmaps_heads 0 "^wrote 3 PNG files to .*heatmaps_heads/ \\(grid\\.png and one per head\\)$"
  heatmaps ${ATTNVIZ_STORIES} --heads 5,H1 -o ${ATTNVIZ_CLI_OUT}/heatmaps_heads)
attnviz_expect(cli_heatmaps_heads_model_named 105
  "^attnviz: error: --heads: takes head numbers, drawn in every layer \\(0,3 or H0,H3\\)@@ choose the layers with --layers \\(compare --heads takes L<layer>H<head>\\)@@ got \"L0H1\""
  heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "Lily" --heads L0H1 -o ${ATTNVIZ_CLI_OUT}/never)
attnviz_expect(cli_render_heads_missing 1 "^attnviz: error: --heads: head 8 does not exist: valid heads are 0.+3$"
  render ${ATTNVIZ_CLI_OUT}/profile.json --heads 8 -o ${ATTNVIZ_CLI_OUT}/never)
set_tests_properties(cli_render_heads_missing PROPERTIES DEPENDS cli_profile_dump)
attnviz_expect(cli_heatmaps_heads_alti 1
  "^attnviz: error: --heads: --measure alti draws one map per layer \\(every head and the residual mixed\\), no heads to choose$"
  heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "Lily" --heads 1 --measure alti -o ${ATTNVIZ_CLI_OUT}/never)
add_test(NAME cli_model_rollout_residual_range
         COMMAND attnviz heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "a" --rollout --rollout-residual 1.5
                 -o ${ATTNVIZ_CLI_OUT}/never)
set_tests_properties(cli_model_rollout_residual_range PROPERTIES
  PASS_REGULAR_EXPRESSION "--rollout-residual: expected a number from 0 to 1, got \"1.5\"")
# Issue 14: the SVG pictures against the PNGs (xmllint, rsvg-convert) and the HTML report in
# headless chromium (tests/browser/). Both run the real executable.
add_test(NAME svg_pictures COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/svg_test.py $<TARGET_FILE:attnviz>)
add_test(NAME html_report_browser
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/report_test.py $<TARGET_FILE:attnviz>)
add_test(NAME html_report_firefox
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/firefox_test.py $<TARGET_FILE:attnviz>)
add_test(NAME html_report_views
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/views_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(html_report_browser html_report_firefox html_report_views PROPERTIES TIMEOUT 300)
# Issue 34: a conversation's turns in the report's text view, in headless chromium.
add_test(NAME html_report_chat_turns
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/chat_turns_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(html_report_chat_turns PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "chat_turns_test: 3 passed, 0 failed")
# Issue 20: the report's switch between weights and --measure norms, in headless chromium.
add_test(NAME html_report_measure_switch
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/measure_switch_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(html_report_measure_switch PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "3 passed, 0 failed")
# Issue 23: everything a run wrote is reachable from its page (links, rollout, measures, census).
add_test(NAME html_report_run_files
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/run_files_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(html_report_run_files PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "run_files_test: all checks passed")
attnviz_bad_run(cli_format_unknown "attnviz: error: .*--format.*expected png, svg or html.*png,pdf"
  heatmaps ${ATTNVIZ_USE_LITE} --format png,pdf -o ${ATTNVIZ_CLI_OUT}/format_unknown)
attnviz_bad_run(cli_format_twice "attnviz: error: .*--format.*svg is named twice"
  render ${ATTNVIZ_USE_LITE} --format svg,html,svg -o ${ATTNVIZ_CLI_OUT}/format_twice)
# Issue 24, section 4 (paper cuts, command line). tokenize's stdout, when it is not a terminal,
# is one JSON document and nothing else (it was a JSON line and a table: `| jq .` failed).
attnviz_expect(cli_tokenize_json_only 0
  "^\\{\"tokens\":\\[[^]]*\\],\"token_ids\":\\[1,403,407,261,378\\],\"token_texts\":\\[\"<s>\",\" Once\",\" upon\",\" a\",\" time\"\\]\\}$"
  tokenize --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time")
# Issue 37: tokenize on a Hugging Face folder whose tokenizer.json has an added token past the
# model's 512 embeddings printed the ids without the warning dump gives for the same folder and
# text; both now say it (require_tokenizer_fits), in the same words.
set(ATTNVIZ_PAST_FOLDER ${ATTNVIZ_CLI_OUT}/past_embeddings)
add_test(NAME cli_past_embeddings_folder
         COMMAND ${CMAKE_COMMAND} -E copy_directory ${PROJECT_SOURCE_DIR}/tests/data/stories260k/hf-safetensors ${ATTNVIZ_PAST_FOLDER})
add_test(NAME cli_past_embeddings_tokenizer
         COMMAND ${CMAKE_COMMAND} -E copy ${ATTNVIZ_FIXTURES}/tokenizer_past_embeddings.json ${ATTNVIZ_PAST_FOLDER}/tokenizer.json)
set(ATTNVIZ_PAST_WARNING "attnviz: warning: [^ ]*past_embeddings/tokenizer\\.json: 1 added token has an id past the 512 token embeddings of the model [^ ]*past_embeddings \\(0-511\\), so a text that spells one is refused: \"<big>\" 600")
attnviz_expect(cli_tokenize_past_embeddings 0
  "^\\{\"tokens\":\\[\"a\",\"b\"\\],\"token_ids\":\\[0,1\\],\"token_texts\":\\[\"a\",\"b\"\\]\\}[\r\n]+${ATTNVIZ_PAST_WARNING}$"
  tokenize --model ${ATTNVIZ_PAST_FOLDER} --text "ab")
attnviz_expect(cli_dump_past_embeddings 0 "^wrote [^\r\n]*\r?\n${ATTNVIZ_PAST_WARNING}$"
  dump --model ${ATTNVIZ_PAST_FOLDER} --text "ab" -o ${ATTNVIZ_CLI_OUT}/past_embeddings.json)
set_tests_properties(cli_past_embeddings_folder PROPERTIES FIXTURES_SETUP past_folder)
set_tests_properties(cli_past_embeddings_tokenizer PROPERTIES FIXTURES_SETUP past_folder DEPENDS cli_past_embeddings_folder)
set_tests_properties(cli_tokenize_past_embeddings cli_dump_past_embeddings PROPERTIES FIXTURES_REQUIRED past_folder)
# Misspelt flags get the nearest flag of their command; an option before the command is said to be one.
attnviz_expect(cli_misspelt_flag 109
  "^attnviz: error: dump: unknown option \"--modle\"@@ did you mean \"--model\"\\? \\(see attnviz dump --help\\)$"
  dump --modle ${ATTNVIZ_STORIES_GGUF} --text a -o ${ATTNVIZ_CLI_OUT}/never_written.json)
attnviz_expect(cli_option_before_command 109
  "^attnviz: error: option \"-o\" comes before any command@@ name the command first: attnviz COMMAND -o out/x \\(commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve\\)$"
  -o out/x)
# -h is help only alone: "-heads" (CLI11 read -h, then "-eads") printed help and exited 0.
attnviz_expect(cli_h_bundle_is_unknown_option 109
  "^attnviz: error: compare: unknown option \"-heads\"@@ did you mean \"--heads\"\\? \\(see attnviz compare --help\\)$"
  compare ${ATTNVIZ_USE_LITE} -heads 0 -o ${ATTNVIZ_CLI_OUT}/never_written.png)
# A switch refuses a value: "--causal=false" was read as "not given".
attnviz_expect(cli_switch_with_value 114
  "^attnviz: error: dump: the switch --causal takes no value: "
  dump ${ATTNVIZ_USE_LITE} --causal=false -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# dump -o -: the JSON on stdout (stdout, then stderr's one line).
attnviz_expect(cli_dump_stdout 0 "^\\{\n.*\n\\}\nwrote standard output: 4 heads x 14 queries x 14 keys$"
  dump ${ATTNVIZ_USE_LITE} -o -)
attnviz_expect(cli_heatmaps_stdout_refused 1
  "^attnviz: error: -o: \"-\" \\(standard output\\) is for dump's JSON@@ heatmaps writes a folder \\(grid.png and head_<h>.png\\): give a folder name$"
  heatmaps ${ATTNVIZ_USE_LITE} -o -)
# -o naming an existing file where a folder must be (this very file).
attnviz_expect(cli_output_is_file 2 "^attnviz: error: [^ ]*/cli_tests\\.cmake: cannot write: is a file, not a folder$"
  heatmaps ${ATTNVIZ_USE_LITE} -o ${CMAKE_CURRENT_SOURCE_DIR}/cli_tests.cmake)
# tokenize on a terminal (a pty): a table with a header row; --json and pipes: the JSON document.
add_test(NAME tokenize_terminal COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/terminal_test.py
         $<TARGET_FILE:attnviz> ${ATTNVIZ_STORIES_GGUF})
set_tests_properties(tokenize_terminal PROPERTIES PASS_REGULAR_EXPRESSION "3 passed, 0 failed")
# Issue 24 §4 (paper cuts, pictures and help): the top-level help names whole models; render's
# --rollout asks for a model dump, not for --model, which render does not take.
add_test(NAME cli_help_whole_models COMMAND attnviz --help)
set_tests_properties(cli_help_whole_models PROPERTIES PASS_REGULAR_EXPRESSION "whole model \\(--model: GGUF")
add_test(NAME cli_render_help_rollout COMMAND attnviz render --help)
set_tests_properties(cli_render_help_rollout PROPERTIES
  PASS_REGULAR_EXPRESSION "--rollout +With a model dump"
  FAIL_REGULAR_EXPRESSION "With --model")
# compare --census --format html once wrote only the PNG without saying so: every format asked
# is written beside -o and named.
attnviz_expect(cli_census_formats 0
  "wrote [^ ]*/census_f\\.html and [^ ]*/census_f\\.csv: 40 heads"
  compare --model ${ATTNVIZ_STORIES_MODEL} --text "Lily saw a cat." --census ${ATTNVIZ_CLI_OUT}/census_f.csv
  --format html -o ${ATTNVIZ_CLI_OUT}/census_f.png)
# heatmaps --max-size 300 on an 8-head model was refused ("show fewer heads", which heatmaps
# cannot do): the grid and the overview are thumbnails, said in warnings.
attnviz_expect(cli_small_max_size_thumbnail 0
  "wrote 10 PNG files.*the grid of 8 heads is drawn as a [0-9]+ [^ ]+ [0-9]+ px thumbnail of its cells alone.*overview\\.png: drawn as a [0-9]+ [^ ]+ [0-9]+ px thumbnail"
  heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "Once upon a time there was" --layers 0 --max-size 300
  -o ${ATTNVIZ_CLI_OUT}/small_max_size)
# Issue 24 §2: nothing given is silently ignored. --heads L<l>H<h> on a single layer takes
# exactly those heads (the table lists L0H1 and L0H2, nothing else); a layer or head that does
# not exist is refused, naming the valid ones, with nothing written.
attnviz_expect(cli_heads_named_single_layer 0
  "^head [^\n]*\nL0H1 [^\n]*\nL0H2 [^\n]*\n\\(entropies"
  compare ${ATTNVIZ_USE_LITE} --heads L0H1,L0H2 -o ${ATTNVIZ_CLI_OUT}/heads_named.png)
attnviz_expect(cli_heads_other_layer 1
  "^attnviz: error: --heads: L5H1 is not in [^ ]*layer0\\.json, which holds layer 0: valid heads are L0H0–L0H3$"
  compare ${ATTNVIZ_USE_LITE} --heads L5H1 -o ${ATTNVIZ_CLI_OUT}/never_written.png)
attnviz_expect(cli_heads_missing_head 1 "^attnviz: error: --heads: L0H9 does not exist: valid heads are L0H0–L0H3$"
  compare ${ATTNVIZ_USE_LITE} --heads L0H9 -o ${ATTNVIZ_CLI_OUT}/never_written.png)
# --causal and --no-causal (which overrides a weights file's "causal": true) exclude each other.
attnviz_expect(cli_causal_and_no_causal 108 "^attnviz: error: --causal excludes --no-causal"
  dump ${ATTNVIZ_STORIES} --causal --no-causal -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# The bundled examples, run as scripts/demo.sh runs them, print one line and no warning: the
# members only people read (description, licence, reference_…) are documented metadata.
attnviz_expect(cli_bundled_use_lite_quiet 0 "^wrote [^\n]*$" heatmaps ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/quiet1)
attnviz_expect(cli_bundled_stories_quiet 0 "^wrote [^\n]*$"
  heatmaps ${ATTNVIZ_STORIES} --causal -o ${ATTNVIZ_CLI_OUT}/quiet2)
attnviz_expect(cli_bundled_aren_quiet 0 "^wrote [^\n]*$"
  heatmaps ${PROJECT_SOURCE_DIR}/data/aren-translit/mcdonald/decoder_layer2.json
  --source ${PROJECT_SOURCE_DIR}/data/aren-translit/mcdonald/source.json -o ${ATTNVIZ_CLI_OUT}/quiet3)
# Every member a dump attnviz writes is one its readers know: a decoder's model dump with every
# optional field (rollout, logits, a continuation), a translation model's (source tokens and
# text), and a single-layer dump with scores and outputs are drawn back without a warning.
attnviz_expect(cli_quiet_dump_decoder 0 "^wrote [^\n]*\ngenerated:\n[^\n]*$"
  dump --model ${ATTNVIZ_STORIES_MODEL} --text "Lily saw a cat." --rollout --logits --generate 2
  -o ${ATTNVIZ_CLI_OUT}/quiet_decoder.json)
attnviz_expect(cli_quiet_dump_ct2 0 "^wrote [^\n]*\ntranslation: [^\n]*$"
  dump --model ${ATTNVIZ_CT2_MODEL} --text "ماكدونالد" -o ${ATTNVIZ_CLI_OUT}/quiet_ct2.json)
attnviz_expect(cli_quiet_dump_layer 0 "^wrote [^\n]*$"
  dump ${ATTNVIZ_STORIES} --causal --scores --outputs -o ${ATTNVIZ_CLI_OUT}/quiet_layer.json)
attnviz_expect(cli_quiet_render_decoder 0 "^wrote [^\n]*$"
  render ${ATTNVIZ_CLI_OUT}/quiet_decoder.json -o ${ATTNVIZ_CLI_OUT}/quiet_decoder)
attnviz_expect(cli_quiet_render_ct2 0 "^wrote [^\n]*$"
  render ${ATTNVIZ_CLI_OUT}/quiet_ct2.json -o ${ATTNVIZ_CLI_OUT}/quiet_ct2)
attnviz_expect(cli_quiet_render_layer 0 "^wrote [^\n]*$"
  render ${ATTNVIZ_CLI_OUT}/quiet_layer.json -o ${ATTNVIZ_CLI_OUT}/quiet_layer)
set_tests_properties(cli_quiet_render_decoder PROPERTIES DEPENDS cli_quiet_dump_decoder)
set_tests_properties(cli_quiet_render_ct2 PROPERTIES DEPENDS cli_quiet_dump_ct2)
set_tests_properties(cli_quiet_render_layer PROPERTIES DEPENDS cli_quiet_dump_layer)
# A new user forgot --model (and the reverse): the message says how to give each file.
attnviz_expect(cli_gguf_without_model 1
  "^attnviz: error: [^ ]*stories260K\\.gguf: is a GGUF model file, not JSON: give a whole model with --model$"
  heatmaps ${ATTNVIZ_STORIES_GGUF} -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_safetensors_as_json 1
  "^attnviz: error: [^ ]*model\\.safetensors: is a safetensors file, not JSON: give a Hugging Face model's folder with --model, or an attnviz safetensors dump to render or compare$"
  heatmaps ${PROJECT_SOURCE_DIR}/tests/data/stories260k/hf-safetensors/model.safetensors -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_json_as_model 1
  "^attnviz: error: [^ ]*layer0\\.json: not a GGUF file \\(its first bytes are not \"GGUF\"\\)@@ it looks like JSON: a layer's JSON is given without --model$"
  heatmaps --model ${ATTNVIZ_USE_LITE} --text hi -o ${ATTNVIZ_CLI_OUT}/never_written)
# Issue 23: a --scale, --exclude-sink or --rows choice that does not fit the command says which
# commands (or options) take it; exit 1, nothing written.
attnviz_expect(cli_compare_scale_log 1
  "^attnviz: error: --scale: compare puts every head on one colour scale: use fixed or shared \\(log is for heatmaps and render\\)$"
  compare ${ATTNVIZ_USE_LITE} --scale log -o ${ATTNVIZ_CLI_OUT}/never_written.png)
attnviz_expect(cli_exclude_sink_fixed 1
  "^attnviz: error: --exclude-sink: leaves the sink out of a computed range: it needs --scale head, layer or shared \\(got --scale fixed\\)$"
  heatmaps ${ATTNVIZ_USE_LITE} --exclude-sink -o ${ATTNVIZ_CLI_OUT}/never_written)
# compare's parser has no --exclude-sink (its --help listed a flag it always refused, issue 34).
attnviz_expect(cli_exclude_sink_compare 109
  "^attnviz: error: compare: unknown option \"--exclude-sink\": it is an option of heatmaps and render \\(see attnviz compare --help\\)$"
  compare ${ATTNVIZ_USE_LITE} --scale shared --exclude-sink -o ${ATTNVIZ_CLI_OUT}/never_written.png)
attnviz_expect(cli_rows_generated_without_generate 1
  "^attnviz: error: --rows: generated draws the rows of generated tokens: it needs --model with --generate N \\(N > 0\\), or render of a dump of such a run$"
  heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "Lily" --rows generated -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_rows_generated_render_no_continuation 1
  "^attnviz: error: --rows: generated: this run has no generated tokens \\(made without --generate N, or the model stopped at once\\); use --rows all$"
  render ${ATTNVIZ_FIXTURES}/one_head.json --rows generated -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_scale_unknown 105 "^attnviz: error: --scale: bogus not in \\{fixed,head,layer,shared,log\\}"
  heatmaps ${ATTNVIZ_USE_LITE} --scale bogus -o ${ATTNVIZ_CLI_OUT}/never_written)
# --generate: the continuation is printed verbatim after "generated:", newlines as newlines.
attnviz_expect(cli_generated_verbatim 0
  "\ngenerated:\n, there was a little girl named Lily\\. She$"
  heatmaps --model ${ATTNVIZ_STORIES_MODEL} --text "Once upon a time" --generate 12 --layers 0 --format html
  -o ${ATTNVIZ_CLI_OUT}/generated_verbatim)
# Issue 25: a BERT GGUF runs as an encoder ([CLS] ... [SEP], no causal mask); it has nothing to
# continue, and --token-types must give one segment per token.
attnviz_expect(cli_bert_heatmaps 0 "wrote 11 PNG files to .*bert/ \\(2 attention blocks"
  heatmaps --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b c d" -o ${ATTNVIZ_CLI_OUT}/bert)
attnviz_expect(cli_bert_generate 1
  "^attnviz: error: --generate: [^ ]*synthetic-bert\\.gguf is an encoder \\(bert\\): its attention is bidirectional and it predicts no next token, so there is nothing to continue$"
  dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b" --generate 2 -o ${ATTNVIZ_CLI_OUT}/never_written.json)
attnviz_expect(cli_bert_token_types 1 "^attnviz: error: --token-types: gives 2 token types for 4 tokens \\(one per token\\)$"
  dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b" --token-types 0,1 -o ${ATTNVIZ_CLI_OUT}/never_written.json)

# explain (issue 21): the neuron view and circuits against a float64 reference of their own
# (scripts/explain_reference.py) on stories260K, USE-Lite, aren-translit and the stories260K GGUF.
add_test(NAME explain_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/explain_reference_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(explain_reference PROPERTIES PASS_REGULAR_EXPRESSION "7 passed, 0 failed")
attnviz_bad_run(cli_explain_head_form "attnviz: error: --head: expected L<layer>H<head>"
  explain --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --head 3 -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_bad_run(cli_explain_layer_range "attnviz: error: --head: L5H0: layer 5 does not exist \\(the model has 5 layers, 0-4\\)"
  explain --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --head L5H0 -o ${ATTNVIZ_CLI_OUT}/never_written)
add_test(NAME cli_profile_explain
         COMMAND attnviz explain ${ATTNVIZ_USE_LITE} --head 1 -o ${ATTNVIZ_CLI_OUT}/explain_profile --profile)
set_tests_properties(cli_profile_explain PROPERTIES PASS_REGULAR_EXPRESSION "${ATTNVIZ_PROFILE_REGEX}")
# attribute and the corpus census run decoders only: a BERT file is named as an encoder, not as an
# unsupported architecture (exit 1, nothing written).
attnviz_expect(cli_attribute_encoder 1
  "^attnviz: error: --model: [^ ]*synthetic-bert\\.gguf is an encoder \\(bert\\): this command reads decoder-only models"
  attribute --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b" -o ${ATTNVIZ_CLI_OUT}/never_written)
# explain reads BERT too: the neuron view of an encoder head (no causal mask, no copying score).
attnviz_expect(cli_explain_encoder 0 "wrote explain.json, explain.png, circuits.png to .*explain_bert/ \\(L1H0, query"
  explain --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b c" --head L1H0 -o ${ATTNVIZ_CLI_OUT}/explain_bert)
# --measure norms|alti read BERT's post-LN blocks (values held by measures_reference); --flow does not.
attnviz_expect(cli_measure_encoder 0 "wrote [0-9]+ PNG files to .*bert_alti/ \\(2 attention blocks"
  heatmaps --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b c" --measure alti -o ${ATTNVIZ_CLI_OUT}/bert_alti)
attnviz_expect(cli_flow_encoder 1
  "^attnviz: error: --flow: [^ ]*synthetic-bert\\.gguf is an encoder \\(bert\\): not computed for encoders yet$"
  dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/synthetic-bert.gguf --text "a b" --flow -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# attribute: a tiny effect is written with three significant digits, never "-0.000" (GPT-2's
# synthetic model predicts its target with p ≈ 1, so log p and every ablation are ~1e-4).
attnviz_expect(cli_attribute_tiny_values 0
  "log p -0\\.000143\ntop direct logit attribution: .*\nlargest drop in log p when ablated: L1H0 -0\\.00025, L1H3 -1\\.45e-05"
  attribute --model ${CMAKE_CURRENT_SOURCE_DIR}/data/families/gpt2.gguf --token-ids 1,5,6,7,8,9,10 -o ${ATTNVIZ_CLI_OUT}/attribute_tiny)

# attribute on an encoder-decoder (issue 20 §3): the decoder's next token, heads named enc./dec./cross.,
# against scripts/reference_attribution.py --ct2 (DLA within 1e-5, ablation within 1e-4).
add_test(NAME attribution_ct2_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/attribution_ct2_reference_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(attribution_ct2_reference PROPERTIES PASS_REGULAR_EXPRESSION "3 passed, 0 failed")
attnviz_expect(cli_attribute_ct2 0
  "^wrote attribution.json and attribution.png to [^\n]*\ntarget \"</s>\" \\(id 2\\) at position 8 \"d\": logit 10.103, log p -0.014\ntop direct logit attribution: dec.L5H5 0.644, dec.L5H0 0.569, dec.L4H6 0.478\nlargest drop in log p when ablated: dec.L5H0 -0.012, cross.L2H5 -0.008, cross.L5H1 -0.007$"
  attribute --model ${ATTNVIZ_CT2_MODEL} --source-tokens "م ا ك د و ن ا ل د" -o ${ATTNVIZ_CLI_OUT}/attribute_ct2)
attnviz_bad_run(cli_attribute_ct2_target "attnviz: error: --target: \"xy\" is not a token of the target vocabulary .*target_vocabulary.txt \\(one entry"
  attribute --model ${ATTNVIZ_CT2_MODEL} --source-tokens "م ا ك" --target xy -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_bad_run(cli_attribute_ct2_target_id "attnviz: error: --target-id: 43 is outside the target vocabulary of 43 tokens \\(0-42\\)"
  attribute --model ${ATTNVIZ_CT2_MODEL} --source-tokens "م ا ك" --target-id 43 -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_bad_run(cli_attribute_ct2_position "attnviz: error: --position: 5 is past the text: the decoder's 5 tokens are positions 0-4 \\(<s> at 0\\)"
  attribute --model ${ATTNVIZ_CT2_MODEL} --source-tokens "م ا ك" --position 5 -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_bad_run(cli_attribute_ct2_token_ids "attnviz: error: --token-ids: is for decoder-only models; give --source-tokens or --text"
  attribute --model ${ATTNVIZ_CT2_MODEL} --token-ids 1,2 -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_bad_run(cli_attribute_decoder_target_tokens "attnviz: error: --target-tokens: is for encoder-decoder \\(CTranslate2\\) models"
  attribute --model ${ATTNVIZ_STORIES_GGUF} --text "Once" --target-tokens "a b" -o ${ATTNVIZ_CLI_OUT}/never_written)
# compare --model --measure alti: ALTI has no heads; the refusal says why and names both ways that work.
attnviz_bad_run(cli_compare_model_alti
  "attnviz: error: --measure: alti has one map per layer \\(every head and the residual mixed\\), no heads to compare or census; draw every layer with heatmaps --model .* --measure alti, or compare two layers' files from dump --model .* --measure alti --layers 2"
  compare --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --measure alti --heads L0H1,L1H2 -o ${ATTNVIZ_CLI_OUT}/never_written.png)
# A GGUF file's quantized weights multiply as llama.cpp's do (activations rounded to Q8_0 here)
# unless --exact-matmul; the dump's model block says which, per weight type (docs/models.md
# "Quantized products").
foreach(mode default exact)
  if(mode STREQUAL "exact")
    set(flag "--exact-matmul")
    set(expected "q8_0: float32")
  else()
    set(flag "")
    set(expected "q8_0: q8_0 activations, as llama.cpp")
  endif()
  add_test(NAME cli_dump_q8_matmul_${mode}
           COMMAND /bin/sh -c "$<TARGET_FILE:attnviz> dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/q8-matmul/qwen2-q8_0.gguf --token-ids 1,40,77 --layers 0 ${flag} -o ${ATTNVIZ_CLI_OUT}/q8_${mode}.json >/dev/null && /usr/bin/python3 -c \"import json, sys; print('matmul:', json.load(open(sys.argv[1]))['model']['matmul'])\" ${ATTNVIZ_CLI_OUT}/q8_${mode}.json")
  set_tests_properties(cli_dump_q8_matmul_${mode} PROPERTIES PASS_REGULAR_EXPRESSION "^matmul: ${expected}\n$")
  # The BERT encoder the same way.
  add_test(NAME cli_dump_q8_matmul_bert_${mode}
           COMMAND /bin/sh -c "$<TARGET_FILE:attnviz> dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/q8-matmul/bert-q8_0.gguf --token-ids 2,7,12,3 --layers 0 ${flag} -o ${ATTNVIZ_CLI_OUT}/q8_bert_${mode}.json >/dev/null && /usr/bin/python3 -c \"import json, sys; print('matmul:', json.load(open(sys.argv[1]))['model']['matmul'])\" ${ATTNVIZ_CLI_OUT}/q8_bert_${mode}.json")
  set_tests_properties(cli_dump_q8_matmul_bert_${mode} PROPERTIES PASS_REGULAR_EXPRESSION "^matmul: ${expected}\n$")
endforeach()
# attribute multiplies in float32 whatever the file holds: DLA's terms must add up to the logit, which
# Q8_0 products (activations rounded to 8 bits) would break (it stopped with an internal error).
attnviz_expect(cli_attribute_q8_float32 0
  "^wrote attribution.json and attribution.png to [^\n]*\ntarget \"<0x02>\" \\(id 5\\) at position 10 \"<0x64>\": logit -1\\.419, log p -85\\.729\n"
  attribute --model ${CMAKE_CURRENT_SOURCE_DIR}/data/q8-matmul/qwen2-q8_0.gguf --text "hello world" --target-id 5 -o ${ATTNVIZ_CLI_OUT}/attribute_q8)
# --exact-matmul is named where it changes nothing: refused without --model, warned on a model whose weights are all f32.
attnviz_bad_run(cli_exact_matmul_needs_model "attnviz: error: --exact-matmul: needs --model"
  dump ${CMAKE_CURRENT_SOURCE_DIR}/../data/stories260k/layer0.json --exact-matmul -o ${ATTNVIZ_CLI_OUT}/never_written.json)
attnviz_expect(cli_exact_matmul_ignored 0
  "attnviz: warning: --exact-matmul: [^\n]*stories260K\\.gguf has no quantized or half-precision weights that attnviz multiplies as llama\\.cpp \\(only GGUF decoders and BERT encoders with weights other than f32\\): ignored"
  dump --model ${ATTNVIZ_STORIES_GGUF} --token-ids 1,5,6 --exact-matmul -o ${ATTNVIZ_CLI_OUT}/exact_ignored.json)

# Stale files: a run into a folder that holds another run's outputs names the ones it did not
# write (a reader would take them for this run's), and deletes nothing. PNG pictures of two
# layers, then the HTML report into the same folder: the layer folders are named, counted.
add_test(NAME cli_stale_setup COMMAND ${CMAKE_COMMAND} -E rm -rf ${ATTNVIZ_CLI_OUT}/stale_model ${ATTNVIZ_CLI_OUT}/stale_attribute)
add_test(NAME cli_stale_model_png
         COMMAND attnviz heatmaps --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --layers 0-1 -o ${ATTNVIZ_CLI_OUT}/stale_model)
attnviz_expect(cli_stale_model_html 0
  "^wrote 2 files \\(html\\) to [^\n]*stale_model/ [^\n]*\nattnviz: warning: [^\n]*stale_model already holds 18 files from an earlier run that this run did not write, so they are not from it: layer_0/ \\(9 files\\), layer_1/ \\(9 files\\)$"
  heatmaps --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --layers 0-1 --format html -o ${ATTNVIZ_CLI_OUT}/stale_model)
# attribute's picture in another format: attribution.png is named.
add_test(NAME cli_stale_attribute_png
         COMMAND attnviz attribute --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --target "," -o ${ATTNVIZ_CLI_OUT}/stale_attribute)
attnviz_expect(cli_stale_attribute_svg 0
  "\nattnviz: warning: [^\n]*stale_attribute already holds 1 file from an earlier run that this run did not write, so it is not from it: attribution\\.png$"
  attribute --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --target "," --format svg -o ${ATTNVIZ_CLI_OUT}/stale_attribute)
set_tests_properties(cli_stale_model_png cli_stale_attribute_png PROPERTIES DEPENDS cli_stale_setup)
set_tests_properties(cli_stale_model_html PROPERTIES DEPENDS cli_stale_model_png)
set_tests_properties(cli_stale_attribute_svg PROPERTIES DEPENDS cli_stale_attribute_png)

# One warning, said once: --exact-matmul on a model without Q8_0 weights is warned about exactly
# once by every command that takes it (it was raised in two places: run_model and
# prepare_decoder_run). cli_count.cmake fails on zero and on two.
function(attnviz_expect_count name pattern count)
  string(REPLACE ";" "@@" joined "${ARGN}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DATTNVIZ=$<TARGET_FILE:attnviz> "-DPATTERN=${pattern}" -DEXPECTED_COUNT=${count}
                   "-DARGS=${joined}" -P ${CMAKE_CURRENT_SOURCE_DIR}/cli_count.cmake)
endfunction()
set(ATTNVIZ_EXACT_IGNORED "attnviz: warning: --exact-matmul: [^\n]*: ignored")
set(ATTNVIZ_REPEATED_TEXT "Lily saw a cat. Lily saw a cat.")
attnviz_expect_count(cli_exact_matmul_once_dump "${ATTNVIZ_EXACT_IGNORED}" 1
  dump --model ${ATTNVIZ_STORIES_GGUF} --text ${ATTNVIZ_REPEATED_TEXT} --exact-matmul -o ${ATTNVIZ_CLI_OUT}/exact_once.json)
attnviz_expect_count(cli_exact_matmul_once_heatmaps "${ATTNVIZ_EXACT_IGNORED}" 1
  heatmaps --model ${ATTNVIZ_STORIES_GGUF} --text ${ATTNVIZ_REPEATED_TEXT} --layers 0 --exact-matmul -o ${ATTNVIZ_CLI_OUT}/exact_once)
attnviz_expect_count(cli_exact_matmul_once_compare "${ATTNVIZ_EXACT_IGNORED}" 1
  compare --model ${ATTNVIZ_STORIES_GGUF} --text ${ATTNVIZ_REPEATED_TEXT} --heads L0H1,L1H2 --exact-matmul -o ${ATTNVIZ_CLI_OUT}/exact_once.png)
attnviz_expect_count(cli_exact_matmul_once_census "${ATTNVIZ_EXACT_IGNORED}" 1
  compare --model ${ATTNVIZ_STORIES_GGUF} --text ${ATTNVIZ_REPEATED_TEXT} --census ${ATTNVIZ_CLI_OUT}/exact_once.csv --exact-matmul
  -o ${ATTNVIZ_CLI_OUT}/exact_once_census.png)
attnviz_expect_count(cli_exact_matmul_once_explain "${ATTNVIZ_EXACT_IGNORED}" 1
  explain --model ${ATTNVIZ_STORIES_GGUF} --text ${ATTNVIZ_REPEATED_TEXT} --head L1H2 --exact-matmul -o ${ATTNVIZ_CLI_OUT}/exact_once_explain)
attnviz_expect_count(cli_exact_matmul_once_bert "${ATTNVIZ_EXACT_IGNORED}" 1
  dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/bert/hf --token-ids 2,7,12,3 --exact-matmul -o ${ATTNVIZ_CLI_OUT}/exact_once_bert.json)
# A Q8_0 file: the flag acts, nothing is said.
attnviz_expect_count(cli_exact_matmul_acts_q8 "--exact-matmul" 0
  dump --model ${CMAKE_CURRENT_SOURCE_DIR}/data/q8-matmul/qwen2-q8_0.gguf --token-ids 1,40,77 --layers 0 --exact-matmul
  -o ${ATTNVIZ_CLI_OUT}/exact_once_q8.json)
# attribute always multiplies in float32 and does not take the flag, so it has nothing to warn.
attnviz_expect(cli_exact_matmul_not_attribute 109
  "^attnviz: error: attribute: unknown option \"--exact-matmul\": it is an option of dump, heatmaps, compare and explain"
  attribute --model ${ATTNVIZ_STORIES_GGUF} --text "a" --exact-matmul -o ${ATTNVIZ_CLI_OUT}/never_written)
# compare writes one file per format beside -o: an earlier run's other formats are named.
add_test(NAME cli_stale_compare_setup COMMAND ${CMAKE_COMMAND} -E rm -f ${ATTNVIZ_CLI_OUT}/stale_compare.png
                                              ${ATTNVIZ_CLI_OUT}/stale_compare.svg ${ATTNVIZ_CLI_OUT}/stale_compare.html)
add_test(NAME cli_stale_compare_all
         COMMAND attnviz compare ${ATTNVIZ_USE_LITE} --heads 0,1 --format png,svg,html -o ${ATTNVIZ_CLI_OUT}/stale_compare.png)
attnviz_expect(cli_stale_compare_svg 0
  "\nwrote [^\n]*stale_compare\\.svg\nattnviz: warning: [^\n]*stale_compare\\.png and [^\n]*stale_compare\\.html are from an earlier run: this run wrote the figure as stale_compare\\.svg, so they are not from it$"
  compare ${ATTNVIZ_USE_LITE} --heads 0,1 --format svg -o ${ATTNVIZ_CLI_OUT}/stale_compare.png)
set_tests_properties(cli_stale_compare_all PROPERTIES DEPENDS cli_stale_compare_setup)
set_tests_properties(cli_stale_compare_svg PROPERTIES DEPENDS cli_stale_compare_all)
# explain's pictures in another format, and a census into a folder of heatmaps: named the same way.
add_test(NAME cli_stale_more_setup COMMAND ${CMAKE_COMMAND} -E rm -rf ${ATTNVIZ_CLI_OUT}/stale_explain ${ATTNVIZ_CLI_OUT}/stale_census)
add_test(NAME cli_stale_explain_png
         COMMAND attnviz explain --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --head L1H2 -o ${ATTNVIZ_CLI_OUT}/stale_explain)
attnviz_expect(cli_stale_explain_svg 0
  "\nattnviz: warning: [^\n]*stale_explain already holds 2 files from an earlier run that this run did not write, so they are not from it: circuits\\.png, explain\\.png$"
  explain --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --head L1H2 --format svg -o ${ATTNVIZ_CLI_OUT}/stale_explain)
add_test(NAME cli_stale_census_heatmaps COMMAND attnviz heatmaps ${ATTNVIZ_USE_LITE} -o ${ATTNVIZ_CLI_OUT}/stale_census)
attnviz_expect(cli_stale_census 0
  "\nattnviz: warning: [^\n]*stale_census already holds 5 files from an earlier run that this run did not write, so they are not from it: grid\\.png ... head_3\\.png \\(5 files\\)$"
  census --model ${ATTNVIZ_STORIES_GGUF} --corpus ${PROJECT_SOURCE_DIR}/data/corpus/stories260k_stories.txt --limit 2 -o ${ATTNVIZ_CLI_OUT}/stale_census)
# A fixture, not only an order: `ctest -R stale_census` alone also starts from an empty folder
# (a census refuses a folder holding an earlier run's journal).
set_tests_properties(cli_stale_more_setup PROPERTIES FIXTURES_SETUP stale_more)
set_tests_properties(cli_stale_explain_png cli_stale_census_heatmaps cli_stale_explain_svg cli_stale_census PROPERTIES
  DEPENDS cli_stale_more_setup FIXTURES_REQUIRED stale_more)
set_tests_properties(cli_stale_explain_svg PROPERTIES DEPENDS cli_stale_explain_png)
set_tests_properties(cli_stale_census PROPERTIES DEPENDS cli_stale_census_heatmaps)
# Issue 37: attribute and explain into a folder another command wrote name its files the same
# way, through each way they write (a GGUF decoder, an encoder-decoder, an attention file), and a
# census's journal texts.jsonl is named with the rest. Each step is the next one's fixture, so
# `ctest -R` of any one runs the steps before it in order.
add_test(NAME cli_stale_cross_setup COMMAND ${CMAKE_COMMAND} -E rm -rf ${ATTNVIZ_CLI_OUT}/stale_cross ${ATTNVIZ_CLI_OUT}/stale_journal)
add_test(NAME cli_stale_cross_explain
         COMMAND attnviz explain --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --head L1H2 -o ${ATTNVIZ_CLI_OUT}/stale_cross)
attnviz_expect(cli_stale_cross_attribute_ct2 0
  "\nattnviz: warning: [^\n]*stale_cross already holds 3 files from an earlier run that this run did not write, so they are not from it: circuits\\.png, explain\\.json, explain\\.png$"
  attribute --model ${ATTNVIZ_CT2_MODEL} --source-tokens "م ا ك" -o ${ATTNVIZ_CLI_OUT}/stale_cross)
attnviz_expect(cli_stale_cross_explain_input 0
  "\nattnviz: warning: [^\n]*stale_cross already holds 2 files from an earlier run that this run did not write, so they are not from it: attribution\\.json, attribution\\.png$"
  explain ${ATTNVIZ_USE_LITE} --head 1 -o ${ATTNVIZ_CLI_OUT}/stale_cross)
add_test(NAME cli_stale_journal_census
         COMMAND attnviz census --model ${ATTNVIZ_STORIES_GGUF} --corpus ${PROJECT_SOURCE_DIR}/data/corpus/stories260k_stories.txt --limit 2
                 -o ${ATTNVIZ_CLI_OUT}/stale_journal)
attnviz_expect(cli_stale_journal_attribute 0
  "\nattnviz: warning: [^\n]*stale_journal already holds 4 files from an earlier run that this run did not write, so they are not from it: census\\.csv ... texts\\.jsonl \\(4 files\\)$"
  attribute --model ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --target "," -o ${ATTNVIZ_CLI_OUT}/stale_journal)
set_tests_properties(cli_stale_cross_setup PROPERTIES FIXTURES_SETUP stale_cross_clean)
set_tests_properties(cli_stale_cross_explain cli_stale_journal_census PROPERTIES FIXTURES_REQUIRED stale_cross_clean)
set_tests_properties(cli_stale_cross_explain PROPERTIES FIXTURES_SETUP stale_cross_explained)
set_tests_properties(cli_stale_cross_attribute_ct2 PROPERTIES FIXTURES_REQUIRED stale_cross_explained FIXTURES_SETUP stale_cross_attributed)
set_tests_properties(cli_stale_cross_explain_input PROPERTIES FIXTURES_REQUIRED stale_cross_attributed)
set_tests_properties(cli_stale_journal_census PROPERTIES FIXTURES_SETUP stale_journal_census)
set_tests_properties(cli_stale_journal_attribute PROPERTIES FIXTURES_REQUIRED stale_journal_census)
# Issue 34 §3: explain.html's score bars are signed and start at 0, as explain.png draws them.
add_test(NAME explain_page_browser
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/explain_page_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(explain_page_browser PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "1 passed, 0 failed")
# Issue 34 §3: attribute's own page (the maps as tables, hover values, the top heads) in
# chromium, against attribution.json; no longer the attention report.
add_test(NAME attribution_page_browser
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/attribution_page_test.py $<TARGET_FILE:attnviz>)
set_tests_properties(attribution_page_browser PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "1 passed, 0 failed")
