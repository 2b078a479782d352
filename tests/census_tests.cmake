# census over a corpus (issue 22): the GNU parallel recipe, SIGINT and --resume
# (census_shards_test.py), the float64 reference (census_reference_test.py), and black-box bad
# inputs. Included by tests/CMakeLists.txt after cli_tests.cmake (attnviz_bad_run, ATTNVIZ_CLI_OUT).

add_test(NAME census_shards
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/census_shards_test.py $<TARGET_FILE:attnviz> ${PROJECT_SOURCE_DIR})
set_tests_properties(census_shards PROPERTIES
  SKIP_RETURN_CODE 77 PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed" FAIL_REGULAR_EXPRESSION "FAIL")

# A corpus edited, cut short or rewritten while a run reads it: exit 1, one line naming the file
# and the change, the journal kept with what to do (census_corpus_change_test.py).
add_test(NAME census_corpus_change
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/census_corpus_change_test.py $<TARGET_FILE:attnviz> ${PROJECT_SOURCE_DIR})
set_tests_properties(census_corpus_change PROPERTIES PASS_REGULAR_EXPRESSION "[0-9]+ passed, 0 failed" FAIL_REGULAR_EXPRESSION "FAIL")

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
# N at most the texts, as docs/corpus.md says: 0/41 over 40 texts was accepted (its shard held text 0).
attnviz_bad_run(cli_census_more_shards_than_texts "attnviz: error: --shard: 0/41 splits fewer texts than shards: the corpus has 40 texts after skipped lines and --limit \\(give N of at most 40\\)"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --limit 40 --shard 0/41 -o ${ATTNVIZ_CLI_OUT}/census_bad)
# A directory is named as one (it was described as "a pipe, /dev/stdin or a device").
attnviz_bad_run(cli_census_directory "attnviz: error: [^ ]*corpus: is a directory: --corpus takes a file of texts"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${PROJECT_SOURCE_DIR}/data/corpus -o ${ATTNVIZ_CLI_OUT}/census_bad)
# A pipe cannot be read twice: refused naming the file (the corpus is numbered, then run).
attnviz_bad_run(cli_census_pipe "attnviz: error: /dev/null: is not a regular file"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus /dev/null -o ${ATTNVIZ_CLI_OUT}/census_bad)
# A token id past the vocabulary is named by file, line and position (not as --token-ids).
attnviz_bad_run(cli_census_bad_id "attnviz: error: .*corpus_bad_id\\.jsonl: line 2: /token_ids/1: token id 99999 is outside the vocabulary \\(0-511\\)"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_bad_id.jsonl -o ${ATTNVIZ_CLI_OUT}/census_bad)
attnviz_bad_run(cli_census_no_truncate "attnviz: error: .*stories260k_stories\\.txt: line 1: [0-9]+ tokens, over --max-tokens"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --max-tokens 8 --no-truncate -o ${ATTNVIZ_CLI_OUT}/census_bad)
# --max-tokens past the model's context once failed at the first long text, mid-run, naming
# --token-ids (not an option of census) and leaving a journal --resume refused: now refused first.
attnviz_bad_run(cli_census_max_tokens_over_context "attnviz: error: --max-tokens: 100000 is over stories260K's context length of 2048 tokens"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --max-tokens 100000 -o ${ATTNVIZ_CLI_OUT}/census_bad)
# An error about one text names the corpus file and line (it named neither: which of thousands?).
attnviz_bad_run(cli_census_text_over_memory "attnviz: error: [^ ]*corpus_long_text\\.txt: line 1 \\(text 0\\): the forward pass over 685 tokens needs about"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_long_text.txt --max-memory 4 -o ${ATTNVIZ_CLI_OUT}/census_bad)
# --sink-epsilon outside [0, 1], nan included (CLI11's Range let nan through), refused at parsing.
foreach(epsilon nan inf -0.1 1.5)
  string(MAKE_C_IDENTIFIER "${epsilon}" epsilon_name)
  attnviz_bad_run(cli_census_sink_epsilon_${epsilon_name} "--sink-epsilon: expected a number from 0 to 1, got \"${epsilon}\""
    census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --sink-epsilon=${epsilon} -o ${ATTNVIZ_CLI_OUT}/census_bad)
endforeach()
add_test(NAME cli_census_skip_bad_lines
         COMMAND sh -c "rm -rf '${ATTNVIZ_CLI_OUT}/census_skip' && '$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_bad_line.jsonl' --skip-bad-lines --quiet -o '${ATTNVIZ_CLI_OUT}/census_skip' 2>&1")
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

# census --merge checks every census.json in full before combining any (hostile tester): each
# refused file is a real shard output (cli_census_merge_shard0 above) changed in one place by
# census_edit.py, merged with the untouched shard 1. Exit 1, one line naming the file, the
# member and the value; nothing written (cli_census_merge_refused_wrote_nothing).
set(ATTNVIZ_MERGE_EDITED ${ATTNVIZ_MERGE_OUT}/edited)
function(attnviz_merge_edit edit)
  add_test(NAME cli_census_merge_edit_${edit}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/census_edit.py ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_EDITED}/${edit} ${edit})
  set_tests_properties(cli_census_merge_edit_${edit} PROPERTIES FIXTURES_REQUIRED census_merge_shards FIXTURES_SETUP census_merge_edit_${edit})
endfunction()
# attnviz_merge_refused(EDIT REGEX [FOLDER…]): `--merge FOLDER… -o …` (default: shard 1, then
# the edited folder) exits 1 with "attnviz: error: …/edited/EDIT/census.json: " + REGEX.
function(attnviz_merge_refused edit regex)
  attnviz_merge_edit(${edit})
  set(folders ${ARGN})
  if(NOT folders)
    set(folders ${ATTNVIZ_MERGE_OUT}/s1 ${ATTNVIZ_MERGE_EDITED}/${edit})
  endif()
  attnviz_expect(cli_census_merge_refuses_${edit} 1 "^attnviz: error: [^ ]*/edited/${edit}/census\\.json: ${regex}"
    census --merge ${folders} -o ${ATTNVIZ_MERGE_OUT}/refused_${edit})
  set_tests_properties(cli_census_merge_refuses_${edit} PROPERTIES
    FIXTURES_REQUIRED "census_merge_shards;census_merge_edit_${edit}" FIXTURES_SETUP census_merge_refusals)
endfunction()
# 1. The heads and statistics: each selected layer × head once, no other; every statistic.
attnviz_merge_refused(head_missing "/heads: head L0H5 missing \\(the model has 5 layers of 8 heads, /settings/layers is \"all\"")
attnviz_merge_refused(head_twice "/heads/40: head L0H3 listed twice \\(also /heads/3\\)$")
attnviz_merge_refused(head_layer_outside "/heads/0/layer: expected an integer in \\[0, 4\\], got 5$")
attnviz_merge_refused(head_index_outside "/heads/0/head: expected an integer in \\[0, 7\\], got 8$")
attnviz_merge_refused(head_layer_unselected "/heads/0/layer: expected a layer /settings/layers selects \\(1-4\\), got 0$")
attnviz_merge_refused(statistic_unknown "/statistics/12: expected a statistic attnviz knows \\(entropy_mean, .*\\), got \"attention_to_bos\"$")
attnviz_merge_refused(statistic_missing "/heads/2/sink_rate: missing field")
attnviz_merge_refused(statistic_unlisted "/statistics: statistic sink_rate missing")
# 2. Counts (integers in [0, covers.texts]) and moments (finite, m2 >= 0, means in their range).
attnviz_merge_refused(count_above_texts "/heads/1/entropy_mean/texts: expected an integer in \\[0, 2\\], got 3$")
attnviz_merge_refused(count_negative "/heads/1/entropy_mean/texts: expected an integer in \\[0, 2\\], got -1$")
attnviz_merge_refused(count_fraction "/heads/1/entropy_mean/texts: expected an integer in \\[0, 2\\], got 1\\.5$")
attnviz_merge_refused(m2_negative "/heads/1/max_weight_mean/m2: expected a finite number from 0 \\(a sum of squares\\), got -0\\.25$")
attnviz_merge_refused(mean_null "/heads/1/max_weight_mean/mean: expected a finite number in \\[0\\.0625, 1\\], got null$")
attnviz_merge_refused(mass_above_one "/heads/0/first_token_mass/mean: expected a mean in \\[0, 1\\] \\(a mass of attention weights, each row summing to 1\\), got 1\\.5$")
attnviz_merge_refused(entropy_negative "/heads/0/entropy_mean/mean: expected a mean in \\[0, 2\\.77259\\] \\(an entropy in nats, at most ln k for k <= /settings/max_tokens keys\\), got -0\\.5$")
attnviz_merge_refused(sink_rate_above_one "/heads/0/sink_rate/mean: expected a mean in \\[0, 1\\] \\(a rate of 0/1 indicators\\), got 1\\.25$")
attnviz_merge_refused(std_edited "/heads/0/entropy_mean/std: expected [0-9.e-]+ \\(sqrt\\(m2 / \\(texts - 1\\)\\), from texts, mean and m2\\), got 0\\.5$")
attnviz_merge_refused(m2_overflow "line [0-9]+, column [0-9]+: number overflow parsing '1e999' \\(not a finite double: every number in a census\\.json is one\\)$")
attnviz_merge_refused(mean_overflow "line [0-9]+, column [0-9]+: number overflow parsing '-1e999' \\(not a finite double")
# -0.0 is no sum of squares (it once passed, and std was then "expected -0.0").
attnviz_merge_refused(m2_negative_zero "/heads/0/entropy_mean/m2: expected a finite number from 0 \\(a sum of squares\\), got -0\\.0$")
# 2b. What a real run allows (hostile tester, second round): the shard holds 2 texts of at most
# 16 tokens (--max-tokens 16, --limit 4). m2 within Bhatia-Davis's bound n(mean - low)(high - mean);
# a statistic defined on every text counted on every text; sink_rate k/n with m2 k(n - k)/n;
# entropy and distance within what 16 tokens allow; covers.tokens between texts and texts × 16;
# corpus.texts within --limit; skipped lines only with --skip-bad-lines; at least one text.
attnviz_merge_refused(m2_above_bound "/heads/0/max_weight_mean/m2: expected at most 0\\.39[0-9]+ \\(n \\* \\(mean - low\\) \\* \\(high - mean\\) for 2 texts of values in \\[0\\.0625, 1\\]\\), got 0\\.6$")
attnviz_merge_refused(always_defined_texts "/heads/1/entropy_mean/texts: expected 2 \\(/covers/texts: entropy_mean is defined on every text\\), got 1$")
attnviz_merge_refused(sink_rate_fraction "/heads/0/sink_rate/mean: expected k/2 for a whole number k of texts \\(a rate of 0/1 indicators over 2 texts\\), got 0\\.25$")
attnviz_merge_refused(sink_rate_m2 "/heads/0/sink_rate/m2: expected 0\\.5 \\(k\\(n - k\\)/n: 1 of 2 texts are 1, the rest 0\\), got 0\\.125$")
attnviz_merge_refused(entropy_above_max_tokens "/heads/0/entropy_mean/mean: expected a mean in \\[0, 2\\.77259\\] \\(an entropy in nats, at most ln k for k <= /settings/max_tokens keys\\), got 3\\.0$")
attnviz_merge_refused(distance_above_max_tokens "/heads/0/mean_distance/mean: expected a mean in \\[0, 15\\] \\(a distance in tokens, at most /settings/max_tokens - 1\\), got 15\\.5$")
attnviz_merge_refused(tokens_below_texts "/covers/tokens: expected at least 2 \\(/covers/texts: every text has a token\\), got 1$")
attnviz_merge_refused(tokens_above_max_tokens "/covers/tokens: expected at most 2 texts \\* 16 \\(/settings/max_tokens\\), got 33$")
attnviz_merge_refused(covers_nothing "/covers/texts: expected an integer in \\[1, 4\\], got 0$")
attnviz_merge_refused(texts_above_limit "/corpus/texts: expected 3 \\(/settings/limit: a limit is recorded only when it left texts out, so it took that many\\), got 4$")
attnviz_merge_refused(layers_not_canonical "/settings/layers: expected \"all\" \\(the form a run records this selection in\\), got \"0-4\"$")
attnviz_merge_refused(truncate_false "/settings/truncate: expected true \\(a run that finishes cut every text it had to\\), got false$")
attnviz_merge_refused(skip_without_skipped "/corpus/skipped_lines: expected from 1 \\(/settings/skip_bad_lines is true: true exactly when a bad line was skipped\\), got 0$")
# Across one head: the statistics undefined only on a one-token text count the same texts; the
# first-token mass is at most what sink_rate's k sinks allow (k + (n - k) * sink_epsilon) / n.
attnviz_merge_refused(one_token_texts_differ "/heads/0/previous_token_score/texts: expected 2 \\(/heads/0/entropy_normalised_mean/texts: both are undefined only on a one-token text\\), got 1$")
attnviz_merge_refused(first_token_mass_above_sinks "/heads/0/first_token_mass/mean: expected at most 0\\.3 \\(sink_rate counts 0 sink texts of 2. on the others the first key's weight is at most sink_epsilon 0\\.3\\), got 0\\.5$")
# Relations between statistics (a second hostile tester): each value alone in its range.
attnviz_merge_refused(sink_rate_texts "/heads/0/sink_rate/texts: expected 2 \\(/covers/texts: sink_rate is defined on every text\\), got 1$")
attnviz_merge_refused(previous_score_above_mass "/heads/0/previous_token_score/mean: expected at most 0\\.29898[0-9]+ \\(/heads/0/previous_token_mass/mean: the score divides the same sum by all n rows, the mass by the n - 1 rows i >= 1\\), got 0\\.29998[0-9]+$")
attnviz_merge_refused(induction_texts_differ "/heads/1/induction_score/texts: expected 2 \\(head L0H1. head L0H0, /heads/0, has that: where induction_score is defined is the text's, the same on every head of a block\\), got 1$")
attnviz_merge_refused(first_token_mass_below_sinks "/heads/0/first_token_mass/mean: expected at least 0\\.0096774[0-9]+ \\(sink_rate counts 2 sink texts of 2, each with first-key weight above sink_epsilon 0\\.3 over at most 31 rows\\), got 0\\.001$")
attnviz_merge_refused(first_token_mass_m2_no_sinks "/heads/0/first_token_mass/m2: expected at most 0\\.04435[0-9]+ \\(n \\* \\(mean - low\\) \\* \\(high - mean\\): sink_rate says no text is a sink, so each first-token mass is in \\[0, sink_epsilon\\]\\), got 0\\.05$")
attnviz_merge_refused(first_token_mass_m2_one_sink "/heads/0/first_token_mass/m2: expected at most 0\\.0564[0-9]+ \\(sink_rate says 1 of 2 texts are sinks, with first-token mass above 0\\.00967741, the others at most sink_epsilon: Bhatia and Davis on each group\\), got 0\\.06$")
attnviz_merge_refused(tokens_too_few "/heads/0/entropy_mean/mean: expected at most 0\\.693147[0-9]+ \\(2 texts of 3 tokens \\(/covers\\): none longer than 2, ln of that\\), got 0\\.917[0-9]+$")
attnviz_merge_refused(distance_above_causal "/heads/0/mean_distance/mean: expected at most 7\\.5 \\(32 tokens over 2 texts \\(/covers\\): a causal text's mean distance is at most \\(len - 1\\)/2\\), got 7\\.75$")
attnviz_merge_refused(skipped_without_skip "/corpus/skipped_lines: expected 0 \\(/settings/skip_bad_lines is false: true exactly when a bad line was skipped\\), got 1$")
# 3. covers agrees with itself and the corpus.
attnviz_merge_refused(covers_texts "/covers/texts: expected 2 \\(the number of text indices in /covers/ranges\\), got 3$")
attnviz_merge_refused(ranges_overlap "/covers/ranges/1: expected a range after the one before it \\(ranges sorted and disjoint. the one before ends at 1\\), got \\[1,2\\]$")
attnviz_merge_refused(ranges_unsorted "/covers/ranges/1: expected a range after the one before it .*, got \\[0,0\\]$")
attnviz_merge_refused(ranges_negative "/covers/ranges/0: expected text indices 0 <= first <= last < 4 \\(/covers/corpus_texts\\), got \\[-1,-1\\]$")
attnviz_merge_refused(range_beyond_corpus "/covers/ranges/1: expected text indices 0 <= first <= last < 4 \\(/covers/corpus_texts\\), got \\[4,4\\]$")
attnviz_merge_refused(limit_wrapped "/settings/limit: expected an integer from -1, got 18446744073709551615$")
attnviz_merge_refused(corpus_texts "/covers/corpus_texts: expected 4 \\(/corpus/texts\\), got 5$")
attnviz_merge_refused(model_name "/model_name: expected \"stories260K\" \\(/model/name\\), got \"stories15M\"$")
# 4. A member attnviz does not write, at any level, is named, never ignored.
attnviz_merge_refused(unknown_top "unknown member /comment \\(a census.json has here: format, version, ")
attnviz_merge_refused(unknown_model "unknown member /model/revision ")
attnviz_merge_refused(unknown_corpus "unknown member /corpus/lines ")
attnviz_merge_refused(unknown_settings "unknown member /settings/temperature ")
attnviz_merge_refused(unknown_covers "unknown member /covers/skipped ")
attnviz_merge_refused(unknown_head "unknown member /heads/3/foo ")
attnviz_merge_refused(unknown_statistic_member "unknown member /heads/3/entropy_mean/median \\(a census.json has here: texts, mean, m2, std, ci95_low, ci95_high\\)$")
# 5. A text covered twice names the two files that hold it, wherever they stand among the inputs
# (it once named the first input as the other holder): an unedited copy of shard 0 after shard 1
# and shard 0, and before them.
attnviz_merge_refused(none "covers text 0, which [^ ]*/s0/census\\.json covers too"
  ${ATTNVIZ_MERGE_OUT}/s1 ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_EDITED}/none)
attnviz_expect(cli_census_merge_refuses_copy_first 1
  "^attnviz: error: [^ ]*/s0/census\\.json: covers text 0, which [^ ]*/edited/none/census\\.json covers too"
  census --merge ${ATTNVIZ_MERGE_EDITED}/none ${ATTNVIZ_MERGE_OUT}/s1 ${ATTNVIZ_MERGE_OUT}/s0 -o ${ATTNVIZ_MERGE_OUT}/refused_copy_first)
set_tests_properties(cli_census_merge_refuses_copy_first PROPERTIES
  FIXTURES_REQUIRED "census_merge_shards;census_merge_edit_none" FIXTURES_SETUP census_merge_refusals)
# 6. Settings that differ are named member by member with both values, not printed whole.
attnviz_merge_refused(sink_epsilon
  "does not match [^ ]*/s1/census\\.json: settings\\.sink_epsilon: 0\\.3 in [^ ]*/s1/census\\.json, 0\\.5 in [^ ]*/edited/sink_epsilon/census\\.json. only outputs of the same")
attnviz_merge_refused(two_settings
  "does not match [^ ]*/s1/census\\.json: settings\\.no_bos: false in [^ ]*/s1/census\\.json, true in [^ ]*/two_settings/census\\.json. settings\\.sink_epsilon: 0\\.3 in [^ ]*, 0\\.5 in ")
add_test(NAME cli_census_merge_refused_wrote_nothing
         COMMAND /usr/bin/python3 -c "import glob, sys; left = glob.glob(sys.argv[1] + '/refused_*'); print('left behind: ' + ' '.join(left) if left else 'nothing written')"
                 ${ATTNVIZ_MERGE_OUT})
set_tests_properties(cli_census_merge_refused_wrote_nothing PROPERTIES
  FIXTURES_REQUIRED census_merge_refusals PASS_REGULAR_EXPRESSION "^nothing written")

# A shard folder with a journal but no census.json (an unfinished run) says how to finish it.
add_test(NAME cli_census_merge_unfinished_setup
         COMMAND ${CMAKE_COMMAND} -E copy ${ATTNVIZ_MERGE_OUT}/s1/texts.jsonl ${ATTNVIZ_MERGE_OUT}/unfinished/texts.jsonl)
set_tests_properties(cli_census_merge_unfinished_setup PROPERTIES FIXTURES_REQUIRED census_merge_shards FIXTURES_SETUP census_merge_unfinished)
attnviz_expect(cli_census_merge_unfinished 1
  "^attnviz: error: [^ ]*/unfinished/census\\.json: cannot read: no such file, but texts\\.jsonl is there: the run that writes census\\.json has not finished. finish it with the same command and --resume$"
  census --merge ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_OUT}/unfinished -o ${ATTNVIZ_MERGE_OUT}/refused_unfinished)
set_tests_properties(cli_census_merge_unfinished PROPERTIES
  FIXTURES_REQUIRED "census_merge_shards;census_merge_unfinished" FIXTURES_SETUP census_merge_refusals)

# A folder whose journal is another run's beside its census.json is unfinished or mixed: named.
# And -o into a folder holding a journal is refused (the next --resume would take the merge for
# that run's).
foreach(edit mixed_settings mixed_shard)
  attnviz_merge_edit(${edit})
endforeach()
attnviz_expect(cli_census_merge_refuses_mixed_settings 1
  "^attnviz: error: [^ ]*/edited/mixed_settings: holds a census.json and a census journal of another run \\(settings\\.sink_epsilon: 0\\.3 in [^ ]*/census\\.json, 0\\.5 in [^ ]*/texts\\.jsonl\\): an unfinished or mixed folder"
  census --merge ${ATTNVIZ_MERGE_OUT}/s1 ${ATTNVIZ_MERGE_EDITED}/mixed_settings -o ${ATTNVIZ_MERGE_OUT}/refused_mixed_settings)
attnviz_expect(cli_census_merge_refuses_mixed_shard 1
  "^attnviz: error: [^ ]*/edited/mixed_shard: holds a census.json and a census journal of another run \\([^ ]*/census\\.json covers text 0, which the journal's shard 1/2 does not hold\\)"
  census --merge ${ATTNVIZ_MERGE_OUT}/s1 ${ATTNVIZ_MERGE_EDITED}/mixed_shard -o ${ATTNVIZ_MERGE_OUT}/refused_mixed_shard)
set_tests_properties(cli_census_merge_refuses_mixed_settings PROPERTIES
  FIXTURES_REQUIRED "census_merge_shards;census_merge_edit_mixed_settings" FIXTURES_SETUP census_merge_refusals)
set_tests_properties(cli_census_merge_refuses_mixed_shard PROPERTIES
  FIXTURES_REQUIRED "census_merge_shards;census_merge_edit_mixed_shard" FIXTURES_SETUP census_merge_refusals)
attnviz_expect(cli_census_merge_into_journal 1
  "^attnviz: error: -o: [^ ]*/unfinished holds a census journal \\(texts\\.jsonl\\) of a run: write the merge to another folder"
  census --merge ${ATTNVIZ_MERGE_OUT}/s0 ${ATTNVIZ_MERGE_OUT}/s1 -o ${ATTNVIZ_MERGE_OUT}/unfinished)
set_tests_properties(cli_census_merge_into_journal PROPERTIES FIXTURES_REQUIRED "census_merge_shards;census_merge_unfinished")

# --resume checks each journal line as strictly as --merge checks a census.json (hostile
# tester): shard 0's journal with its first text line edited in one place (census_edit.py),
# resumed by the same command; exit 1, naming the file, the line, the head and the value.
# LINE: the journal line the error names (1: the header, 2: the first text).
function(attnviz_resume_refused_at line edit regex)
  attnviz_merge_edit(${edit})
  attnviz_expect(cli_census_resume_refuses_${edit} 1 "^attnviz: error: [^ ]*/edited/${edit}/texts\\.jsonl: line ${line}: ${regex}"
    census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${ATTNVIZ_CENSUS_CORPUS} --limit 4 --shard 0/2 --max-tokens 16 --quiet --resume
           -o ${ATTNVIZ_MERGE_EDITED}/${edit})
  set_tests_properties(cli_census_resume_refuses_${edit} PROPERTIES FIXTURES_REQUIRED "census_merge_shards;census_merge_edit_${edit}")
endfunction()
function(attnviz_resume_refused edit regex)
  attnviz_resume_refused_at(2 ${edit} "${regex}")
endfunction()
attnviz_resume_refused(journal_head_missing "head L0H5 missing \\(every head of the run is on every line\\)")
attnviz_resume_refused(journal_head_twice "/heads/40: head L0H3 twice")
attnviz_resume_refused(journal_head_unknown "/heads/0: \\[\"\",\"\",0,8\\] is not a head of this run \\(5 layers of 8 heads, settings\\.layers all\\)")
attnviz_resume_refused(journal_value_range "/heads/0/4/2: L0H0 max_weight_mean: expected a number in \\[0\\.0625, 1\\] .*this text has 16 tokens\\), got 1\\.5")
attnviz_resume_refused(journal_entropy_above_tokens "/heads/0/4/0: L0H0 entropy_mean: expected a number in \\[0, 2\\.77259\\] .*, got 9\\.0")
attnviz_resume_refused(journal_sink_half "/heads/0/4/8: L0H0 sink_rate: expected 0 or 1 \\(the text's sink indicator\\), got 0\\.5")
attnviz_resume_refused(journal_null_never "/heads/0/4/0: L0H0 entropy_mean: expected a number \\(defined on every text\\), got null")
attnviz_resume_refused(journal_string_value "/heads/0/4/1: L0H0 entropy_normalised_mean: expected a number in \\[0, 1\\] .*, got \"0\\.5\"")
attnviz_resume_refused(journal_tokens_zero "/tokens: expected a number of tokens from 1, at most 16 \\(settings\\.max_tokens\\), got 0")
attnviz_resume_refused(journal_tokens_above "/tokens: expected a number of tokens from 1, at most 16 \\(settings\\.max_tokens\\), got 17")
attnviz_resume_refused(journal_one_token_null "/heads/0: L0H0: previous_token_score is null and entropy_normalised_mean a number \\(both are undefined only on a one-token text\\)")
attnviz_resume_refused(journal_one_token_all_null "/heads/0: L0H0: entropy_normalised_mean is null on a text of 16 tokens \\(undefined exactly on a one-token text\\)")
attnviz_resume_refused(journal_mass_without_sink "/heads/0: L0H0: first_token_mass 0\\.500000 above sink_epsilon 0\\.300000 while sink_rate is 0")
attnviz_resume_refused(journal_unknown_member "unknown member /note \\(a journal line has index, tokens, heads\\)")
attnviz_resume_refused(journal_sink_without_mass "/heads/0: L0H0: first_token_mass 0\\.001 at most 0\\.01875 while sink_rate is 1 \\(a sink's first key has weight above sink_epsilon 0\\.3 on at least one of the 16 rows\\)")
attnviz_resume_refused(journal_score_above_mass "/heads/0: L0H0: previous_token_score 0\\.29[0-9]+ above previous_token_mass 0\\.29[0-9]+ \\(the score divides the same sum by all n rows")
attnviz_resume_refused(journal_induction_one_head "/heads/1: L0H1 induction_score is null and L0H0's a number \\(where it is defined is the text's: null on every head of a block or on none\\)")
attnviz_resume_refused(journal_distance_above_causal "/heads/0: L0H0: mean_distance 8\\.0 above 7\\.5 \\(\\(tokens - 1\\)/2 for 16 tokens: a causal row i is at most i tokens from any key\\)")
# The header as strictly as census.json's provenance: a member attnviz does not write, or a
# number of the other kind (4.0 for the limit 4, which JSON's == takes as equal), is named.
function(attnviz_resume_header_refused edit regex)
  attnviz_resume_refused_at(1 ${edit} "${regex}")
endfunction()
attnviz_resume_header_refused(journal_header_unknown "unknown member comment \\(a journal header has here: format, version, attnviz_version, model, corpus, settings, shard\\)")
attnviz_resume_header_refused(journal_header_unknown_setting "unknown member settings\\.temperature \\(a journal header has here: layers, max_tokens")
attnviz_resume_header_refused(journal_header_limit_float "settings\\.limit 4\\.0 \\(a run writes an integer here: 4\\): not a journal header attnviz writes")

# A merge of merges is an input like any other: shard 0 merged alone, then with shard 1.
attnviz_expect(cli_census_merge_single 0 "^wrote census.json, census.csv, census.png to [^ ]*/m_single/: 2 texts of 4 "
  census --merge ${ATTNVIZ_MERGE_OUT}/s0 -o ${ATTNVIZ_MERGE_OUT}/m_single)
set_tests_properties(cli_census_merge_single PROPERTIES FIXTURES_REQUIRED census_merge_shards FIXTURES_SETUP census_merge_single)
attnviz_expect(cli_census_merge_of_merge 0 "^wrote census.json, census.csv, census.png to [^ ]*/m_of_m/: 4 texts of 4 \\([0-9]+ tokens\\) from 2 outputs$"
  census --merge ${ATTNVIZ_MERGE_OUT}/s1 ${ATTNVIZ_MERGE_OUT}/m_single -o ${ATTNVIZ_MERGE_OUT}/m_of_m)
set_tests_properties(cli_census_merge_of_merge PROPERTIES FIXTURES_REQUIRED "census_merge_shards;census_merge_single")

# An encoder-decoder's census (encoder self, decoder self and cross heads) passes the checks.
foreach(k 0 1)
  add_test(NAME cli_census_merge_encdec_shard${k}
           COMMAND attnviz census --model ${PROJECT_SOURCE_DIR}/data/aren-translit/model --corpus ${ATTNVIZ_CENSUS_CORPUS} --limit 2
                   --shard ${k}/2 --quiet -o ${ATTNVIZ_MERGE_OUT}/encdec${k})
  set_tests_properties(cli_census_merge_encdec_shard${k} PROPERTIES FIXTURES_REQUIRED census_merge_clean FIXTURES_SETUP census_merge_encdec)
endforeach()
attnviz_expect(cli_census_merge_encdec 0 "^wrote census.json, census.csv, census.png to [^ ]*/m_encdec/: 2 texts of 2 "
  census --merge ${ATTNVIZ_MERGE_OUT}/encdec1 ${ATTNVIZ_MERGE_OUT}/encdec0 -o ${ATTNVIZ_MERGE_OUT}/m_encdec)
set_tests_properties(cli_census_merge_encdec PROPERTIES FIXTURES_REQUIRED census_merge_encdec)

# A long text's layers come head by head (issue 23's bound, issue 22's corpus): 685 tokens of
# stories260K need ~8.1 MiB with one head's weights held; whole layers (8 heads) would need ~20.
add_test(NAME cli_census_corpus_head_by_head
         COMMAND sh -c "rm -rf '${ATTNVIZ_CLI_OUT}/census_long' && '$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_long_text.txt' --max-memory 10 --quiet -o '${ATTNVIZ_CLI_OUT}/census_long'")
set_tests_properties(cli_census_corpus_head_by_head PROPERTIES PASS_REGULAR_EXPRESSION "1 texts? \\(685 tokens\\)")

# The numbers do not depend on --threads (shards run with --threads 1 merge into what one
# process with the default threads writes): a 1000-token text, where the attention's row blocks
# spread over the threads, with 1 and 2 threads.
add_test(NAME cli_census_threads_same_numbers
         COMMAND sh -c "set -e; out='${ATTNVIZ_CLI_OUT}/census_threads'; rm -rf \"$out\"; mkdir -p \"$out\"
/usr/bin/python3 -c 'import json, random; random.seed(3); print(json.dumps({\"token_ids\": [1] + [random.randrange(2, 512) for _ in range(999)]}))' > \"$out/n1000.jsonl\"
for t in 1 2; do '$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus \"$out/n1000.jsonl\" --threads $t --quiet -o \"$out/t$t\"; done
cmp \"$out/t1/census.csv\" \"$out/t2/census.csv\" && echo same numbers")
set_tests_properties(cli_census_threads_same_numbers PROPERTIES PASS_REGULAR_EXPRESSION "same numbers")

# A text's own warnings name its corpus line; past 20 the rest are counted, and words that texts
# repeat are said once with the count (30 Arabic texts of aren-translit, each with spaces that
# are not in its source vocabulary).
add_test(NAME cli_census_text_warnings
         COMMAND sh -c "set -e; out='${ATTNVIZ_CLI_OUT}/census_warnings'; rm -rf \"$out\"; mkdir -p \"$out\"
/usr/bin/python3 -c 'for i in range(30): print(\"\\u0643\\u062a\\u0627\\u0628 \\u062c\\u062f\\u064a\\u062f %d\" % i)' > \"$out/unk30.txt\"
/usr/bin/python3 -c 'for i in range(30): print(\"\\u0645\\u0631\\u062d\\u0628\\u0627 \\u0628\\u0643\\u0645\" if i % 2 == 0 else \"\\u0643\\u062a\\u0627\\u0628 %d\" % i)' > \"$out/unk_even.txt\"
'$<TARGET_FILE:attnviz>' census --model '${PROJECT_SOURCE_DIR}/data/aren-translit/model' --corpus \"$out/unk30.txt\" --quiet -o \"$out/a\" 2>&1
'$<TARGET_FILE:attnviz>' census --model '${PROJECT_SOURCE_DIR}/data/aren-translit/model' --corpus \"$out/unk_even.txt\" --quiet -o \"$out/b\" 2>&1")
set_tests_properties(cli_census_text_warnings PROPERTIES PASS_REGULAR_EXPRESSION
  "unk30\\.txt: line 20 \\(text 19\\): source tokens not in [^\n]*\nattnviz: warning: [^\n]*unk30\\.txt: 10 more warnings about single texts, not shown \\(the first 20 are above\\).*unk_even\\.txt: line 1 \\(text 0\\) and 14 more texts: source tokens")

# One run per output folder: a --resume while another run still writes the journal is refused
# (before the lock, both appended and the journal held texts twice).
add_test(NAME cli_census_journal_locked
         COMMAND sh -c "out='${ATTNVIZ_CLI_OUT}/census_locked'; rm -rf \"$out\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --threads 1 --quiet -o \"$out\" & first=$!
while [ ! -s \"$out/texts.jsonl\" ]; do sleep 0.02; done
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --threads 1 --quiet --resume -o \"$out\" 2>&1
echo \"second exit $?\"; kill -INT $first; wait $first; echo \"first exit $?\"")
set_tests_properties(cli_census_journal_locked PROPERTIES PASS_REGULAR_EXPRESSION
  "texts\\.jsonl: [^\n]*another attnviz census is writing this journal now[^\n]*\nsecond exit 2\n.*first exit 130")

# A number beyond double's range (1e999) in a corpus line is a bad line naming it, not an
# internal error (the fuzzer found the same in a journal, tests/fuzz/regressions).
attnviz_bad_run(cli_census_number_overflow "attnviz: error: .*corpus_number_overflow\\.jsonl: line 2: not valid JSON here: number overflow parsing '1e999'"
  census --model ${ATTNVIZ_CENSUS_MODEL} --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/corpus_number_overflow.jsonl -o ${ATTNVIZ_CLI_OUT}/census_bad)
add_test(NAME cli_census_journal_number_overflow
         COMMAND sh -c "out='${ATTNVIZ_CLI_OUT}/census_journal_overflow'; rm -rf \"$out\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 2 --quiet -o \"$out\" >/dev/null 2>&1
rm -f \"$out/census.json\" \"$out/census.csv\" \"$out/census.png\"
echo '{\"index\": 1e999}' >> \"$out/texts.jsonl\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 2 --quiet --resume -o \"$out\" 2>&1; echo \"exit $?\"")
set_tests_properties(cli_census_journal_number_overflow PROPERTIES PASS_REGULAR_EXPRESSION
  "texts\\.jsonl: line 4: not valid JSON \\(a damaged journal\\)\nexit 1")

# Two models with the same name, shape and size (one float changed) are different models: their
# shards do not merge and a journal of one does not resume with the other (hostile tester).
add_test(NAME cli_census_model_fingerprint
         COMMAND sh -c "out='${ATTNVIZ_CLI_OUT}/census_fingerprint'; rm -rf \"$out\"; mkdir -p \"$out\"
/usr/bin/python3 -c 'import sys; b = bytearray(open(sys.argv[1], \"rb\").read()); b[-4000] ^= 0x20; open(sys.argv[2], \"wb\").write(b)' '${ATTNVIZ_CENSUS_MODEL}' \"$out/stories260K.gguf\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 4 --shard 0/2 --quiet -o \"$out/s0\" >/dev/null 2>&1
'$<TARGET_FILE:attnviz>' census --model \"$out/stories260K.gguf\" --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 4 --shard 1/2 --quiet -o \"$out/s1\" >/dev/null 2>&1
'$<TARGET_FILE:attnviz>' census --merge \"$out/s0\" \"$out/s1\" -o \"$out/m\" 2>&1; echo \"merge exit $?\"
'$<TARGET_FILE:attnviz>' census --model \"$out/stories260K.gguf\" --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 4 --shard 0/2 --quiet --resume -o \"$out/s0\" 2>&1; echo \"resume exit $?\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 2 --sink-epsilon -0 --quiet -o \"$out/z\" >/dev/null 2>&1
grep -o '\"sink_epsilon\": *[^,}]*' \"$out/z/census.json\"")
set_tests_properties(cli_census_model_fingerprint PROPERTIES PASS_REGULAR_EXPRESSION
  "model\\.fnv1a64[^\n]*\nmerge exit 1\n[^\n]*model\\.fnv1a64[^\n]*\nresume exit 1\n\"sink_epsilon\": 0\\.0\n")

# What the end would refuse is refused before any work: census.png existing as a folder, and
# census.csv being the corpus itself (hostile tester: both ran the whole census first).
add_test(NAME cli_census_outputs_checked_first
         COMMAND sh -c "out='${ATTNVIZ_CLI_OUT}/census_outputs_first'; rm -rf \"$out\"; mkdir -p \"$out/a/census.png\" \"$out/b\"
cp '${ATTNVIZ_CENSUS_CORPUS}' \"$out/b/census.csv\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 3 --quiet -o \"$out/a\" 2>&1; echo \"exit $?\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus \"$out/b/census.csv\" --limit 3 --quiet -o \"$out/b\" 2>&1; echo \"exit $?\"
ls \"$out/a\" \"$out/b\"")
set_tests_properties(cli_census_outputs_checked_first PROPERTIES PASS_REGULAR_EXPRESSION
  "census\\.png: cannot write: is a folder\nexit 2\n[^\n]*census\\.csv: cannot write: is an input of this run[^\n]*\nexit 2\n[^\n]*/a:\ncensus\\.png\n\n[^\n]*/b:\ncensus\\.csv\n")

# --resume checks each journal line's text against the corpus: a token count the text does not
# have (an edited line, or another text's values under its index) is a damaged journal.
add_test(NAME cli_census_resume_tokens_checked
         COMMAND sh -c "out='${ATTNVIZ_CLI_OUT}/census_resume_tokens'; rm -rf \"$out\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 3 --quiet -o \"$out\" >/dev/null 2>&1
rm -f \"$out/census.json\" \"$out/census.csv\" \"$out/census.png\"
/usr/bin/python3 -c 'import json, sys; p = sys.argv[1]; lines = open(p).read().splitlines(); t = json.loads(lines[2]); t[\"tokens\"] += 1; lines[2] = json.dumps(t); open(p, \"w\").write(\"\\n\".join(lines) + \"\\n\")' \"$out/texts.jsonl\"
'$<TARGET_FILE:attnviz>' census --model '${ATTNVIZ_CENSUS_MODEL}' --corpus '${ATTNVIZ_CENSUS_CORPUS}' --limit 3 --quiet --resume -o \"$out\" 2>&1; echo \"exit $?\"")
set_tests_properties(cli_census_resume_tokens_checked PROPERTIES PASS_REGULAR_EXPRESSION
  "texts\\.jsonl: text 1 ran [0-9]+ tokens, but [^\n]*stories260k_stories\\.txt line 2 gives [0-9]+: a damaged journal[^\n]*\nexit 1")
