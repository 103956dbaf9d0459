"""The commands: wiring only, each a `python -m mlm_lib.experiments.NAME` with its own --help.

pretrain     train the course's reference model and write its log (`--config smoke` runs in seconds)
curriculum   the sequence-length curriculum experiment of notebook 07 (`--preset full|small|smoke`)
bench        training-step throughput against Hugging Face and other peers, on this machine
whole_word   notebook 09: pieces or whole words masked
sentence_head notebook 10 §3: NSP and SOP trained on the course's WordPiece model
roberta      notebook 10 §4: NSP or not, static or dynamic masks, masking rate
finetune     notebook 11: the fine-tuning learning curve and its learning rates
mlm_vs_ltr   notebook 13: masked against left-to-right pretraining, measured downstream
scaling      threads and processes (notebook 05 §7)
lengths      a checkpoint's accuracy at several window lengths
speedrun     notebook 14: recipes trained against the clock
electra      notebook 15: ELECTRA against the masked LM, judged by fine-tuning; electra_grid: its learning rate x batch
reproduce    a shipped results file against a fresh run of its command
upgrade      re-save checkpoints in this version's format, with their checksum

All follow one output rule (`_run`): one --out, from which every other path is derived (runs/x.json keeps its
models and resume states in runs/x/); a record of every setting, written as the run goes and marked finished or
unfinished; a lock while a run writes; --overwrite to replace, --resume to continue with the same settings only;
Ctrl-C or SIGTERM keeps what is done and prints the one line that continues it.

What they build on lives in the concept modules (`mlm_lib.training`, `mlm_lib.curriculum`, ...); what
they produce for the notebooks is shipped in `mlm_lib/course/assets/`.
"""
