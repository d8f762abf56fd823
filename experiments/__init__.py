"""
The experiments behind docs/paper_tables.md, as parts:

  tasks               the tasks (configs, budget knobs: hidden fields of their configs,
                      metrics)
  conll               CoNLL-2003 sentences: reading, seeded samples, writing, the tag set
  allennlp_runs       `allennlp train` runs in fresh processes, finished runs read back
  configs             a run's effective config (the config as AllenNLP trains it): identity
  records             the scores files, one a task, that keep each finished run's record
  convert_run_records run dirs of the earlier layout (run.json, metrics*.json) into records
  planning            (task, variant, settings) -> runs, with this job's budgets, biLM, seeds
  scores              what a table shows of a result: scores, increases, means over seeds
  markdown            markdown tables and the report around each table
  tables              the paper's tables, built from the parts above
  plot_layer_weights  the layer-weight chart (figure 2), also a script
  paper_tables        the command line: `python experiments/paper_tables.py --help`
  render_docs         the results in README.md, docs/ and the model card, from the records
"""
