# census over a corpus (issue 22): the GNU parallel recipe, SIGINT and --resume
# (census_shards_test.py), the float64 reference (census_reference_test.py), and black-box bad
# inputs. Included by tests/CMakeLists.txt after cli_tests.cmake (attnviz_bad_run, ATTNVIZ_CLI_OUT).

add_test(NAME census_shards
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/census_shards_test.py $<TARGET_FILE:attnviz> ${PROJECT_SOURCE_DIR})
set_tests_properties(census_shards PROPERTIES
  SKIP_RETURN_CODE 77 PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed" FAIL_REGULAR_EXPRESSION "FAIL")

add_test(NAME census_reference
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/census_reference_test.py $<TARGET_FILE:attnviz> ${PROJECT_SOURCE_DIR})
set_tests_properties(census_reference PROPERTIES PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed" FAIL_REGULAR_EXPRESSION "FAIL")

set(ATTNVIZ_CENSUS_MODEL ${PROJECT_SOURCE_DIR}/data/stories260k/stories260K.gguf)
set(ATTNVIZ_CENSUS_CORPUS ${PROJECT_SOURCE_DIR}/data/corpus/stories260k_stories.txt)
attnviz_bad_run(cli_census_shard_range "attnviz: error: --shard: K/N needs 0 <= K < N \\(K counts from 0\\), got 3/2"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --shard 3/2 -o ${ATTNVIZ_CLI_OUT}/census_bad)
attnviz_bad_run(cli_census_shard_form "--shard: expected K/N, e.g. 0/4"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --shard 3 -o ${ATTNVIZ_CLI_OUT}/census_bad)
attnviz_bad_run(cli_census_bad_line "attnviz: error: .*corpus_bad_line\\.jsonl: line 3: not valid JSON"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_bad_line.jsonl -o ${ATTNVIZ_CLI_OUT}/census_bad)
# A shard past the corpus's texts (more array tasks than texts) says so, not "nothing to draw".
attnviz_bad_run(cli_census_empty_shard "attnviz: error: --shard: 5/10 holds no text: the corpus has 3 texts after skipped lines and --limit"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --limit 3 --shard 5/10 -o ${ATTNVIZ_CLI_OUT}/census_bad)
# A pipe cannot be read twice: refused naming the file (the corpus is numbered, then run).
attnviz_bad_run(cli_census_pipe "attnviz: error: /dev/null: is not a regular file"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus /dev/null -o ${ATTNVIZ_CLI_OUT}/census_bad)
# A token id past the vocabulary is named by file, line and position (not as --token-ids).
attnviz_bad_run(cli_census_bad_id "attnviz: error: .*corpus_bad_id\\.jsonl: line 2: /token_ids/1: token id 99999 is outside the vocabulary \\(0-511\\)"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_bad_id.jsonl -o ${ATTNVIZ_CLI_OUT}/census_bad)
attnviz_bad_run(cli_census_no_truncate "attnviz: error: .*stories260k_stories\\.txt: line 1: [0-9]+ tokens, over --max-tokens"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --max-tokens 8 --no-truncate -o ${ATTNVIZ_CLI_OUT}/census_bad)
add_test(NAME cli_census_skip_bad_lines
         COMMAND attnviz census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_bad_line.jsonl
                 --skip-bad-lines --quiet --resume -o ${ATTNVIZ_CLI_OUT}/census_skip)
set_tests_properties(cli_census_skip_bad_lines PROPERTIES
  PASS_REGULAR_EXPRESSION "skipped 1 bad line \\(line 3: not valid JSON")

# census --merge with -o anywhere: `--merge -o OUT DIR1 DIR2` once merged "-o" and OUT as folders
# (CLI11 gave --merge the next word whatever it was) and said "--output is required".
set(ATTNVIZ_MERGE_OUT ${ATTNVIZ_CLI_OUT}/census_merge_args)
add_test(NAME cli_census_merge_clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${ATTNVIZ_MERGE_OUT})
set_tests_properties(cli_census_merge_clean PROPERTIES FIXTURES_SETUP census_merge_clean)
foreach(k 0 1)
  add_test(NAME cli_census_merge_shard${k}
           COMMAND attnviz census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --limit 4 --shard ${k}/2
                   --max-tokens 16 --quiet -o ${ATTNVIZ_MERGE_OUT}/s${k})
  set_tests_properties(cli_census_merge_shard${k} PROPERTIES FIXTURES_REQUIRED census_merge_clean FIXTURES_SETUP census_merge_shards)
endforeach()
attnviz_expect(cli_census_merge_o_first 0 "^wrote census.json, census.csv, census.png to [^ ]*/m1/: 4 texts of 4 \\([0-9]+ tokens\\) from 2 outputs$"
  census --merge -o ${ATTNVIZ_MERGE_OUT}/m1 ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_OUT}/s1)
attnviz_expect(cli_census_merge_o_between 0 "^wrote census.json, census.csv, census.png to [^ ]*/m2/: 4 texts of 4 \\([0-9]+ tokens\\) from 2 outputs$"
  census --merge ${ATTNVIZ_MERGE_OUT}/s1 --output ${ATTNVIZ_MERGE_OUT}/m2 ${ATTNVIZ_MERGE_OUT}/s0)
attnviz_expect(cli_census_merge_o_last 0 "^wrote census.json, census.csv, census.png to [^ ]*/m3/: 4 texts of 4 \\([0-9]+ tokens\\) from 2 outputs$"
  census --merge ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_OUT}/s1 -o ${ATTNVIZ_MERGE_OUT}/m3)
attnviz_expect(cli_census_merge_no_folder 105 "^attnviz: error: --merge: needs the folders to combine"
  census --merge -o ${ATTNVIZ_MERGE_OUT}/m4)
attnviz_expect(cli_census_folder_without_merge 105 "^attnviz: error: census: unexpected argument [^ ]*/s0: only --merge takes folders"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} -o ${ATTNVIZ_MERGE_OUT}/m5 ${ATTNVIZ_MERGE_OUT}/s0)
set_tests_properties(cli_census_merge_o_first cli_census_merge_o_between cli_census_merge_o_last
                     PROPERTIES FIXTURES_REQUIRED census_merge_shards)
# A run setting given with --merge changed nothing and was taken in silence (hostile tester): named.
attnviz_bad_run(cli_census_merge_run_setting
  "attnviz: error: --sink-epsilon: is a setting of the runs, not of --merge"
  census --merge ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_OUT}/s1 --sink-epsilon 0.5 -o ${ATTNVIZ_MERGE_OUT}/never_written)
attnviz_bad_run(cli_census_merge_layers
  "attnviz: error: --layers: is a setting of the runs, not of --merge"
  census --merge ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_OUT}/s1 --layers 1 -o ${ATTNVIZ_MERGE_OUT}/never_written)
