from setuptools import find_packages, setup

# The configs live at the clone's top level (training_configs/, where allennlp-models keeps its
# training_config/) and install as the package's own, so that one folder serves the clone, an
# editable install (setuptools' editable finder maps the name) and a wheel, with no copy.
CONFIGS_PACKAGE = "elmo_plugin.training_configs"

setup(
    packages=find_packages(include=["elmo_plugin", "elmo_plugin.*"]) + [CONFIGS_PACKAGE],
    package_dir={CONFIGS_PACKAGE: "training_configs"},
)
