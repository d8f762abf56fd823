import os

from setuptools import setup
from setuptools.command.build_py import build_py

# Python runs a site-packages .pth at start-up: this one makes `allennlp` find the plugin from
# any directory (_elmo_plugin_allennlp.py says how, README "Using the plugin from your own
# project" why).
STARTUP_HOOK = "elmo_plugin_allennlp.pth"


class BuildPyWithStartupHook(build_py):
    def run(self) -> None:
        super().run()
        self.copy_file(STARTUP_HOOK, os.path.join(self.build_lib, STARTUP_HOOK))

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, STARTUP_HOOK)]


setup(cmdclass={"build_py": BuildPyWithStartupHook})
