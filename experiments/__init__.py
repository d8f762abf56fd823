"""
The experiments behind docs/paper_tables.md, as parts:

  tasks               the tasks (configs, budget knobs: hidden fields of their configs,
                      metrics)
  samples             a task's training sentences: read in its file format, seeded samples,
                      written back
  task_sentences      a task's text as a language-model corpus, for adapting the biLM to it
  allennlp_runs       `allennlp train` runs in fresh processes, finished runs read back
  configs             a run's effective config (the config as AllenNLP trains it): identity
  records             the scores files, one a task, that keep each finished run's record
  convert_run_records run dirs of the earlier layout (run.json, metrics*.json) into records
  planning            (task, variant, settings) -> runs, with this job's budgets, biLM, seeds
  scores              what a table shows of a result: scores, increases, means over seeds
  markdown            the markdown pieces every table and report is made of
  report              the markdown around each table: title, biLM, seeds, threads, runs
  tables              the paper's tables, built from the parts above
  plot_layer_weights  the layer-weight chart (figure 2), also a script
  paper_tables        the command line: `python experiments/paper_tables.py --help`
  render_docs         the results in README.md, docs/ and the model card, from the records

Beside them: lane_count.sh and lane_count_table.py (how many lanes a GPU's biLM training
takes), onnx_exporters.py (which of torch's ONNX exporters keeps ELMo's LSTM a loop), and the
shell scripts that pretrain the shipped biLM and adapt it to a domain.
"""
