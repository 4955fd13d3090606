"""Every scenario of every feature file, bound by pytest-bdd."""

from pytest_bdd import scenarios

from conformance._features import features_dir

scenarios(str(features_dir()))
