// Trainer settings shared by the task and pretraining configs.
{
  // Checkpoints written atomically, and `--recover` exact: the same data order and random
  // draws as an uninterrupted run (elmo_plugin/allennlp/training/). The trainer is AllenNLP's
  // `gradient_descent` with an exact `--recover`; `trainer.callbacks` is free for yours.
  resumable(keep=2):: {
    type: "exact_resume_gradient_descent",
    checkpointer: { type: "atomic", keep_most_recent_by_count: keep },
  },
  trainer(num_epochs=10, lr=0.001, patience=3, validation_metric="-loss", grad_norm=5.0)::
    self.resumable() + {
      optimizer: { type: "adam", lr: lr },
      num_epochs: num_epochs,
      patience: patience,
      validation_metric: validation_metric,
      grad_norm: grad_norm,
    },
  // Batches of similar length: less padding, so less wasted work.
  data_loader(batch_size=32):: {
    batch_sampler: { type: "bucket", batch_size: batch_size },
  },
}
