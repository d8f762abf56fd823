import os

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# Python runs a site-packages .pth at start-up: this one makes `allennlp` find the plugin from
# any directory (_elmo_plugin_allennlp.py says how, README "Using the plugin from your own
# project" why).
STARTUP_HOOK = "elmo_plugin_allennlp.pth"
# The configs live at the clone's top level (training_configs/, where allennlp-models keeps its
# training_config/) and install as the package's own, so that one folder serves the clone, an
# editable install (setuptools' editable finder maps the name) and a wheel, with no copy.
CONFIGS_PACKAGE = "elmo_plugin.training_configs"


class BuildPyWithStartupHook(build_py):
    def run(self) -> None:
        super().run()
        self.copy_file(STARTUP_HOOK, os.path.join(self.build_lib, STARTUP_HOOK))

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, STARTUP_HOOK)]


setup(
    packages=find_packages(include=["elmo_plugin", "elmo_plugin.*"]) + [CONFIGS_PACKAGE],
    package_dir={CONFIGS_PACKAGE: "training_configs"},
    cmdclass={"build_py": BuildPyWithStartupHook},
)
