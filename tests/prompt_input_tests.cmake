# Issue 34 §2: how llama.cpp users type a prompt. Each test holds the real ids (stories260K's
# "Once upon a time" is 1 403 407 261 378, as llama.cpp tokenizes it; GPT-2's from llama.cpp's
# llama_tokenize, tests/data/special-tokens/expected.json) or the exact message.
set(ATTNVIZ_ONCE_IDS "\"token_ids\":\\[1,403,407,261,378\\]")
set(ATTNVIZ_GPT2_VOCAB ${PROJECT_SOURCE_DIR}/tests/data/vocab-gguf/ggml-vocab-gpt-2.gguf)
set(ATTNVIZ_HF_NO_TOKENIZER ${PROJECT_SOURCE_DIR}/tests/data/stories260k/hf-safetensors)

# attnviz_expect with standard input read from `input`.
function(attnviz_expect_stdin name code regex input)
  string(REPLACE ";" "@@" joined "${ARGN}")
  string(REPLACE ";" "@@" joined_regex "${regex}")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DATTNVIZ=$<TARGET_FILE:attnviz> -DEXPECTED_CODE=${code} -DINPUT=${input}
                   "-DEXPECTED_REGEX=${joined_regex}" "-DARGS=${joined}" -P ${CMAKE_CURRENT_SOURCE_DIR}/cli_expect.cmake)
endfunction()

# -m for --model, -p for --text, -f FILE / --text-file FILE, --text - (standard input); the file's
# final newline is dropped, as llama.cpp's -f drops it.
attnviz_expect(cli_prompt_short_flags 0 "^\\{\"tokens\":[^}]*${ATTNVIZ_ONCE_IDS}"
  tokenize -m ${ATTNVIZ_STORIES_GGUF} -p "Once upon a time")
attnviz_expect(cli_prompt_text_file 0 "^\\{\"tokens\":[^}]*${ATTNVIZ_ONCE_IDS}"
  tokenize -m ${ATTNVIZ_STORIES_GGUF} -f ${ATTNVIZ_FIXTURES}/prompt_once.txt)
attnviz_expect_stdin(cli_prompt_stdin 0 "^\\{\"tokens\":[^}]*${ATTNVIZ_ONCE_IDS}" ${ATTNVIZ_FIXTURES}/prompt_once.txt
  tokenize -m ${ATTNVIZ_STORIES_GGUF} --text -)
set(ATTNVIZ_ONCE_IDS_PRETTY "\"token_ids\": \\[[ \r\n]*1,[ \r\n]*403,[ \r\n]*407,[ \r\n]*261,[ \r\n]*378[ \r\n]*\\]")
attnviz_expect_stdin(cli_prompt_text_file_stdin 0 "${ATTNVIZ_ONCE_IDS_PRETTY}" ${ATTNVIZ_FIXTURES}/prompt_once.txt
  dump -m ${ATTNVIZ_STORIES_GGUF} --text-file - --layers 0 -o -)
attnviz_expect(cli_prompt_text_and_file 1
  "^attnviz: error: --text-file: give the text once: --text \"...\" or --text-file FILE, not both$"
  heatmaps -m ${ATTNVIZ_STORIES_GGUF} -p "Once" -f ${ATTNVIZ_FIXTURES}/prompt_once.txt -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_prompt_file_missing 1 "^attnviz: error: [^ ]*no_such_prompt\\.txt: cannot read: cannot be opened"
  dump -m ${ATTNVIZ_STORIES_GGUF} -f ${ATTNVIZ_FIXTURES}/no_such_prompt.txt -o ${ATTNVIZ_CLI_OUT}/never_written.json)
# --prompt (llama.cpp's name) suggests --text, not the nearest spelling (--rope); --file --text-file.
attnviz_expect(cli_prompt_suggests_text 109
  "^attnviz: error: heatmaps: unknown option \"--prompt\"@@ did you mean \"--text\"\\? \\(see attnviz heatmaps --help\\)$"
  heatmaps -m ${ATTNVIZ_STORIES_GGUF} --prompt "Once" -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_file_suggests_text_file 109
  "^attnviz: error: tokenize: unknown option \"--file\"@@ did you mean \"--text-file\"\\?"
  tokenize -m ${ATTNVIZ_STORIES_GGUF} --file ${ATTNVIZ_FIXTURES}/prompt_once.txt)
# An empty text is refused (it drew 46 one-cell maps of BOS alone), from --text or a file.
# (--text "" cannot travel through add_test, which drops empty arguments: run_test.cpp holds it.)
attnviz_expect(cli_empty_text_file 1
  "^attnviz: error: --text-file: --text-file [^ ]*prompt_empty\\.txt is empty"
  tokenize -m ${ATTNVIZ_STORIES_GGUF} -f ${ATTNVIZ_FIXTURES}/prompt_empty.txt)
# --model given one file of a folder says to give the folder; a folder of one GGUF names it.
attnviz_expect(cli_model_safetensors_file 1
  "^attnviz: error: --model: [^ ]*hf-safetensors/model\\.safetensors is one file of a Hugging Face model folder@@ give the folder: --model [^ ]*hf-safetensors "
  dump -m ${ATTNVIZ_HF_NO_TOKENIZER}/model.safetensors --token-ids 1,2 -o ${ATTNVIZ_CLI_OUT}/never_written.json)
attnviz_expect(cli_model_config_file 1
  "^attnviz: error: --model: [^ ]*hf-safetensors/config\\.json is one file of a Hugging Face model folder@@ give the folder"
  heatmaps -m ${ATTNVIZ_HF_NO_TOKENIZER}/config.json --token-ids 1,2 -o ${ATTNVIZ_CLI_OUT}/never_written)
attnviz_expect(cli_model_folder_one_gguf 1
  "^attnviz: error: --model: [^ ]*data/stories260k is a folder holding one GGUF file@@ a GGUF model is given as the file: --model [^ ]*data/stories260k/stories260K\\.gguf$"
  tokenize -m ${PROJECT_SOURCE_DIR}/data/stories260k --text "Once")
# --tokenizer: a Hugging Face folder that ships no tokenizer.json (this one) takes the GGUF's
# vocabulary; without it the message names --tokenizer; one too large for its 512 embeddings is refused.
attnviz_expect(cli_tokenizer_for_folder 0 "${ATTNVIZ_ONCE_IDS_PRETTY}"
  dump -m ${ATTNVIZ_HF_NO_TOKENIZER} --tokenizer ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --layers 0 -o -)
attnviz_expect(cli_tokenizer_missing 1 "has no tokenizer\\.json to split the text with@@ give one with --tokenizer FILE"
  dump -m ${ATTNVIZ_HF_NO_TOKENIZER} --text "Once upon a time" -o ${ATTNVIZ_CLI_OUT}/never_written.json)
attnviz_expect(cli_tokenizer_too_large 1 "ggml-vocab-gpt-2\\.gguf.*512"
  heatmaps -m ${ATTNVIZ_HF_NO_TOKENIZER} --tokenizer ${ATTNVIZ_GPT2_VOCAB} --text "Once" -o ${ATTNVIZ_CLI_OUT}/never_written)
# --max-tokens N keeps the last N tokens, BOS first: "Once upon a time" -> <s> a time.
attnviz_expect(cli_max_tokens_keeps_last 0
  "\"token_ids\": \\[[ \r\n]*1,[ \r\n]*261,[ \r\n]*378[ \r\n]*\\].*--text: 5 tokens, cut to the last 3 by --max-tokens \\(the first token, BOS, kept\\)"
  dump -m ${ATTNVIZ_STORIES_GGUF} --text "Once upon a time" --max-tokens 3 --layers 0 -o -)
# Special tokens in --text are parsed as llama.cpp parses them; --no-parse-special reads them as text.
attnviz_expect(cli_parse_special 0 "\"token_ids\":\\[15496,50256,10603\\]"
  tokenize -m ${ATTNVIZ_GPT2_VOCAB} --text "Hello<|endoftext|>World")
attnviz_expect(cli_no_parse_special 0 "\"token_ids\":\\[15496,27,91,437,1659,5239,91,29,10603\\]"
  tokenize -m ${ATTNVIZ_GPT2_VOCAB} --text "Hello<|endoftext|>World" --no-parse-special)
# A text the tokenizer can mostly not spell gets one warning with the counts: stories260K has no
# piece for 猫, so each becomes its three UTF-8 bytes.
attnviz_expect(cli_unread_text_bytes 0
  "attnviz: warning: --text: 9 are byte fallbacks \\(<0xNN>\\) of its 10 tokens: [^ ]*stories260K\\.gguf cannot spell most of the text"
  tokenize -m ${ATTNVIZ_STORIES_GGUF} --text "猫猫猫")
