"""The tests are one package, `tests`, with a package in every folder: pytest imports each test
file under its dotted name (tests/elmo/test_x.py is `tests.elmo.test_x`), the name that other
tests and helpers import it by, so a module is never loaded twice under two names, files of the
same name in two folders do not collide, and mypy can check the tree."""
