"""
Writing and reading files safely, whatever they hold: a file replaced whole or not at all
(`atomic_files`), files that belong together replaced as one (`file_sets`), a ZIP archive's
members read in place with their sizes checked (`zip_archives`), and torch weight files read
without running code (`restricted_pickle`). The room imports only the core's error, so that
every layer above (the formats, `embedding/`, the AllenNLP layer) writes and reads through it.
"""
