from allennlp.common import FromParams

from elmo_plugin.elmo.modules import elmo


class Elmo(elmo.Elmo, FromParams):
    """
    The core's `Elmo` (`elmo_plugin.elmo.Elmo`), buildable from a config: a model argument
    typed `Elmo` takes its arguments as a config block, and AllenNLP passes the model's
    vocabulary, which records the biLM's options. It adds nothing else; the core's `Elmo`
    cannot be a `FromParams`, as the core does not import AllenNLP.

    # Parameters

    As the core's `Elmo`.
    """
